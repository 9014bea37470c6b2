// `npm run bench:surfaces -- --size 100k|1m`: the surfaces around the store, measured on a store
// of bench/scale-plan.ts's shape (built here with importMemories, in this run's temporary
// directory, and removed at the end): the MCP server (surfaces/mcp.ts), db.sync against the
// memory-stores stand-in (surfaces/sync.ts) and the inspector's page in chromium
// (surfaces/inspector.ts, through inspector-page.mjs). Each run of each surface is a fresh
// process (server, sync, browser); cells are median (min–max) of the runs, with the load
// average at the start and the end. Writes results/surfaces-<size>.{md,json}.
//
// Options: --size (1k, 100k, 1m or a multiple of 1,000; 100k), --runs (3), --only (mcp,sync,
// inspector), --writes (the inspector's writes per run, 10), --notify (the MCP notifications of
// each kind per run, 3), --latency (ms the stand-in waits per answer during the runs, 10).
// Env: RABOSH_BENCH_DIR (where the stores go), RABOSH_BENCH_RESULTS (where the results go).
// Needs `npm run build` (the CLI and the library in dist) and a chromium for the inspector.

import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, release, tmpdir, totalmem, type } from 'node:os';
import { join, resolve } from 'node:path';
import { sizeName } from './scale-plan.js';
import { nowMs, type Summary, summarise } from './stats.js';
import { measureInspector } from './surfaces/inspector.js';
import { measureMcp } from './surfaces/mcp.js';
import { parseSize, ROWS, SURFACES, type Surface, type SurfaceRow } from './surfaces/plan.js';
import { load } from './surfaces/proc.js';
import { buildStore } from './surfaces/store.js';
import { measureSync, setupSync, type SyncSetup } from './surfaces/sync.js';

const repo = resolve(import.meta.dirname, '..');
const args = process.argv.slice(2);
const opt = (name: string, dflt: string) => {
  const i = args.indexOf(`--${name}`);
  return i < 0 ? dflt : (args[i + 1] ?? dflt);
};
const size = parseSize(opt('size', '100k'));
const runs = Number(opt('runs', '3'));
const only = opt('only', SURFACES.join(',')).split(',') as Surface[];
const writes = Number(opt('writes', '10'));
const notify = Number(opt('notify', '3'));
const latencyMs = Number(opt('latency', '10'));
for (const s of only) if (!SURFACES.includes(s)) throw new Error(`--only: ${s} is not one of ${SURFACES.join(', ')}`);
for (const [name, v] of [
  ['runs', runs],
  ['writes', writes],
  ['notify', notify],
  ['latency', latencyMs + 1],
] as const)
  if (!Number.isSafeInteger(v) || v < 1) throw new Error(`--${name}: expected a positive integer`);
const paths = { cli: join(repo, 'apps', 'cli', 'dist', 'main.js'), lib: join(repo, 'dist', 'esm', 'index.js') };
for (const f of Object.values(paths)) if (!existsSync(f)) throw new Error(`${f} is missing: run npm run build`);

const resultsDir = process.env['RABOSH_BENCH_RESULTS'] ?? join(repo, 'bench', 'results');
const work = mkdtempSync(join(process.env['RABOSH_BENCH_DIR'] ?? tmpdir(), 'bench-surfaces-'));
const log = (line: string) => void process.stderr.write(`${line}\n`);

const started = nowMs();
const loadStart = load();
const count = size.toLocaleString('en-US');
log(`surfaces at ${count} memories: ${only.join(', ')}, ${runs} run(s), load average ${loadStart}`);

const results = new Map<Surface, Record<string, number>[]>();
const failures: string[] = [];
const loads: string[] = [];
const setupNotes: string[] = [];
let sync: SyncSetup | null = null;

try {
  const store = join(work, 'store');
  const storeS = await buildStore(store, size, false);
  setupNotes.push(`the store imported in ${storeS.toFixed(1)} s`);
  log(`store: ${storeS.toFixed(1)} s`);
  const syncStore = join(work, 'sync-store');
  if (only.includes('sync')) {
    const s = await buildStore(syncStore, size, true);
    sync = await setupSync(paths.lib, syncStore, size);
    const note =
      `sync's store (history on) imported in ${s.toFixed(1)} s, the stand-in filled in ${sync.seedS.toFixed(1)} s, ` +
      `the first sync (full, both sides alike) ${sync.firstSyncS.toFixed(1)} s in ${sync.firstSyncRequests.toLocaleString('en-US')} requests`;
    setupNotes.push(note);
    log(note);
  }
  for (let run = 1; run <= runs; run++) {
    loads.push(load());
    for (const surface of only) {
      try {
        const m =
          surface === 'mcp'
            ? await measureMcp(store, paths, size, notify)
            : surface === 'sync'
              ? await measureSync(paths.lib, syncStore, size, sync as SyncSetup, run, latencyMs)
              : await measureInspector(store, writes);
        results.set(surface, [...(results.get(surface) ?? []), m]);
        log(
          `run ${run}/${runs} ${surface}: ${Object.entries(m)
            .map(([k, v]) => `${k}=${fmt(v)}`)
            .join(' ')}`,
        );
      } catch (e) {
        failures.push(`run ${run} ${surface}: ${(e as Error).message}`);
        log(`FAILED run ${run} ${surface}: ${(e as Error).message}`);
      }
    }
  }
} catch (e) {
  failures.push(`setup: ${(e as Error).message}`);
  log(`FAILED setup: ${(e as Error).stack ?? (e as Error).message}`);
} finally {
  await sync?.close();
  rmSync(work, { recursive: true, force: true });
}

