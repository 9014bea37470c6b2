// One process of the surfaces run's sync (sync.ts), on the built library as a host's process
// would load it. Arguments: <lib> <store> <baseURL> <storeId> <middle dir>, then `setup` (the
// first sync) or `run <n>`: a sync with nothing to do (the process's second), then one carrying
// 10 changes, each timed, then one more untimed (the next run's then has nothing to do: this
// one's own writes are read once). Sends { result } to its parent, and { edit: paths } when the hosted edits are due.
import Anthropic from '@anthropic-ai/sdk';

const [lib, store, baseURL, storeId, middle, mode, round] = process.argv.slice(2);
const { Rabosh, RaboshMemoryToolHandler } = await import(lib);
const send = (msg) => new Promise((done) => process.send(msg, () => done()));

const db = await Rabosh.open(store, { history: true });
const h = new RaboshMemoryToolHandler(db);
const client = new Anthropic({ baseURL, apiKey: 'bench', logLevel: 'off' });
const timed = async () => {
  const t = performance.now();
  const r = await db.sync(client, { memoryStoreId: storeId });
  return [r, performance.now() - t];
};
const moved = (r) => r.pulled.length + r.pushed.length;
const result = {};

if (mode === 'setup') {
  const [r, ms] = await timed();
  if (moved(r) !== 0) throw new Error(`the first sync moved ${moved(r)} memories`);
  result.first_sync_s = ms / 1000;
  result.first_sync_requests = r.requests;
  // The next sync reads what the first one wrote from the feed, once.
  await timed();
} else {
  // The process's first sync loads the SDK's modules and opens its connection: untimed, so the
  // figure is what a host's sync loop pays each time.
  await timed();
  const [idle, idleMs] = await timed();
  if (idle.mode !== 'incremental' || moved(idle) !== 0) throw new Error(`nothing to do: a ${idle.mode} sync that moved ${moved(idle)}`);
  result.idle_ms = idleMs;
  result.idle_requests = idle.requests;
  // Five local edits here and five hosted ones (the parent's), in the middle directory.
  const edits = (k0) => [0, 1, 2, 3, 4].map((k) => `${middle}/s${k0 + k}/f0${10 + k}.md`);
  for (const p of edits(0)) await h.put(p, `local edit ${round}\n`);
  const edited = new Promise((done) => process.once('message', done));
  await send({ edit: edits(5), round: Number(round) });
  await edited;
  const [ten, tenMs] = await timed();
  if (ten.mode !== 'incremental' || moved(ten) !== 10) throw new Error(`10 changes: a ${ten.mode} sync that moved ${moved(ten)}`);
  result.ten_ms = tenMs;
  result.ten_requests = ten.requests;
  await timed();
}
await db.close();
await send({ result });
process.disconnect();
