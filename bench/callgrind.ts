// `npm run bench:instructions`: instructions per 5,000 × 4 KiB directory listing and per 4 KiB
// file view, counted by callgrind (every thread of the process), for ours and the SQLite and
// LMDB alternatives. Counts barely move with machine load, so a regression shows on a busy
// machine where the timings cannot. Writes bench/results/instructions.{md,json}; exits non-zero
// when valgrind is missing, any run failed, any count is absent, or the answers disagree.
//
// Knobs: RABOSH_BENCH_BACKENDS (comma list, default all but the SDK's tool, whose 5,000-file
// listing would take minutes under valgrind, and bun:sqlite and ours under Bun, whose runtime valgrind does not run;
// node:sqlite and ours under Node 24 are counted under the official Node 24 binary, a different V8
// from the others'), RABOSH_CALLGRIND_COUNT (memories, 5000),
// RABOSH_CALLGRIND_LISTS (10), RABOSH_CALLGRIND_VIEWS (200), RABOSH_BENCH_DIR, RABOSH_BENCH_RESULTS.

import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCallgrind } from './callgrind-run.js';
import { BACKENDS, loadBackend } from './handlers/registry.js';
import { childCommand } from './runtimes.js';
import { flat } from './workload.js';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const num = (name: string, fallback: number) => {
  const v = Number(process.env[name] ?? fallback);
  if (!Number.isInteger(v) || v <= 0) throw new Error(`${name} must be a positive integer`);
  return v;
};
const count = num('RABOSH_CALLGRIND_COUNT', 5000);
const lists = num('RABOSH_CALLGRIND_LISTS', 10);
const views = num('RABOSH_CALLGRIND_VIEWS', 200);
const wanted = process.env.RABOSH_BENCH_BACKENDS?.split(',')
  .map((s) => s.trim())
  .filter(Boolean);
const backends = BACKENDS.filter((b) => (wanted ? wanted.includes(b.id) : b.id !== 'sdk-fs' && b.runtime !== 'bun'));
if (backends.some((b) => b.runtime === 'bun')) throw new Error('bun:sqlite cannot be counted: valgrind does not run Bun');
const resultsDir = resolve(process.env.RABOSH_BENCH_RESULTS ?? join(repo, 'bench', 'results'));
const work = mkdtempSync(join(resolve(process.env.RABOSH_BENCH_DIR ?? tmpdir()), 'rabosh-callgrind-'));

interface Row {
  id: string;
  label: string;
  listIr: number;
  viewIr: number;
  prints: { list: string; view: string };
}

function measure(id: string, dir: string): Row {
  const { stdout, dumps } = runCallgrind(
    id,
    join(work, `cg-${id}`),
    childCommand(BACKENDS.find((b) => b.id === id)!.runtime).exe,
    join(repo, 'bench', 'callgrind-driver.ts'),
    [id, dir, String(lists), String(views)],
    repo,
  );
  // Each marker dumps what ran since the dump before: the driver's four markers made the last
  // four numbered dumps, the second of them holds the listings, the fourth the views.
  if (dumps.length < 4) throw new Error(`${id}: expected 4 marker dumps, got ${dumps.length}`);
  const label = BACKENDS.find((b) => b.id === id)!.label;
  return {
    id,
    label,
    listIr: dumps[dumps.length - 3]! / lists,
    viewIr: dumps[dumps.length - 1]! / views,
    prints: JSON.parse(stdout.trim().split('\n').pop()!) as Row['prints'],
  };
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

async function main(): Promise<void> {
  const probe = spawnSync('valgrind', ['--version'], { encoding: 'utf8' });
  if (probe.status !== 0) throw new Error('valgrind is not installed');
  const loadStart = loadavg()[0]!;
  const rows: Row[] = [];
  const seeded = new Map<string, string>();
  for (const b of backends) {
    let dir = seeded.get(b.family);
    if (!dir) {
      dir = join(work, `store-${b.family}`);
      // Seeded here, in this Node, by a backend that loads in it (node:sqlite may not).
      const seeder = BACKENDS.find((x) => x.family === b.family && !x.runtime)!;
      await (await loadBackend(seeder.id)).seed(dir, flat(count, 4096));
      seeded.set(b.family, dir);
    }
    console.error(`callgrind: ${b.id} …`);
    rows.push(measure(b.id, dir));
  }
  if (rows.length === 0) throw new Error('no backend measured');
  const ref = rows[0]!;
  const disagree = rows.filter((r) => r.prints.list !== ref.prints.list || r.prints.view !== ref.prints.view);
  if (disagree.length > 0) throw new Error(`answers differ from ${ref.id}: ${disagree.map((r) => r.id).join(', ')}`);
  for (const r of rows) {
    if (!(r.listIr > 0 && r.viewIr > 0)) throw new Error(`${r.id}: no instruction count`);
  }
  const ours = rows.filter((r) => BACKENDS.find((b) => b.id === r.id)!.ours);
  const best = (key: 'listIr' | 'viewIr') => Math.min(...ours.map((r) => r[key]));
  const md = [
    `# Instructions per operation (callgrind)`,
    '',
    `${new Date().toISOString()} · ${cpus()[0]?.model.trim() ?? '?'} · Node ${process.version} · load average ${loadStart.toFixed(1)} at start, ${loadavg()[0]!.toFixed(1)} at end · ${count.toLocaleString('en-US')} × 4 KiB flat store · ${lists} listings, ${views} views per engine after warm-up`,
    '',
    `| engine | listing of /memories (Ir) | view of one 4 KiB memory (Ir) | best ours ÷ this, listing | best ours ÷ this, view |`,
    `|---|---:|---:|---:|---:|`,
    ...rows.map(
      (r) =>
        `| ${r.label} | ${fmt(r.listIr)} | ${fmt(r.viewIr)} | ${(best('listIr') / r.listIr).toFixed(2)} | ${(best('viewIr') / r.viewIr).toFixed(2)} |`,
    ),
    '',
    'Ir: instructions executed by every thread of the process between two markers, divided by the number of operations; includes the JIT, the garbage collector and the event loop turns the operations cause. All engines gave the same answers.',
  ].join('\n');
  mkdirSync(resultsDir, { recursive: true });
  writeFileSync(join(resultsDir, 'instructions.md'), `${md}\n`);
  writeFileSync(
    join(resultsDir, 'instructions.json'),
    `${JSON.stringify({ date: new Date().toISOString(), node: process.version, count, lists, views, rows }, null, 2)}\n`,
  );
  process.stdout.write(`${md}\n`);
}

try {
  await main();
} catch (err) {
  console.error(`bench:instructions failed: ${(err as Error).message}`);
  process.exitCode = 1;
} finally {
  if (!process.env.RABOSH_BENCH_KEEP) rmSync(work, { recursive: true, force: true });
}
