/**
 * `npm run bench:sync`: rabosh `db.sync` against the SDK's own `SessionMemoryStores`, on the same
 * memory-stores stand-in (__test__/fixtures), through the same real SDK client: requests sent and
 * wall time for
 *   - a first sync pulling N hosted memories into an empty local side,
 *   - a sync that finds nothing changed,
 *   - a first sync pushing N local memories into an empty hosted store.
 * Options: --memories N (2000), --latency MS per answer (10), --size BYTES per memory (400).
 * One run each, alternating, on a shared machine: read the requests as exact, the times as rough.
 */
import Anthropic from '@anthropic-ai/sdk';
import { SessionMemoryStores } from '@anthropic-ai/sdk/tools/agent-toolset/node';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Rabosh, RaboshMemoryToolHandler } from '../index.js';
import { MemoryStoresStandIn } from '../__test__/fixtures/memory-stores-stand-in.js';
import { makeTempDir, removeDir } from '../__test__/tmp-dir.js';

const arg = (name: string, dflt: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? dflt : Number(process.argv[i + 1]);
};
const N = arg('memories', 2000);
const LATENCY = arg('latency', 10);
const SIZE = arg('size', 400);

const content = (i: number) => `memory ${i}\n${'x'.repeat(Math.max(0, SIZE - 12))}`;
const path = (i: number) => `/notes/d${i % 40}/m${i}.md`;

interface Row {
  scenario: string;
  tool: string;
  requests: number;
  ms: number;
}

async function measure(remote: MemoryStoresStandIn, work: () => Promise<unknown>): Promise<{ requests: number; ms: number }> {
  const before = remote.requests;
  const t = performance.now();
  await work();
  return { requests: remote.requests - before, ms: Math.round(performance.now() - t) };
}

async function standIn(filled: boolean): Promise<MemoryStoresStandIn> {
  const remote = await new MemoryStoresStandIn('memstore_bench').start();
  if (filled) for (let i = 0; i < N; i++) remote.put(path(i), content(i));
  remote.delayMs = LATENCY;
  return remote;
}

const session = { resources: [{ type: 'memory_store', memory_store_id: 'memstore_bench', name: 'bench', access: 'read_write' }] } as never;
const quiet = { logLevel: 'off' as const };

async function sdkRuns(rows: Row[]): Promise<void> {
  // Pull N, then a sync with nothing changed.
  {
    const remote = await standIn(true);
    const work = makeTempDir('bench-sync-sdk');
    const client = new Anthropic({ baseURL: remote.baseURL, apiKey: 'bench', ...quiet });
    const s = new SessionMemoryStores(client, { workdir: work });
    rows.push({
      scenario: `first sync, pull ${N}`,
      tool: 'SDK SessionMemoryStores',
      ...(await measure(remote, () => s.download(session))),
    });
    rows.push({ scenario: 'no-change sync', tool: 'SDK SessionMemoryStores', ...(await measure(remote, () => s.finish())) });
    await s.dispose();
    await remote.close();
    removeDir(work);
  }
  // Push N.
  {
    const remote = await standIn(false);
    const work = makeTempDir('bench-sync-sdk');
    const client = new Anthropic({ baseURL: remote.baseURL, apiKey: 'bench', ...quiet });
    const s = new SessionMemoryStores(client, { workdir: work });
    await s.download(session);
    const root = s.roots[0] as string;
    for (let i = 0; i < N; i++) {
      const file = join(root, path(i));
      mkdirSync(join(file, '..'), { recursive: true });
      writeFileSync(file, content(i));
    }
    rows.push({ scenario: `first sync, push ${N}`, tool: 'SDK SessionMemoryStores', ...(await measure(remote, () => s.finish())) });
    if (remote.memories.size !== N) throw new Error(`SDK pushed ${remote.memories.size} of ${N}`);
    await s.dispose();
    await remote.close();
    removeDir(work);
  }
}

async function raboshRuns(rows: Row[]): Promise<void> {
  {
    const remote = await standIn(true);
    const dir = makeTempDir('bench-sync-rabosh');
    const db = await Rabosh.open(dir, { history: true });
    const client = new Anthropic({ baseURL: remote.baseURL, apiKey: 'bench', ...quiet });
    const opts = { memoryStoreId: remote.storeId };
    rows.push({ scenario: `first sync, pull ${N}`, tool: 'rabosh db.sync', ...(await measure(remote, () => db.sync(client, opts))) });
    rows.push({ scenario: 'no-change sync', tool: 'rabosh db.sync', ...(await measure(remote, () => db.sync(client, opts))) });
    if ((await new RaboshMemoryToolHandler(db).usage()).memories !== N) throw new Error('rabosh pulled fewer');
    await db.close();
    await remote.close();
    removeDir(dir);
  }
  {
    const remote = await standIn(false);
    const dir = makeTempDir('bench-sync-rabosh');
    const db = await Rabosh.open(dir, { history: true });
    await new RaboshMemoryToolHandler(db).importMemories(
      Array.from({ length: N }, (_, i) => ({ path: `/memories${path(i)}`, content: content(i) })),
    );
    const client = new Anthropic({ baseURL: remote.baseURL, apiKey: 'bench', ...quiet });
    rows.push({
      scenario: `first sync, push ${N}`,
      tool: 'rabosh db.sync',
      ...(await measure(remote, () => db.sync(client, { memoryStoreId: remote.storeId, concurrency: 32 }))),
    });
    if (remote.memories.size !== N) throw new Error(`rabosh pushed ${remote.memories.size} of ${N}`);
    await db.close();
    await remote.close();
    removeDir(dir);
  }
}

const rows: Row[] = [];
await sdkRuns(rows);
await raboshRuns(rows);
console.log(`# sync bench: ${N} memories of ${SIZE} B, stand-in answering after ${LATENCY} ms\n`);
console.log('| scenario | tool | requests | ms |');
console.log('|---|---|---|---|');
for (const scenario of [...new Set(rows.map((r) => r.scenario))]) {
  for (const r of rows.filter((x) => x.scenario === scenario)) console.log(`| ${r.scenario} | ${r.tool} | ${r.requests} | ${r.ms} |`);
}
