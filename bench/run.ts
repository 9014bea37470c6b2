// `npm run bench`: seeds each store once, runs every measurement in a fresh child process per
// backend and run (runs interleaved, so a noisy moment hits every backend alike), checks that all
// handlers gave the same answers, and prints one table (also bench/results/latest.{md,json}).
//
// Knobs: RABOSH_BENCH_SCALE (1; 0.01 for a smoke run), RABOSH_BENCH_RUNS (3),
// RABOSH_BENCH_BACKENDS (comma list of ids, default all), RABOSH_BENCH_DIR (where stores go;
// the OS temp dir), RABOSH_BENCH_RESULTS (bench/results), RABOSH_BENCH_KEEP=1 keeps the stores,
// RABOSH_BENCH_MODULE (where ours is imported from; the TypeScript source by default),
// RABOSH_BENCH_ONLY (comma list of measurement ids or id prefixes, e.g. `read,durableWrites`),
// RABOSH_BENCH_PEERS=quick (better-sqlite3 compiled at -O0: answers only, no figures kept).
// `--scale 1m` runs the scale run instead (bench/scale-run.ts; RABOSH_BENCH_SIZES sets its sizes).

import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { cpus, loadavg, release, tmpdir, totalmem, type } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { agrees } from './agreement.js';
import { BACKENDS, runsMeasurement, type BackendInfo } from './handlers/registry.js';
import { runJob, type Outcome } from './jobs.js';
import { ensurePeers, type PeersBuild } from './peers.js';
import { bundleChild } from './child-bundle.js';
import { childCommand, childLine } from './runtimes.js';
import { makePlan, type Instance } from './plan.js';
import { SCALE_ALLOWED, SCALE_BACKENDS, scaleSizes } from './scale-plan.js';
import { runScale } from './scale-run.js';
import { legend, renderRuntimeTable, renderTable, type TableRow } from './report.js';
import type { Job } from './scenarios/types.js';
import { nowMs, summarise } from './stats.js';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** `--scale 0.01` / `--runs 2` on the command line override the environment. */
function arg(flag: string): string | undefined {
  const i = process.argv.indexOf(flag);
  return i === -1 ? undefined : process.argv[i + 1];
}

function envNumber(name: string, fallback: number, flag?: string): number {
  const raw = (flag && arg(flag)) ?? process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const v = Number(raw);
  if (!Number.isFinite(v) || v <= 0) throw new Error(`${name} must be a positive number, got ${JSON.stringify(raw)}`);
  return v;
}

/**
 * `--scale 1m` (or RABOSH_BENCH_SCALE=1m) is the scale run instead (bench/scale-run.ts): the
 * first-look rows at a million memories, or at the sizes RABOSH_BENCH_SIZES lists.
 */
const scaleRun = ((arg('--scale') ?? process.env.RABOSH_BENCH_SCALE) || '').trim() === '1m';
const scale = scaleRun ? 1 : envNumber('RABOSH_BENCH_SCALE', 1, '--scale');
const runs = Math.round(envNumber('RABOSH_BENCH_RUNS', 3, '--runs'));
const jobTimeoutMs = envNumber('RABOSH_BENCH_JOB_TIMEOUT_S', 300) * 1000;
const resultsDir = resolve(process.env.RABOSH_BENCH_RESULTS ?? join(repo, 'bench', 'results'));
const peersBuild = (process.env.RABOSH_BENCH_PEERS ?? 'full') as PeersBuild;
if (peersBuild !== 'full' && peersBuild !== 'quick') throw new Error(`RABOSH_BENCH_PEERS: ${peersBuild} is neither full nor quick`);
// An unoptimised SQLite must never land in the published figures.
if (peersBuild === 'quick' && !process.env.RABOSH_BENCH_RESULTS)
  throw new Error('RABOSH_BENCH_PEERS=quick: name a RABOSH_BENCH_RESULTS directory; bench/results keeps optimised figures only');
let peersUsed: string | undefined;
const wanted = process.env.RABOSH_BENCH_BACKENDS?.split(',')
  .map((s) => s.trim())
  .filter(Boolean);
for (const id of wanted ?? []) {
  if (!BACKENDS.some((b) => b.id === id)) throw new Error(`RABOSH_BENCH_BACKENDS: unknown backend ${id}`);
}
if (scaleRun) {
  const outside = (wanted ?? []).filter((id) => !(SCALE_ALLOWED as readonly string[]).includes(id));
  if (outside.length) throw new Error(`RABOSH_BENCH_BACKENDS: the scale run takes ${SCALE_ALLOWED.join(', ')}, not ${outside.join(', ')}`);
}
const backends: BackendInfo[] = BACKENDS.filter((b) =>
  wanted ? wanted.includes(b.id) : !scaleRun || (SCALE_BACKENDS as readonly string[]).includes(b.id),
);