function fmt(x: number | undefined): string {
  if (x === undefined || !Number.isFinite(x)) return '—';
  if (Number.isInteger(x)) return x.toLocaleString('en-US');
  return x >= 100 ? Math.round(x).toLocaleString('en-US') : x >= 10 ? x.toFixed(1) : x.toPrecision(2);
}
const cell = (s: Summary | undefined, unit: string) => {
  if (s === undefined) return '—';
  const u = unit ? ` ${unit}` : '';
  return s.min === s.max ? `${fmt(s.median)}${u}` : `${fmt(s.median)}${u} (${fmt(s.min)}–${fmt(s.max)})`;
};

type Summed = SurfaceRow & { summary: Summary | undefined };
const summaries = Object.fromEntries(
  only.map((surface): [Surface, Summed[]] => {
    const outs = results.get(surface) ?? [];
    return [
      surface,
      ROWS[surface].map((row) => {
        const values = outs.map((o) => o[row.metric]).filter((v): v is number => v !== undefined && Number.isFinite(v));
        return { ...row, summary: values.length ? summarise(values) : undefined };
      }),
    ];
  }),
) as Record<Surface, Summed[]>;
if (only.every((s) => (results.get(s) ?? []).length === 0)) failures.push('no measurement produced a result');

const head = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: repo, encoding: 'utf8' });
const dirty = spawnSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: repo, encoding: 'utf8' });
const commit = head.status === 0 ? head.stdout.trim() + (dirty.stdout.trim() ? ' (with uncommitted changes)' : '') : 'unknown';
const machine = `${cpus()[0]?.model.trim() ?? 'unknown CPU'} × ${cpus().length}, ${Math.round(totalmem() / 2 ** 30)} GiB, ${type()} ${release()}, Node ${process.version}`;
const loadLine = `load average (1 / 5 / 15 min) ${loadStart} at start, ${load()} at end (at each run's start: ${loads.join('; ')})`;
const minutes = (nowMs() - started) / 60_000;
const TITLES: Record<Surface, string> = {
  mcp: `MCP: \`rabosh-memory mcp\` over stdio, the official SDK's client (\`@modelcontextprotocol/sdk\`); notifications: median of ${notify} write(s) of each kind a run, the server polling every 1 s (its default)`,
  sync: `Sync: \`db.sync\` (incremental, the default) against the memory-stores stand-in through \`@anthropic-ai/sdk\`, the stand-in answering after ${latencyMs} ms`,
  inspector: `The inspector: \`rabosh-memory ui\` in headless chromium (bench/inspector-page.mjs), ${writes} writes a run from another process, one a second`,
};
const md = [
  `# Every surface at ${count} memories`,
  '',
  `${new Date().toISOString()} · commit ${commit} · ${machine} · ${loadLine} · ${runs} run(s), each a fresh process · ${minutes.toFixed(1)} min`,
  '',
  `${count} memories of bench/scale-plan.ts's shape (directories of 10 subdirectories × 100 files of about 200 B), ` +
    `imported with \`importMemories\` in chunks of 50,000 (${setupNotes.join('; ')}). ` +
    'Cells: median over runs (min–max of the runs). Times are wall clock on the machine above: read them with its load.',
  ...only.flatMap((surface) => [
    '',
    `**${TITLES[surface]}**`,
    '',
    '| measurement | value |',
    '|---|---:|',
    ...summaries[surface].map((r) => `| ${r.label} | ${cell(r.summary, r.unit)} |`),
  ]),
  failures.length ? `\n**Failures:**\n${failures.map((f) => `- ${f}`).join('\n')}` : '',
].join('\n');
mkdirSync(resultsDir, { recursive: true });
const base = join(resultsDir, `surfaces-${sizeName(size)}`);
writeFileSync(`${base}.md`, `${md.trimEnd()}\n`);
writeFileSync(
  `${base}.json`,
  `${JSON.stringify({ date: new Date().toISOString(), commit, machine, load: loadLine, size, runs, minutes, setup: setupNotes, surfaces: summaries, raw: Object.fromEntries(results), failures }, null, 2)}\n`,
);
process.stdout.write(`${md}\n`);
process.exit(failures.length ? 1 : 0);
