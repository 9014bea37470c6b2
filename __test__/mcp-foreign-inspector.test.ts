// The MCP server driven by the official inspector (`@modelcontextprotocol/inspector`, a pinned
// devDependency): its one-shot CLI in each protocol era for the tool (with --strict), each
// command's success and documented error, and the resources; its connection CLI, mcpdo, for a
// subscription that must hear of another handle's write. The eras run side by side: every request
// is a process of its own, and that is slow.
import { describe, expect, it, type TestContext } from 'vitest';
import { seed } from './cli-harness.js';
import { EACH_COMMAND_BOTH_WAYS } from './fixtures/contract-outcomes.js';
import {
  expectTheChanges,
  expectTheContract,
  expectTheResources,
  expectTheTool,
  type Foreign,
  type InspectorEra,
  expectEveryPage,
  inspectorClient,
  MANY,
  seedMany,
  uriOf,
  WATCHED,
} from './mcp-foreign.js';
import { makeTempDir, removeDir } from './tmp-dir.js';

const ERAS: { era: InspectorEra; version: string }[] = [
  { era: 'legacy', version: '2025-11-25' },
  { era: 'modern', version: '2026-07-28' },
];

/**
 * A store and a home for the inspector, both removed after the test (the client closed first):
 * the test's own onTestFinished, which is the only one that knows its test when tests run at once.
 */
async function connected(
  { onTestFinished }: TestContext,
  era: InspectorEra,
  prepare?: (store: string) => Promise<void>,
): Promise<{ c: Foreign; store: string }> {
  const store = makeTempDir('rabosh-mcp-inspector');
  const home = makeTempDir('rabosh-inspector-home');
  let c: Foreign | undefined;
  onTestFinished(async () => {
    await c?.close();
    removeDir(store);
    removeDir(home);
  });
  await prepare?.(store);
  c = await inspectorClient(era, store, home);
  return { c, store };
}

describe.concurrent.each(ERAS)('inspector --cli --protocol-era $era', ({ era, version }) => {
  it(`settles on ${version}; the tool passes --strict; each command's success and documented error; the resources`, async (t) => {
    const { c } = await connected(t, era);
    expect(c.version).toBe(version);
    await expectTheTool(c);
    const model = await expectTheContract(c, EACH_COMMAND_BOTH_WAYS);
    expect(model.memories.size).toBe(1);
    await expectTheResources(c, model);
  });

  it(`resources/list brings all ${MANY} memories, the CLI following every page`, async (t) => {
    let paths: string[] = [];
    const { c } = await connected(t, era, async (dir) => {
      paths = await seedMany(dir);
    });
    await expectEveryPage(c, paths);
  });

  it('mcpdo in the same era hears of another handle changing a subscribed memory', async (t) => {
    const { c, store } = await connected(t, era, (dir) => seed(dir, { [WATCHED]: 'v1' }));
    await c.watch(uriOf(WATCHED));
    await expectTheChanges(c, store, false);
  });
});
