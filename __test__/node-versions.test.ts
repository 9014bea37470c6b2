// Every supported Node line, not only the one running the tests: the official binary of each
// (fetched from the registry, see node-binaries.ts) loads the built addon and does a create/view
// round trip, and runs the README's quick start exactly as printed, saved as an .mjs file, against
// the local stand-in of the Messages API. The README's claim about `await using` is checked too.
// The lowest version package.json's engines accepts (22.12.0) runs the same, as its own line: the
// installed package's floor is a tested claim, not only the newest 22.x.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryCall, say, startStandIn, toolResults } from '../examples/stand-in-server.js';
import { SUPPORTED_NODE_MAJORS, nodeBinary } from './node-binaries.js';

const root = resolve(import.meta.dirname, '..');
const work = mkdtempSync(join(tmpdir(), 'rabosh-node-lines-'));
const run = promisify(execFile);
const binaries = new Map<string, string>();
const engines = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { engines: { node: string } }).engines.node;
/** The lowest version the engines range names, e.g. `22.12.0` from `^22.12.0 || ^24.0.0 || …`. */
const floor = /^\^(\d+\.\d+\.\d+) /.exec(engines)![1]!;
const lines: Array<[string, number]> = [
  ...SUPPORTED_NODE_MAJORS.map((m): [string, number] => [String(m), m]),
  [floor, Number(floor.split('.')[0])],
];

beforeAll(() => {
  for (const [spec] of lines) binaries.set(spec, nodeBinary(spec));
  // An app directory where `rabosh-memory` and the SDK resolve as they would once installed.
  mkdirSync(join(work, 'app', 'node_modules', '@anthropic-ai'), { recursive: true });
  symlinkSync(root, join(work, 'app', 'node_modules', 'rabosh-memory'), 'junction');
  symlinkSync(join(root, 'node_modules', '@anthropic-ai', 'sdk'), join(work, 'app', 'node_modules', '@anthropic-ai', 'sdk'), 'junction');
}, 600_000);
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** The first ```js block after the "Quick start" heading of the README, verbatim. */
function quickStart(): string {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const from = readme.indexOf('## Quick start');
  const m = /```js\n([\s\S]*?)```/.exec(readme.slice(from));
  if (from < 0 || !m) throw new Error('README.md has no ```js block under "## Quick start"');
  return m[1]!;
}

const roundTrip = `
const { RaboshMemoryToolHandler } = require('rabosh-memory');
(async () => {
  const h = await RaboshMemoryToolHandler.open(process.argv[2]);
  try {
    const created = await h.execute({ command: 'create', path: '/memories/x.md', file_text: 'line one' });
    const viewed = await h.execute({ command: 'view', path: '/memories/x.md' });
    console.log(JSON.stringify([process.versions.node.split('.')[0], created.text, viewed.text]));
  } finally {
    await h.close();
  }
})().catch((e) => { console.error(e); process.exit(1); });
`;

describe.each(lines)('Node %s', (spec, major) => {
  const dir = join(work, `node-${spec}`);

  it('loads the addon and does a create/view round trip', async () => {
    if (spec.includes('.')) expect((await run(binaries.get(spec)!, ['--version'])).stdout.trim()).toBe(`v${spec}`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(work, 'app', `round-trip-${spec}.cjs`), roundTrip);
    const { stdout } = await run(binaries.get(spec)!, [join(work, 'app', `round-trip-${spec}.cjs`), join(dir, 'store')]);
    expect(JSON.parse(stdout)).toEqual([
      String(major),
      'File created successfully at: /memories/x.md',
      "Here's the content of /memories/x.md with line numbers:\n     1\tline one",
    ]);
  });

  it("runs the README's quick start as pasted into an .mjs file", async () => {
    const call = memoryCall({ command: 'create', path: '/memories/prefs.md', file_text: 'short answers' });
    const standIn = await startStandIn([{ content: [call] }, { content: [say('Noted.')] }]);
    try {
      const app = join(work, 'app');
      writeFileSync(join(app, `agent-${spec}.mjs`), quickStart());
      const cwd = join(dir, 'cwd');
      mkdirSync(cwd, { recursive: true });
      const env = { ...process.env, ANTHROPIC_API_KEY: 'test', ANTHROPIC_BASE_URL: standIn.baseURL };
      const { stdout } = await run(binaries.get(spec)!, [join(app, `agent-${spec}.mjs`)], { cwd, env });
      expect(stdout).toContain("text: 'Noted.'");
      const [result] = toolResults(standIn.requests[1]);
      expect(result).toMatchObject({ tool_use_id: call.id, content: 'File created successfully at: /memories/prefs.md' });
      // It opened ./agent-memory in its working directory and closed it (the lock is free again).
      const { stdout: again } = await run(binaries.get(spec)!, [join(app, `round-trip-${spec}.cjs`), join(cwd, 'agent-memory')]);
      expect(JSON.parse(again)[0]).toBe(String(major));
    } finally {
      await standIn.close();
    }
  });

  it("serves MCP: the built CLI's mcp command under this Node, driven by the MCP SDK's client", async () => {
    mkdirSync(dir, { recursive: true });
    const bin = join(root, 'apps', 'cli', 'dist', 'main.js');
    const transport = new StdioClientTransport({
      command: binaries.get(spec)!,
      args: [bin, 'mcp', join(dir, 'mcp-store')],
      stderr: 'pipe',
    });
    const client = new Client({ name: `node-${major}`, version: '0.0.0' });
    await client.connect(transport, { timeout: 120_000 });
    try {
      const r = await client.callTool({ name: 'memory', arguments: { command: 'create', path: '/memories/x.md', file_text: 'hi' } });
      expect(r.content).toEqual([{ type: 'text', text: 'File created successfully at: /memories/x.md' }]);
      expect(client.getServerVersion()?.name).toBe('rabosh-memory');
    } finally {
      await client.close();
    }
  });

  it(`${major >= 24 ? 'parses' : 'refuses'} \`await using\`, as the README says`, async () => {
    const file = join(work, `await-using-${spec}.mjs`);
    writeFileSync(file, 'await using x = { async [Symbol.asyncDispose]() { console.log("disposed"); } };\n');
    const r = run(binaries.get(spec)!, [file]);
    if (major >= 24) expect((await r).stdout).toBe('disposed\n');
    else await expect(r).rejects.toMatchObject({ stderr: expect.stringContaining('SyntaxError') });
  });
});
