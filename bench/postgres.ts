// The PostgreSQL rows (issue 14): the same handler over a directory and over a URL, side by
// side in one run. Per-command latency (create / str_replace / insert / view of a 4 KiB memory,
// one after another, median), 64 concurrent callers (create + 8 edits each, commands per
// second), 64 callers creating in one directory (creates per second), and a listing of 5,000
// memories. Beside them, a hand-written node-postgres
// handler (alternatives/pg-handler.ts) against the same server in the same run; every answer of
// the three is kept and the run fails if any differs from ours over PostgreSQL. Needs
// RABOSH_PG_URL (run it through `node scripts/with-postgres.mjs "tsx bench/postgres.ts"`);
// prints a markdown table and writes it to bench/results/postgres.md.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { cpus, loadavg, release, tmpdir, totalmem, type } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { RaboshMemoryToolHandler } from '../index.js';
import { openPgHandler } from './alternatives/pg-handler.js';
import type { BenchHandler } from './handlers/types.js';
import { serverCpuMs } from './server-cpu.js';

const url = process.env['RABOSH_PG_URL'];
if (!url) throw new Error('RABOSH_PG_URL is not set; run through scripts/with-postgres.mjs');
const N = Number(process.env['RABOSH_BENCH_PG_N'] ?? 200);
const LISTED = 5_000;
/** Creates per caller in the one-directory row: 512 in all at the default N. */
const CREATES_PER_CALLER = Math.max(1, Math.round(N / 25));
/** RABOSH_BENCH_PG_ROWS=burst measures only the one-directory row (issue 34), so it can be
 * repeated side by side without the other rows' load in between. */
const ONLY_BURST = process.env['RABOSH_BENCH_PG_ROWS'] === 'burst';
if (process.env['RABOSH_BENCH_PG_ROWS'] !== undefined && !ONLY_BURST)
  throw new Error(`RABOSH_BENCH_PG_ROWS: only "burst" is known, not ${process.env['RABOSH_BENCH_PG_ROWS']}`);
// 4 KiB whose first line is unique to the memory, so a str_replace of it matches once.
const body = (i: number) => `MARK${i}\n${'f'.repeat(4096 - `MARK${i}\n`.length - 1)}\n`;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** What a measured handler offers: ours through execute(), the node-postgres peer directly. */
interface Target {
  execute(input: Record<string, unknown>): Promise<{ text: string; isError: boolean }>;
  importMemories(files: { path: string; content: string }[]): Promise<unknown>;
  close(): Promise<void>;
}

async function ours(target: string): Promise<Target> {
  return RaboshMemoryToolHandler.open(target);
}

async function nodePostgres(url: string, schema: string): Promise<Target> {
  const h = await openPgHandler(url, schema);
  // Only success answers are measured, so an answer that is not one is the failure.
  const success = /^(File created|The memory file has been edited|The file .* has been edited|Here's the content|Here're the files)/;
  // Fault injection for the test that proves a disagreement fails the run.
  const sabotage = process.env['RABOSH_BENCH_SABOTAGE']?.split(',').includes('node-postgres') ? ' (sabotaged)' : '';
  return {
    async execute(input) {
      const command = input.command as keyof Omit<BenchHandler, 'close'>;
      const text = (await (h[command] as (i: unknown) => Promise<string>)(input)) + sabotage;
      return { text, isError: !success.test(text) };
    },
    importMemories: (files) => h.importMemories(files),
    close: () => h.close(),
  };
}

/** Every answer a target gave, in a fixed order (concurrent callers' answers by caller). */
type Answers = string[];

async function timed(h: Target, inputs: Array<Record<string, unknown>>, answers: Answers): Promise<number> {
  const ms: number[] = [];
  for (const input of inputs) {
    const t = performance.now();
    const r = await h.execute(input);
    ms.push(performance.now() - t);
    if (r.isError) throw new Error(`${JSON.stringify(input).slice(0, 80)}: ${r.text}`);
    answers.push(r.text);
  }
  return median(ms);
}

const BURST_ROW = '64 callers creating in one directory, creates/s';

/** 64 callers creating in one directory (issue 24's row). Over PostgreSQL each create there
 * inserts its own summary rows (`summary.rs`: memories within two levels have rows of their
 * own), so what they share is the server and the machine's cores, not a row. */
async function burst(h: Target, row: Record<string, number>, answers: Answers, dir = '/memories/burst'): Promise<void> {
  const creators: Answers[] = Array.from({ length: 64 }, () => []);
  const before = ONLY_BURST ? await costs() : null;
  const t1 = performance.now();
  await Promise.all(
    creators.map(async (mine, c) => {
      for (let k = 0; k < CREATES_PER_CALLER; k++) {
        const r = await h.execute({ command: 'create', path: `${dir}/c${c}-${k}.md`, file_text: body(c) });
        if (r.isError) throw new Error(r.text);
        mine.push(r.text);
      }
    }),
  );
  row[BURST_ROW] = (64 * CREATES_PER_CALLER) / ((performance.now() - t1) / 1000);
  if (before) {
    const after = await costs();
    const per = (a: number, b: number) => (a - b) / (64 * CREATES_PER_CALLER);
    row['client CPU per create, ms'] = per(after.clientMs, before.clientMs);
    if (after.serverMs !== null && before.serverMs !== null) row['server CPU per create, ms'] = per(after.serverMs, before.serverMs);
    row['WAL per create, bytes'] = per(after.wal, before.wal);
  }
  answers.push(...creators.flat());
  answers.push((await h.execute({ command: 'view', path: dir })).text);
}

