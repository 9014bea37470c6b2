// Where one durable command's time goes, by subtraction, in one process and the same minutes:
// ours with durability 'sync' and 'buffered' (the same commit without its fdatasync), SQLite
// (better-sqlite3, FULL), and the disk's floors (4 KiB overwrite + fdatasync on the JS thread;
// the same with an fstat after each sync, as the engine's link-count check did before it asked
// statx for that field alone: on Linux 6.13+ the stat makes the next write dirty the inode, which
// the next fdatasync then writes too; a libuv pool round trip doing no IO). Columns take turns in
// blocks, the order turned each time.
//
//   npx tsx bench/durable-decompose.ts [rounds=5] [ops=120] [block=20]
import { closeSync, fdatasyncSync, fstatSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { load } from './handlers/rabosh.js';
import { loadBackend } from './handlers/registry.js';
import type { BenchHandler } from './handlers/types.js';
import { median, nowMs } from './stats.js';
import { body, pad } from './workload.js';

const rounds = Number(process.argv[2] ?? 5);
const ops = Number(process.argv[3] ?? 120);
const block = Number(process.argv[4] ?? 20);
const root = mkdtempSync(join(process.env.RABOSH_BENCH_DIR ?? tmpdir(), 'durable-decompose-'));

const mod = await load();
async function ours(durability: 'sync' | 'buffered'): Promise<BenchHandler> {
  const db = await mod.Rabosh.open(join(root, durability), { durability });
  const h = new mod.RaboshMemoryToolHandler(db, { listingIndex: false });
  return { ...h, view: (i) => h.view(i), create: (i) => h.create(i), str_replace: (i) => h.str_replace(i), insert: (i) => h.insert(i), delete: (i) => h.delete(i), rename: (i) => h.rename(i), close: () => db.close() } as BenchHandler;
}
const sqliteBackend = await loadBackend('sqlite');
await sqliteBackend.preload?.();
const handlers: Record<string, BenchHandler> = {
  sync: await ours('sync'),
  buffered: await ours('buffered'),
  sqlite: await sqliteBackend.open(join(root, 'sqlite')),
};
const n = ops * 3;
const written = (name: string) => {
  const fd = openSync(join(root, name), 'w');
  writeSync(fd, Buffer.alloc(4096 * n));
  fdatasyncSync(fd);
  return fd;
};
const fd = written('floor');
const fdStat = written('floor-fstat');
const page = Buffer.alloc(4096, 0x61);
let at = 0;
let atStat = 0;
const floors: Record<string, () => unknown> = {
  floor_sync: () => {
    writeSync(fd, page, 0, 4096, (at++ % n) * 4096);
    fdatasyncSync(fd);
  },
  floor_sync_fstat: () => {
    writeSync(fdStat, page, 0, 4096, (atStat++ % n) * 4096);
    fdatasyncSync(fdStat);
    fstatSync(fdStat);
  },
  pool_round_trip: () => stat(root),
};
const per: Record<string, number[]> = {};
function push(into: Record<string, number[]>, name: string, x: number): void {
  into[name] ??= [];
  into[name].push(x);
}
async function round(tag: string, keep: boolean) {
  const path = (i: number) => `/memories/${tag}/w${pad(i, 5)}.md`;
  const kinds: Record<string, (h: BenchHandler, i: number) => Promise<string>> = {
    create: (h, i) => h.create({ command: 'create', path: path(i), file_text: body(`w${pad(i, 5)}`, 4096) }),
    str_replace: (h, i) => h.str_replace({ command: 'str_replace', path: path(i), old_str: 'L0030 ', new_str: 'M0030 ' }),
    insert: (h, i) => h.insert({ command: 'insert', path: path(i), insert_line: 1, insert_text: `inserted ${i}\n` }),
  };
  const lat: Record<string, number[]> = {};
  for (const [kind, run] of Object.entries(kinds)) {
    for (let first = 0, turn = 0; first < ops; first += block, turn++) {
      const steps: [string, (i: number) => unknown][] = [
        ...Object.keys(handlers).map((id): [string, (i: number) => unknown] => [`${id} ${kind}`, (i) => run(handlers[id]!, i)]),
        ...Object.entries(floors),
      ];
      for (let k = 0; k < steps.length; k++) {
        const [name, step] = steps[(k + turn) % steps.length]!;
        for (let i = first; i < Math.min(ops, first + block); i++) {
          const t0 = nowMs();
          await step(i);
          push(lat, name, nowMs() - t0);
        }
      }
    }
  }
  if (keep) for (const [name, xs] of Object.entries(lat)) push(per, name, median(xs));
}
await round('warm', false);
for (let r = 0; r < rounds; r++) await round(`r${r}`, true);
closeSync(fd);
closeSync(fdStat);
for (const h of Object.values(handlers)) await h.close();
rmSync(root, { recursive: true, force: true });
const fmt = (xs: number[]) => `${median(xs).toFixed(3)} (${Math.min(...xs).toFixed(3)}–${Math.max(...xs).toFixed(3)})`;
console.log(`${rounds} rounds × ${ops} ops; ms per command, median of round medians (min–max)`);
for (const [k, v] of Object.entries(per)) console.log(`${k.padEnd(22)} ${fmt(v)}`);