const sizes = scaleRun ? scaleSizes(process.env.RABOSH_BENCH_SIZES) : [];

const work = mkdtempSync(join(resolve(process.env.RABOSH_BENCH_DIR ?? tmpdir()), 'rabosh-bench-'));
let jobNo = 0;
/** The children's script bundled for Node (bench/child-bundle.ts); made at the start of `main`. */
let bundle: string | undefined;

function runChild(scenario: string, backend: string, dir: string, params: Record<string, unknown>): Promise<Outcome> {
  const n = ++jobNo;
  const job: Job = { scenario, backend, dir, params, out: join(work, `out-${n}.json`) };
  const { exe, args } = childLine(BACKENDS.find((b) => b.id === backend)?.runtime, join(repo, 'bench', 'child.ts'), bundle);
  return runJob(job, { exe, args, cwd: repo, jobFile: join(work, `job-${n}.json`), timeoutMs: jobTimeoutMs });
}

const t0 = nowMs();
function log(msg: string): void {
  const s = Math.round((nowMs() - t0) / 1000);
  process.stderr.write(`[${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}] ${msg}\n`);
}

function fmt(x: number): string {
  return Number.isFinite(x) ? (Math.abs(x) >= 100 ? x.toFixed(0) : x.toPrecision(3)) : String(x);
}