/** The counters the one-row run reports per create: this process's CPU (every thread: ours
 * runs its commands on libuv's pool), the server's CPU (every process of the cluster, read from
 * /proc when the server runs here; null elsewhere) and the WAL position. */
async function costs(): Promise<{ clientMs: number; serverMs: number | null; wal: number }> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const r = (await c.query<{ pid: number; lsn: string }>('SELECT pg_backend_pid() AS pid, pg_current_wal_lsn()::TEXT AS lsn')).rows[0]!;
    const [hi, lo] = r.lsn.split('/').map((x) => Number.parseInt(x, 16));
    const u = process.cpuUsage();
    return { clientMs: (u.user + u.system) / 1000, serverMs: serverCpuMs(r.pid), wal: hi! * 2 ** 32 + lo! };
  } finally {
    await c.end();
  }
}

async function measure(open: () => Promise<Target>): Promise<{ row: Record<string, number>; answers: Answers }> {
  const row: Record<string, number> = {};
  const answers: Answers = [];
  const h = await open();
  try {
    if (ONLY_BURST) {
      // In the full run the row comes after the others, with every pool connected and the
      // JavaScript of node-postgres optimised: so here too, by one unmeasured burst first.
      await burst(h, {}, [], '/memories/warm');
      await burst(h, row, answers);
      return { row, answers };
    }
    const paths = Array.from({ length: N }, (_, i) => `/memories/lat/m${i}.md`);
    row['create'] = await timed(
      h,
      paths.map((path, i) => ({ command: 'create', path, file_text: body(i) })),
      answers,
    );
    row['str_replace'] = await timed(
      h,
      paths.map((path, i) => ({ command: 'str_replace', path, old_str: `MARK${i}\n`, new_str: `EDIT${i}\n` })),
      answers,
    );
    row['insert'] = await timed(
      h,
      paths.map((path) => ({ command: 'insert', path, insert_line: 1, insert_text: 'inserted' })),
      answers,
    );
    row['view'] = await timed(
      h,
      paths.map((path) => ({ command: 'view', path })),
      answers,
    );

    const t0 = performance.now();
    let commands = 0;
    const byCaller: Answers[] = Array.from({ length: 64 }, () => []);
    await Promise.all(
      Array.from({ length: 64 }, async (_, c) => {
        const path = `/memories/conc/c${c}.md`;
        const created = await h.execute({ command: 'create', path, file_text: body(c) });
        if (created.isError) throw new Error(created.text);
        byCaller[c]!.push(created.text);
        commands++;
        for (let e = 0; e < 8; e++) {
          const r = await h.execute(
            e % 2 === 0
              ? { command: 'str_replace', path, old_str: e === 0 ? `MARK${c}\n` : `S${e - 2}:${c}\n`, new_str: `S${e}:${c}\n` }
              : { command: 'insert', path, insert_line: 0, insert_text: `i${e}` },
          );
          if (r.isError) throw new Error(r.text);
          byCaller[c]!.push(r.text);
          commands++;
        }
      }),
    );
    row['64 callers, commands/s'] = commands / ((performance.now() - t0) / 1000);
    answers.push(...byCaller.flat());
    answers.push((await h.execute({ command: 'view', path: '/memories/conc/c7.md' })).text);

    await burst(h, row, answers);

    await h.importMemories(
      Array.from({ length: LISTED }, (_, i) => ({ path: `/memories/list/n${String(i).padStart(5, '0')}.md`, content: 'x'.repeat(64) })),
    );
    const listing: number[] = [];
    for (let round = 0; round < 7; round++) {
      const t = performance.now();
      const r = await h.execute({ command: 'view', path: '/memories/list' });
      listing.push(performance.now() - t);
      if (r.isError) throw new Error(r.text.slice(0, 200));
      if (round === 0) answers.push(r.text);
    }
    row['view of 5,000 memories'] = median(listing.slice(2));
  } finally {
    await h.close();
  }
  return { row, answers };
}

/** Where `b` first differs from `a`, or null. */
function firstDifference(a: Answers, b: Answers): string | null {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if (a[i] !== b[i])
      return `answer ${i + 1} of ${a.length}: ${JSON.stringify(b[i]?.slice(0, 160))} vs ${JSON.stringify(a[i]?.slice(0, 160))}`;
  }
  return null;
}

/** Rounds of the three measurements, one after another in this process (RABOSH_BENCH_PG_RUNS). */
const RUNS = Math.max(1, Number(process.env['RABOSH_BENCH_PG_RUNS'] ?? 3));

