// Durable create / str_replace / insert, one caller, ours and SQLite (better-sqlite3) side by side
// in ONE process with the disk's floors, the columns taking turns (`block` steps each, the order
// turned every time) so that load on a shared machine lands on every column alike. Also the two
// floors of a call that must not block the JS thread: the same overwrite + fdatasync run on the
// libuv pool (fs.promises), and a pool round trip that does no IO at all (the cost of two thread
// hand-offs on this machine).
//
//   npx tsx bench/durable-side.ts [rounds=7] [ops=150] [block=25]
//
// Prints per column the median over rounds of each round's median (min–max of the rounds), ours'
// ratios to SQLite and to the floors per round, and per column the process's voluntary context
// switches and CPU time per step: counts that barely move with load when the times do.
// NAPI_RS_NATIVE_LIBRARY_PATH picks the addon, to compare two builds run after run.

import { closeSync, fdatasyncSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { open as openAsync, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadBackend } from './handlers/registry.js';
import type { BenchHandler } from './handlers/types.js';
import { median, nowMs } from './stats.js';
import { body, pad } from './workload.js';

const rounds = Number(process.argv[2] ?? 7);
const ops = Number(process.argv[3] ?? 150);
/** Steps of one column in a row before the next column's turn (1: every step alternates). */
const block = Number(process.argv[4] ?? 25);
const BYTES = 4096;
const root = mkdtempSync(join(process.env.RABOSH_BENCH_DIR ?? tmpdir(), 'durable-side-'));

type Step = () => Promise<unknown> | unknown;

function push(into: Record<string, number[]>, name: string, x: number): void {
  into[name] ??= [];
  into[name].push(x);
}

/** The disk's floors as one step each: a 4 KiB overwrite of zeros written (and synced) before
 * plus fdatasync, on the JS thread; the same on the libuv pool; a pool round trip doing no IO. */
async function floors(dir: string, n: number) {
  const block = Buffer.alloc(BYTES, 0x61);
  const file = (name: string) => {
    const f = join(dir, name);
    const fd = openSync(f, 'w');
    writeSync(fd, Buffer.alloc(BYTES * n));
    fdatasyncSync(fd);
    return { f, fd };
  };
  const sync = file('floor-sync.log');
  const pooled = file('floor-pool.log');
  closeSync(pooled.fd);
  const fh = await openAsync(pooled.f, 'r+');
  let i = 0;
  let j = 0;
  const steps: Record<string, Step> = {
    floor_sync: () => {
      writeSync(sync.fd, block, 0, BYTES, (i++ % n) * BYTES);
      fdatasyncSync(sync.fd);
    },
    floor_pool: async () => {
      await fh.write(block, 0, BYTES, (j++ % n) * BYTES);
      await fh.datasync();
    },
    pool_round_trip: () => stat(sync.f),
  };
  const close = async () => {
    closeSync(sync.fd);
    await fh.close();
  };
  return { steps, close };
}

const check = async (answer: Promise<string>, ok: string, what: string) => {
  const text = await answer;
  if (!text.startsWith(ok)) throw new Error(`${what}: ${text.slice(0, 120)}`);
};

const columns = ['rabosh', 'sqlite'];
const handlers: Record<string, BenchHandler> = {};
for (const id of columns) {
  const backend = await loadBackend(id);
  await backend.preload?.();
  handlers[id] = await backend.open(join(root, id));
}
const floor = await floors(root, ops * 3);
const per: Record<string, number[]> = {};
/** Per column, over the timed rounds: the process's voluntary context switches (thread sleeps:
 * every hand-off between threads and every wait for the disk) and CPU time (all threads). */
const switches: Record<string, { steps: number; voluntary: number; cpuUs: number }> = {};
/** One round: `ops` of each command, `block` steps of each column in turn (the order turned each
 * time), so that load that comes and goes lands on all columns alike. */
async function round(tag: string, keep: boolean) {
  const path = (i: number) => `/memories/${tag}/w${pad(i, 5)}.md`;
  const kinds: Record<string, (h: BenchHandler, i: number) => Promise<void>> = {
    create: (h, i) =>
      check(h.create({ command: 'create', path: path(i), file_text: body(`w${pad(i, 5)}`, BYTES) }), 'File created', 'create'),
    str_replace: (h, i) =>
      check(
        h.str_replace({ command: 'str_replace', path: path(i), old_str: 'L0030 ', new_str: 'M0030 ' }),
        'The memory file has been edited',
        'str_replace',
      ),
    insert: (h, i) =>
      check(h.insert({ command: 'insert', path: path(i), insert_line: 1, insert_text: `inserted ${i}\n` }), 'The file ', 'insert'),
  };
  const lat: Record<string, number[]> = {};
  for (const [kind, run] of Object.entries(kinds)) {
    for (let first = 0, turn = 0; first < ops; first += block, turn++) {
      const steps: [string, (i: number) => Promise<unknown> | unknown][] = [
        ...columns.map((id): [string, (i: number) => Promise<void>] => [`${id} ${kind}`, (i) => run(handlers[id]!, i)]),
        ...Object.entries(floor.steps),
      ];
      for (let k = 0; k < steps.length; k++) {
        const [name, step] = steps[(k + turn) % steps.length]!;
        const u0 = process.resourceUsage();
        for (let i = first; i < Math.min(ops, first + block); i++) {
          const t0 = nowMs();
          await step(i);
          push(lat, name, nowMs() - t0);
        }
        const u1 = process.resourceUsage();
        switches[name] ??= { steps: 0, voluntary: 0, cpuUs: 0 };
        const c = switches[name];
        c.steps += Math.min(ops, first + block) - first;
        c.voluntary += u1.voluntaryContextSwitches - u0.voluntaryContextSwitches;
        c.cpuUs += u1.userCPUTime + u1.systemCPUTime - u0.userCPUTime - u0.systemCPUTime;
      }
    }
  }
  if (keep) for (const [name, xs] of Object.entries(lat)) push(per, name, median(xs));
}
await round('warm', false);
for (const k of Object.keys(switches)) delete switches[k];
for (let r = 0; r < rounds; r++) await round(`r${r}`, true);
await floor.close();
for (const h of Object.values(handlers)) await h.close();
rmSync(root, { recursive: true, force: true });

const fmt = (xs: number[], digits = 3) =>
  `${median(xs).toFixed(digits)} (${Math.min(...xs).toFixed(digits)}–${Math.max(...xs).toFixed(digits)})`;
console.log(`${rounds} rounds × ${ops} ops; ms per command, median of round medians (min–max over rounds)`);
for (const [k, v] of Object.entries(per)) console.log(`${k.padEnd(24)} ${fmt(v)}`);
const ratio = (a: string, b: string) => per[a]!.map((x, i) => x / per[b]![i]!);
console.log('ratios per round, median (min–max):');
for (const op of ['create', 'str_replace', 'insert']) {
  console.log(`${op.padEnd(12)} vs SQLite ${fmt(ratio(`rabosh ${op}`, `sqlite ${op}`), 2)}   vs sync floor ${fmt(ratio(`rabosh ${op}`, 'floor_sync'), 2)}   vs pool floor ${fmt(ratio(`rabosh ${op}`, 'floor_pool'), 2)}`);
}
console.log('per step, all timed rounds: voluntary context switches of the process, CPU µs (all threads)');
for (const [k, c] of Object.entries(switches)) {
  console.log(`${k.padEnd(24)} ${(c.voluntary / c.steps).toFixed(2)}  ${(c.cpuUs / c.steps).toFixed(1)}`);
}
