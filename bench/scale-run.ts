// `npm run bench -- --scale 1m`: the first-look rows of bench/scale-plan.ts at each store size,
// ours beside better-sqlite3 and lmdb-js, every step in a fresh process per side and run. Writes
// results/scale-<size>.{md,json} per size (scale-1m for a million); docs/performance.md shows
// them and charts the sizes side by side (scripts/perf-doc.mjs).

import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { agrees } from './agreement.js';
import type { BackendInfo } from './handlers/registry.js';
import type { Outcome } from './jobs.js';
import { renderTable, type TableRow } from './report.js';
import { scaleSteps, sizeName } from './scale-plan.js';
import { nowMs, summarise } from './stats.js';

export interface ScaleRunOptions {
  sizes: number[];
  runs: number;
  backends: readonly BackendInfo[];
  /** Where the stores go (the run's own temporary directory). */
  work: string;
  resultsDir: string;
  run(scenario: string, backend: string, dir: string, params: Record<string, unknown>): Promise<Outcome>;
  log(line: string): void;
  machine(): { summary: string; commit: string; versions: Record<string, string> };
}

const load = () =>
  loadavg()
    .map((x) => x.toFixed(1))
    .join(' / ');

function fmt(x: number | undefined): string {
  return x === undefined || !Number.isFinite(x) ? '—' : x >= 100 ? x.toFixed(0) : x.toPrecision(3);
}

/** Runs every size; returns how many sizes failed or disagreed (0: all good). */
export async function runScale(o: ScaleRunOptions): Promise<number> {
  let bad = 0;
  for (const size of o.sizes) if (!(await runSize(o, size))) bad++;
  return bad;
}