async function main(): Promise<number> {
  if (backends.some((b) => b.family === 'sqlite')) peersUsed = ensurePeers(log, peersBuild);
  bundle = await bundleChild();
  const started = nowMs();
  const loadBefore = loadavg()[0]!;
  const plan = makePlan(scale);
  const only = process.env.RABOSH_BENCH_ONLY?.split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (only) {
    const unknown = only.filter((id) => !plan.instances.some((i) => i.id === id || i.id.startsWith(`${id}/`)));
    if (unknown.length) throw new Error(`RABOSH_BENCH_ONLY: no measurement named ${unknown.join(', ')}`);
    plan.instances = plan.instances.filter((i) => only.some((id) => i.id === id || i.id.startsWith(`${id}/`)));
  }
  const failures: string[] = [];
  const families = [...new Set(backends.map((b) => b.family))];
  const seeder = (family: string) => backends.find((b) => b.family === family)!.id;
  const datasetDir = (family: string, id: string) => join(work, 'datasets', family, id);
  const seedTimes: Record<string, Record<string, number>> = {};
  const seeded = new Set<string>();

  log(`rabosh-memory bench: scale ${scale}, ${runs} run(s), backends ${backends.map((b) => b.id).join(', ')}`);
  log(`stores under ${work}`);
  const used = plan.datasets.filter((ds) => plan.instances.some((i) => i.dataset?.id === ds.id));
  for (const family of families) {
    for (const ds of used) {
      const t0 = nowMs();
      try {
        const out = await runChild('seedDataset', seeder(family), datasetDir(family, ds.id), { dataset: ds });
        seedTimes[family] ??= {};
        seedTimes[family][ds.id] = out.metrics.seed_s!;
        seeded.add(`${family}/${ds.id}`);
        log(`seeded ${family} ${ds.id} in ${((nowMs() - t0) / 1000).toFixed(1)} s`);
      } catch (err) {
        failures.push(`seeding ${family} ${ds.id}: ${(err as Error).message}`);
        log(`FAILED seeding ${family} ${ds.id}: ${(err as Error).message}`);
      }
    }
  }

  // results[instance][backend] = one Outcome per run
  const results = new Map<string, Map<string, Outcome[]>>();
  const record = (inst: Instance, backend: string, out: Outcome) => {
    const byBackend = results.get(inst.id) ?? new Map<string, Outcome[]>();
    results.set(inst.id, byBackend);
    byBackend.set(backend, [...(byBackend.get(backend) ?? []), out]);
  };
  for (let run = 1; run <= runs; run++) {
    for (const inst of plan.instances) {
      const targets = inst.floor
        ? [{ id: 'none', family: 'none' }]
        : inst.oursOnly
          ? backends.filter((b) => b.id === 'rabosh')
          : backends.filter((b) => runsMeasurement(b, inst.id));
      for (const b of targets) {
        let dir: string;
        if (inst.dataset) {
          if (!seeded.has(`${b.family}/${inst.dataset.id}`)) continue;
          dir = datasetDir(b.family, inst.dataset.id);
        } else {
          dir = join(work, 'scratch', `${inst.id}-${b.id}-${run}`);
        }
        try {
          const out = await runChild(inst.scenario, b.id, dir, inst.params);
          record(inst, b.id, out);
          const shown = inst.rows.map((r) => `${r.metric}=${fmt(out.metrics[r.metric]!)}`).join(' ');
          log(`run ${run}/${runs} ${inst.id} ${b.id}: ${shown}`);
        } catch (err) {
          failures.push(`run ${run} ${inst.id} ${b.id}: ${(err as Error).message}`);
          log(`FAILED run ${run} ${inst.id} ${b.id}: ${(err as Error).message}`);
        }
      }
    }
  }

  const mismatches = checkAgreement(plan.instances, results);
  const tableRows: TableRow[] = [];
  for (const inst of plan.instances) {
    for (const row of inst.rows) {
      const cells: TableRow['cells'] = {};
      for (const [backend, outs] of results.get(inst.id) ?? []) {
        const values = outs.map((o) => o.metrics[row.metric]).filter((v): v is number => Number.isFinite(v));
        if (values.length) cells[backend] = summarise(values);
      }
      tableRows.push({ row, instance: inst.id, floor: inst.floor === true, cells });
    }
  }
  const measured = tableRows.filter((r) => Object.keys(r.cells).length > 0).length;
  if (measured === 0) failures.push('no measurement produced a result');

  const minutes = (nowMs() - started) / 60000;
  const machine = describeMachine();
  // Other work on the machine shows up here; it is the first thing to check when numbers look off.
  const load = `load average ${loadBefore.toFixed(1)} at start, ${loadavg()[0]!.toFixed(1)} at end`;
  const table = renderTable(tableRows, backends);
  const runtimeTable = renderRuntimeTable(tableRows, backends);
  const md = [
    `# rabosh-memory benchmark`,
    '',
    `${new Date().toISOString()} · commit ${machine.commit} · ${machine.summary} · ${load} · scale ${scale} · ` +
      `${runs} run(s) per cell, each in a fresh process · ${minutes.toFixed(1)} min`,
    '',
    table,
    '',
    legend(backends),
    '',
    ...(runtimeTable ? [runtimeTable, ''] : []),
    `Versions: ${Object.entries(machine.versions)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}.`,
    '',
    mismatches.length
      ? `**Answers disagreed:**\n${mismatches.map((m) => `- ${m}`).join('\n')}`
      : 'All handlers gave the same answers for every measured operation (SDK directory sizes blanked, see bench/agreement.ts).',
    failures.length ? `\n**Failures:**\n${failures.map((f) => `- ${f}`).join('\n')}` : '',
  ].join('\n');
  mkdirSync(resultsDir, { recursive: true });
  writeFileSync(join(resultsDir, 'latest.md'), `${md}\n`);
  writeFileSync(
    join(resultsDir, 'latest.json'),
    `${JSON.stringify(
      {
        date: new Date().toISOString(),
        machine,
        load,
        scale,
        runs,
        minutes,
        backends,
        seedSeconds: seedTimes,
        rows: tableRows.map((r) => ({ ...r.row, instance: r.instance, floor: r.floor, cells: r.cells })),
        mismatches,
        failures,
      },
      null,
      2,
    )}\n`,
  );
  process.stdout.write(`${md}\n`);

  if (process.env.RABOSH_BENCH_KEEP === '1') log(`kept stores in ${work}`);
  else removeStores();
  return failures.length || mismatches.length ? 1 : 0;
}

/**
 * Unlinking a file whose blocks reached the disk can cost milliseconds (measured here: 1–4 ms
 * per synced file on ext4 mounted with `discard`), and the filesystem engine alone leaves some
 * 300,000 of them. So nothing is deleted while measuring (deletions would add I/O to the next
 * measurement), and at the end a detached process removes the stores unless
 * RABOSH_BENCH_CLEANUP=wait asks to wait for it.
 */
function removeStores(): void {
  if (process.env.RABOSH_BENCH_CLEANUP === 'wait') {
    rmSync(work, { recursive: true, force: true });
    return;
  }
  const script = 'require("node:fs").rmSync(process.argv[1], { recursive: true, force: true })';
  spawn(process.execPath, ['-e', script, work], { detached: true, stdio: 'ignore' }).unref();
  log(`removing ${work} in the background`);
}

const MAX_REPORTED = 8;

