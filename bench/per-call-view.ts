// Issue 36 §4: one view of a small memory, ours against lmdb-js doing the least a user could (one
// `get` plus the same file-view template: `alternatives/lmdb-direct.ts`), both through the
// benchmark's handler seam, in one process, alternating rounds so load moves both alike.
// `npm run bench:per-call` prints the per-call times and the ratio of each pair of rounds: its
// median and interquartile range.

import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { openLmdbDirect, seedLmdbDirect } from './alternatives/lmdb-direct.js';
import { raboshBackend } from './handlers/rabosh.js';
import type { BenchHandler } from './handlers/types.js';

const MEMORIES = 5_000;
/** Many short rounds, the sides alternating, so a burst of load lands on both alike. */
const CALLS = 2_000;
const ROUNDS = 100;

/** Two lines, 4 KiB: the case, where a view's fixed cost outweighs its formatting. */
const body = `${'a'.repeat(2_000)}\n${'b'.repeat(2_095)}`;
const paths = Array.from({ length: MEMORIES }, (_, i) => `/memories/m${String(i).padStart(5, '0')}.md`);

async function perCallUs(h: BenchHandler): Promise<number> {
  const t = performance.now();
  for (let i = 0; i < CALLS; i++) await h.view({ command: 'view', path: paths[(i * 7_919) % MEMORIES] as string });
  return ((performance.now() - t) * 1_000) / CALLS;
}

const at = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.floor(q * (xs.length - 1))] ?? Number.NaN;
const median = (xs: number[]) => at(xs, 0.5);
const fmt = (x: number) => x.toFixed(2);

async function main(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'rabosh-per-call-'));
  try {
    const ours = raboshBackend(true);
    await ours.seed(join(root, 'ours'), paths.map((p) => [p, body] as const) as never);
    await seedLmdbDirect(
      join(root, 'lmdb'),
      paths.map((p) => [p, body] as const),
    );
    const sides = { ours: await ours.open(join(root, 'ours')), lmdb: openLmdbDirect(join(root, 'lmdb')) };
    const probe = { command: 'view' as const, path: paths[7] as string };
    if ((await sides.ours.view(probe)) !== (await sides.lmdb.view(probe))) throw new Error('the two views differ');
    const load = loadavg()[0] ?? 0;
    const times = { ours: [] as number[], lmdb: [] as number[] };
    for (let r = 0; r < ROUNDS; r++) {
      times.ours.push(await perCallUs(sides.ours));
      times.lmdb.push(await perCallUs(sides.lmdb));
    }
    const ratios = times.ours.map((t, i) => t / (times.lmdb[i] ?? Number.NaN));
    console.log(`view of one two-line 4 KiB memory, ${ROUNDS} rounds of ${CALLS} calls, load ${load.toFixed(1)}`);
    console.log(`ours ${fmt(median(times.ours))} µs · LMDB-direct ${fmt(median(times.lmdb))} µs per call`);
    console.log(
      `ours ÷ LMDB-direct ${fmt(median(ratios))} (interquartile ${fmt(at(ratios, 0.25))}–${fmt(at(ratios, 0.75))} over ${ROUNDS} pairs of rounds)`,
    );
    await sides.ours.close();
    await sides.lmdb.close();
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

await main();