async function runSize(o: ScaleRunOptions, size: number): Promise<boolean> {
  const started = nowMs();
  const loadBefore = load();
  const steps = scaleSteps(size);
  const params = { size };
  const families = [...new Set(o.backends.map((b) => b.family))];
  const seeder = (family: string) => o.backends.find((b) => b.family === family)!.id;
  const storeDir = (family: string) => join(o.work, `scale-${sizeName(size)}`, family);
  const results = new Map<string, Map<string, Outcome[]>>();
  const record = (scenario: string, backend: string, out: Outcome) => {
    const byBackend = results.get(scenario) ?? new Map<string, Outcome[]>();
    results.set(scenario, byBackend);
    byBackend.set(backend, [...(byBackend.get(backend) ?? []), out]);
  };
  const failures: string[] = [];
  const seeded = new Set<string>();
  const attempt = async (run: number, scenario: string, backend: string, dir: string): Promise<boolean> => {
    try {
      const out = await o.run(scenario, backend, dir, params);
      record(scenario, backend, out);
      const step = steps.find((s) => s.scenario === scenario)!;
      o.log(
        `${sizeName(size)} run ${run}/${o.runs} ${scenario} ${backend}: ${step.rows.map((r) => `${r.metric}=${fmt(out.metrics[r.metric])}`).join(' ')}`,
      );
      return true;
    } catch (err) {
      failures.push(`${sizeName(size)} run ${run} ${scenario} ${backend}: ${(err as Error).message}`);
      o.log(`FAILED ${sizeName(size)} run ${run} ${scenario} ${backend}: ${(err as Error).message}`);
      return false;
    }
  };

  o.log(`scale ${sizeName(size)}: ${size.toLocaleString('en-US')} memories, ${o.runs} run(s), load average ${loadBefore}`);
  for (let run = 1; run <= o.runs; run++) {
    // Each run imports afresh; the first run's stores are the ones every later step opens.
    for (const family of families) {
      const dir = run === 1 ? storeDir(family) : join(o.work, `scale-${sizeName(size)}-import-${run}`, family);
      if ((await attempt(run, 'scaleImport', seeder(family), dir)) && run === 1) seeded.add(family);
      if (run > 1) rmSync(dir, { recursive: true, force: true });
    }
    for (const step of steps.slice(1)) {
      for (const b of o.backends) {
        if (seeded.has(b.family)) await attempt(run, step.scenario, b.id, storeDir(b.family));
      }
    }
  }

  const mismatches = compare(o.backends, results);
  const rows: TableRow[] = steps.flatMap((step) =>
    step.rows.map((row) => {
      const cells: TableRow['cells'] = {};
      for (const [backend, outs] of results.get(step.scenario) ?? []) {
        const values = outs.map((out) => out.metrics[row.metric]).filter((v): v is number => Number.isFinite(v));
        if (values.length) cells[backend] = summarise(values);
      }
      return { row, instance: step.scenario, floor: false, cells };
    }),
  );
  if (!rows.some((r) => Object.keys(r.cells).length > 0)) failures.push('no measurement produced a result');

  const machine = o.machine();
  const minutes = (nowMs() - started) / 60_000;
  const loadLine = `load average (1 / 5 / 15 min) ${loadBefore} at start, ${load()} at end`;
  const count = size.toLocaleString('en-US');
  const md = [
    `# rabosh-memory at ${count} memories`,
    '',
    `${new Date().toISOString()} · commit ${machine.commit} · ${machine.summary} · ${loadLine} · ` +
      `${o.runs} run(s) per cell, each in a fresh process · ${minutes.toFixed(1)} min`,
    '',
    `${count} memories of about 200 B in directories of 10 subdirectories × 100 files, imported in chunks of 50,000 ` +
      '(ours: `importMemories` over a store opened with `durability: sync`; SQLite: WAL, `synchronous=FULL`, a covering index, ' +
      'one transaction a chunk; LMDB: one transaction a chunk, awaited until flushed). Each run imports afresh in its own process; ' +
      "the first run's stores are what every other row opens, each row in a fresh process per side. The views look in the middle " +
      "directory. Import rows are per store format (SQLite+ shares SQLite's). RSS is the process's whole resident set (Node included).",
    '',
    renderTable(rows, o.backends),
    '',
    'Cells: median over runs, (min–max) of the runs. Ratio columns: ours ÷ alternative on the medians; below 1 means ours takes less.',
    '',
    mismatches.length
      ? `**Answers disagreed:**\n${mismatches.map((m) => `- ${m}`).join('\n')}`
      : 'Every side gave the same answers to every view and create (byte for byte, bench/agreement.ts).',
    failures.length ? `\n**Failures:**\n${failures.map((f) => `- ${f}`).join('\n')}` : '',
  ].join('\n');
  mkdirSync(o.resultsDir, { recursive: true });
  const base = join(o.resultsDir, `scale-${sizeName(size)}`);
  writeFileSync(`${base}.md`, `${md.trimEnd()}\n`);
  const json = {
    date: new Date().toISOString(),
    machine,
    load: loadLine,
    size,
    runs: o.runs,
    minutes,
    backends: o.backends,
    rows: rows.map((r) => ({ ...r.row, instance: r.instance, cells: r.cells })),
    mismatches,
    failures,
  };
  writeFileSync(`${base}.json`, `${JSON.stringify(json, null, 2)}\n`);
  process.stdout.write(`${md}\n`);
  return failures.length === 0 && mismatches.length === 0;
}

/** Every side, every run, must give the answers the first side gave in its first run. */
function compare(backends: readonly BackendInfo[], results: Map<string, Map<string, Outcome[]>>): string[] {
  const problems: string[] = [];
  for (const [scenario, byBackend] of results) {
    const order = backends.map((b) => b.id).filter((id) => byBackend.has(id));
    const refId = order[0];
    if (refId === undefined) continue;
    const ref = byBackend.get(refId)![0]!.answers;
    for (const id of order) {
      byBackend.get(id)!.forEach((out, run) => {
        for (const key of new Set([...Object.keys(ref), ...Object.keys(out.answers)])) {
          const a = ref[key];
          const b = out.answers[key];
          if (!a || !b) problems.push(`${scenario}: "${key}" answered by ${a ? refId : id} only`);
          else if (!agrees(a, b, false))
            problems.push(`${scenario} run ${run + 1}: ${id} and ${refId} differ on "${key}" (${b.length} vs ${a.length} chars)`);
        }
      });
    }
  }
  return problems;
}
