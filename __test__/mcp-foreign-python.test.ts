// The MCP server driven by the Python SDK's own client (`mcp` on PyPI, pinned in
// fixtures/mcp-py-requirements.txt) in each of its connection modes: the suite is mcp-foreign.ts's.
import { pythonSuite } from './mcp-foreign.js';

pythonSuite('sdk', [
  { mode: 'legacy', version: '2025-11-25' },
  { mode: '2026-07-28', version: '2026-07-28' },
  // auto probes server/discover first: the newest era the server offers.
  { mode: 'auto', version: '2026-07-28' },
]);
