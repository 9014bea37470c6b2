/**
 * `npm run bench:sync-incremental`: what a sync costs when little or nothing changed, full (every
 * sync lists the hosted store and reads every local memory) against incremental (the local change
 * feed and the hosted versions since the last sync), at several store sizes, on the memory-stores
 * stand-in (__test__/fixtures) through the real SDK client:
 *   - a sync that finds nothing changed,
 *   - a sync carrying 10 changes (5 local edits pushed, 5 hosted edits pulled).
 * Options: --sizes 1000,10000,100000, --latency MS per answer (10). Requests are exact; times
 * are one run on a shared machine: read them as rough.
 */
import Anthropic from '@anthropic-ai/sdk';
import { Rabosh, RaboshMemoryToolHandler, type SyncReport } from '../index.js';
import { MemoryStoresStandIn } from '../__test__/fixtures/memory-stores-stand-in.js';
import { makeTempDir, removeDir } from '../__test__/tmp-dir.js';

const opt = (name: string, dflt: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? dflt : (process.argv[i + 1] as string);
};
const SIZES = opt('sizes', '1000,10000,100000').split(',').map(Number);
const LATENCY = Number(opt('latency', '10'));

const path = (i: number) => `/notes/d${i % 100}/m${i}.md`;

interface Row {
  n: number;
  scenario: string;
  mode: string;
  requests: number;
  ms: number;
}

async function run(n: number, rows: Row[]): Promise<void> {
  const remote = await new MemoryStoresStandIn('memstore_bench').start();
  // Written an hour ago on the hosted clock, as a store that has been there a while.
  const past = Date.now() - 3600_000;
  remote.now = () => past;
  for (let i = 0; i < n; i++) remote.put(path(i), `memory ${i}\n${'x'.repeat(200)}`);
  remote.now = () => Date.now();
  const dir = makeTempDir('bench-sync-incremental');
  const db = await Rabosh.open(dir, { history: true });
  const h = new RaboshMemoryToolHandler(db);
  const client = new Anthropic({ baseURL: remote.baseURL, apiKey: 'bench', logLevel: 'off' });
  const sync = (incremental: boolean): Promise<SyncReport> => db.sync(client, { memoryStoreId: remote.storeId, incremental });
  const t0 = performance.now();
  await sync(true); // the first sync pulls everything
  await sync(true); // and the next reads its own pulls from the feed once
  process.stderr.write(`${n}: set up in ${Math.round(performance.now() - t0)} ms\n`);
  remote.delayMs = LATENCY;
  const measure = async (scenario: string, incremental: boolean) => {
    const t = performance.now();
    const r = await sync(incremental);
    const ms = Math.round(performance.now() - t);
    if (scenario.startsWith('10') && r.pushed.length + r.pulled.length !== 10)
      throw new Error(`${scenario}: carried ${r.pushed.length + r.pulled.length}`);
    rows.push({ n, scenario, mode: r.mode, requests: r.requests, ms });
  };
  let round = 0;
  const change = async () => {
    round++;
    for (let k = 0; k < 5; k++) await h.put(`/memories${path(k * 7)}`, `local edit ${round}`);
    for (let k = 0; k < 5; k++) remote.put(path(k * 11 + 1), `hosted edit ${round}`);
  };
  await measure('no change', false);
  await measure('no change', true);
  await change();
  await measure('10 changes', false);
  await sync(true); // its own writes, read once
  await change();
  await measure('10 changes', true);
  await db.close();
  await remote.close();
  removeDir(dir);
}

const rows: Row[] = [];
for (const n of SIZES) await run(n, rows);
console.log(`# incremental sync bench: stand-in answering after ${LATENCY} ms\n`);
console.log('| memories | scenario | mode | requests | ms |');
console.log('|---:|---|---|---:|---:|');
for (const r of rows) console.log(`| ${r.n.toLocaleString('en')} | ${r.scenario} | ${r.mode} | ${r.requests} | ${r.ms} |`);