/** Every backend must answer every instance like the reference (ours when present) and like itself across runs. */
function checkAgreement(instances: Instance[], results: Map<string, Map<string, Outcome[]>>): string[] {
  const problems: string[] = [];
  const isSdk = (id: string) => id === 'sdk-fs';
  for (const inst of instances) {
    const byBackend = results.get(inst.id);
    if (!byBackend || inst.floor) continue;
    const order = backends.map((b) => b.id).filter((id) => byBackend.has(id));
    if (order.length === 0) continue;
    const refId = order[0]!;
    const ref = byBackend.get(refId)![0]!.answers;
    // Capped per backend, so one peer's many differences never hide another peer's.
    for (const id of order) {
      const before = problems.length;
      const outs = byBackend.get(id)!;
      outs.forEach((out, run) => {
        const keys = new Set([...Object.keys(ref), ...Object.keys(out.answers)]);
        for (const key of keys) {
          const a = ref[key];
          const b = out.answers[key];
          if (!a || !b) {
            problems.push(`${inst.id}: "${key}" answered by ${a ? refId : id} only`);
            continue;
          }
          if (!agrees(a, b, isSdk(id) || isSdk(refId))) {
            problems.push(
              `${inst.id} run ${run + 1}: ${id} and ${refId} differ on "${key}": ` +
                `${JSON.stringify(b.head.slice(0, 160))} (${b.length} chars) vs ${JSON.stringify(a.head.slice(0, 160))} (${a.length} chars)`,
            );
          }
        }
      });
      const found = problems.length - before;
      if (found > MAX_REPORTED)
        problems.splice(
          before + MAX_REPORTED,
          found - MAX_REPORTED,
          `${inst.id}: … and ${found - MAX_REPORTED} more differences from ${id}`,
        );
    }
  }
  return problems;
}

function describeMachine(): { summary: string; commit: string; versions: Record<string, string> } {
  // Not require(`${pkg}/package.json`): packages with an `exports` map may not expose it. From
  // bench/peers/, which finds its own packages and then the root's.
  const req = createRequire(join(repo, 'bench', 'peers', 'package.json'));
  const version = (pkg: string) => {
    try {
      const entry = req.resolve(pkg);
      const root = entry.slice(0, entry.lastIndexOf(`node_modules/${pkg}/`) + `node_modules/${pkg}/`.length);
      return (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;
    } catch {
      return 'missing';
    }
  };
  const cpu = cpus();
  const summary = `${cpu[0]?.model.trim() ?? 'unknown CPU'} × ${cpu.length}, ${Math.round(totalmem() / 2 ** 30)} GiB, ${type()} ${release()}, Node ${process.version}`;
  const head = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: repo, encoding: 'utf8' });
  const dirty = spawnSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: repo, encoding: 'utf8' });
  const commit = head.status === 0 ? head.stdout.trim() + (dirty.stdout.trim() ? ' (with uncommitted changes)' : '') : 'unknown';
  return {
    summary,
    commit,
    versions: {
      node: process.version,
      '@anthropic-ai/sdk': version('@anthropic-ai/sdk'),
      'better-sqlite3':
        version('better-sqlite3') + (peersUsed === 'quick' ? ' (compiled at -O0: answers checked, times not comparable)' : ''),
      lmdb: version('lmdb'),
      ...Object.fromEntries(
        [...new Set(backends.map((b) => b.runtime).filter((r) => r !== undefined))].map((r) => [
          r === 'bun' ? 'bun' : 'node:sqlite under node',
          spawnSync(childCommand(r).exe, ['--version'], { encoding: 'utf8' }).stdout.trim(),
        ]),
      ),
      'rabosh-memory': (JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as { version: string }).version,
    },
  };
}

/** The scale run, with this run's children, stores and machine line. */
async function scaleMain(): Promise<number> {
  if (backends.some((b) => b.family === 'sqlite')) peersUsed = ensurePeers(log, peersBuild);
  bundle = await bundleChild();
  const bad = await runScale({
    sizes,
    runs,
    backends,
    work,
    resultsDir,
    run: runChild,
    log,
    machine: describeMachine,
  });
  if (process.env.RABOSH_BENCH_KEEP === '1') log(`kept stores in ${work}`);
  else removeStores();
  return bad ? 1 : 0;
}

(scaleRun ? scaleMain() : main()).then(
  (code) => {
    if (bundle) rmSync(bundle, { force: true });
    process.exit(code);
  },
  (err: unknown) => {
    console.error(err instanceof Error ? (err.stack ?? err.message) : String(err));
    rmSync(work, { recursive: true, force: true });
    if (bundle) rmSync(bundle, { force: true });
    process.exit(1);
  },
);