/** The machine, the server and the load, for the file's first line. */
async function machineLine(url: string): Promise<string> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  const server = (
    await c.query<{ v: string; f: string; s: string }>(
      "SELECT split_part(version(), ' ', 2) AS v, current_setting('fsync') AS f, current_setting('synchronous_commit') AS s",
    )
  ).rows[0]!;
  await c.end();
  const head = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).stdout.trim() || 'unknown';
  const cpu = cpus();
  return (
    `${new Date().toISOString()} · commit ${head} · ${cpu[0]?.model.trim() ?? 'unknown CPU'} × ${cpu.length}, ` +
    `${Math.round(totalmem() / 2 ** 30)} GiB, ${type()} ${release()}, Node ${process.version} · PostgreSQL ${server.v} ` +
    `on the same machine (fsync ${server.f}, synchronous_commit ${server.s}) · load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')} at the end · ` +
    `${RUNS} round(s), each measuring the three one after another`
  );
}

const dir = mkdtempSync(join(tmpdir(), 'rabosh-bench-pg-'));
let failed = false;
try {
  const rounds: Array<Record<'embedded' | 'postgres' | 'peer', Record<string, number>>> = [];
  const differences: Array<[string, string]> = [];
  let answered = 0;
  for (let round = 0; round < RUNS; round++) {
    const tag = randomBytes(4).toString('hex');
    const embedded = await measure(() => ours(join(dir, `r${round}`)));
    const measureOurs = () => measure(() => ours(`${url}${url.includes('?') ? '&' : '?'}schema=bench_${tag}`));
    const measurePeer = () => measure(() => nodePostgres(url, `bench_pg_${tag}`));
    // The one-row run alternates which of the two goes first, so neither always meets the
    // other's leftovers (autovacuum, a checkpoint) on the shared server.
    const peerFirst = ONLY_BURST && round % 2 === 1;
    const early = await (peerFirst ? measurePeer() : measureOurs());
    const late = await (peerFirst ? measureOurs() : measurePeer());
    const [postgres, peer] = peerFirst ? [late, early] : [early, late];
    if (ONLY_BURST)
      console.error(
        `round ${round + 1}${peerFirst ? ' (node-postgres first)' : ''}: ours ${postgres.row[BURST_ROW]!.toFixed(0)}/s, ` +
          `node-postgres ${peer.row[BURST_ROW]!.toFixed(0)}/s, ratio ${(postgres.row[BURST_ROW]! / peer.row[BURST_ROW]!).toFixed(2)}`,
      );
    rounds.push({ embedded: embedded.row, postgres: postgres.row, peer: peer.row });
    answered = postgres.answers.length;
    // Ours over PostgreSQL is the reference; the run fails when any handler answered otherwise.
    for (const [who, d] of [
      ['embedded', firstDifference(postgres.answers, embedded.answers)],
      ['node-postgres handler', firstDifference(postgres.answers, peer.answers)],
    ] as const) {
      if (d !== null) differences.push([who, `${d} (round ${round + 1})`]);
    }
  }
  const fmt = (k: string, v: number) =>
    k.includes('/s') || k.includes('bytes') ? v.toFixed(0) : k.endsWith(', ms') ? v.toFixed(3) : `${v.toFixed(3)} ms`;
  const mid = (who: 'embedded' | 'postgres' | 'peer', k: string) => median(rounds.map((r) => r[who][k]!));
  /** The median ratio of `a` to `b` over the rounds, with its range when there are several. */
  const ratio = (a: 'postgres', b: 'embedded' | 'peer', k: string) => {
    const rs = rounds.map((r) => r[a][k]! / r[b][k]!);
    const range = rs.length > 1 ? ` (${Math.min(...rs).toFixed(2)}–${Math.max(...rs).toFixed(2)})` : '';
    return `${median(rs).toFixed(2)}${range}`;
  };
  const lines = [
    await machineLine(url),
    '',
    `| row (${N} commands, 4 KiB memories; median of ${RUNS}) | embedded (sync) | PostgreSQL | node-postgres handler | PG ÷ embedded | PG ÷ node-postgres |`,
    '|---|---|---|---|---|---|',
    ...Object.keys(rounds[0]!.embedded).map(
      (k) =>
        `| ${k} | ${fmt(k, mid('embedded', k))} | ${fmt(k, mid('postgres', k))} | ${fmt(k, mid('peer', k))} | ` +
        `${ratio('postgres', 'embedded', k)} | ${ratio('postgres', 'peer', k)} |`,
    ),
  ];
  lines.push(
    '',
    differences.length
      ? `**Answers disagreed:**\n${differences.map(([who, d]) => `- ${who}: ${d}`).join('\n')}`
      : `All three gave the same ${answered} answers in every round. Ratios are per round (median, then the range over the rounds); above 1 on the rows per second means PostgreSQL does more, below 1 on the times means it takes less.`,
  );
  failed = differences.length > 0;
  const table = lines.join('\n');
  console.log(table);
  writeFileSync(
    new URL(process.env['RABOSH_BENCH_PG_OUT'] ?? (ONLY_BURST ? './results/postgres-burst.md' : './results/postgres.md'), import.meta.url),
    `${table}\n`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
if (failed) process.exit(1);
