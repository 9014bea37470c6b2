// Where a 4 KiB file view's instructions go (issue 24): under
// `valgrind --tool=callgrind --dump-before=getppid node --single-threaded --import tsx
// bench/view-parts.ts <seeded store dir> [views]`, five loops of the same view, each bracketed by
// `process.ppid` markers so each lands in a dump of its own (the last ten numbered dumps, loops
// in this order): the whole view through execute(); path normalisation and view_range parsing
// alone; the binding's viewIfCheap alone (napi crossing + Rust lookup + formatting + the answer
// object); the same with view_range [10, 20] (the same lookup, a sixth of the lines formatted and
// crossed); and a bare `get` of the content through lmdb-js for scale. A store seeded by
// `npm run bench:instructions` (RABOSH_BENCH_KEEP=1) serves.
import { Rabosh, RaboshMemoryToolHandler } from '../index.js';
import { NativeMemories } from '../src/native.js';
import { MemoryPath } from '../src/path.js';
import { storeNative } from '../src/store.js';
import { viewRange } from '../src/view-answer.js';
import { noteName } from './workload.js';

const marker = (): void => {
  if (process.ppid < 0) throw new Error('unreachable');
};

const [dir, n = '200'] = process.argv.slice(2) as [string, string?];
const views = Number(n);
const path = `/memories/${noteName(42)}`;
const db = await Rabosh.open(dir, { durability: 'sync' });
const handler = new RaboshMemoryToolHandler(db, { listingIndex: true });
// The handler's own native object is private; this one has the handler's defaults.
const m = new NativeMemories(storeNative(db), {
  scope: 'default',
  maxMemoryBytes: 1_048_576,
  createOverwrites: false,
  trackAccess: false,
  listingIndex: true,
});
const input = { command: 'view', path };
const loops: Array<[string, () => unknown]> = [
  ['execute(view)', () => handler.execute(input)],
  ['normalise + viewRange', () => [MemoryPath.normalise(path), viewRange(undefined)]],
  ['viewIfCheap', () => m.viewIfCheap(path, null, 16_000)],
  ['viewIfCheap [10, 20]', () => m.viewIfCheap(path, [10, 20], 16_000)],
  ['empty loop', () => undefined],
];
let sink = 0;
// Long enough that the optimising compiler is done before the first marker (a compile inside a
// loop showed as 80,000 instructions per call).
for (const [, op] of loops) for (let i = 0; i < 5000; i++) sink += (await op()) ? 1 : 0;
for (const [, op] of loops) {
  marker();
  for (let i = 0; i < views; i++) sink += (await op()) ? 1 : 0;
  marker();
}
await db.close();
process.stdout.write(`${JSON.stringify({ loops: loops.map(([name]) => name), views, sink })}\n`);
