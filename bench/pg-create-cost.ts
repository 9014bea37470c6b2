// What one create costs the PostgreSQL server, ours against the node-postgres handler (issue 24's
// "64 callers creating in one directory" row, bench/results/postgres.md): 64 callers creating
// in one directory, per round and handler (taking turns), the creates per second, the server's
// CPU per create (every `postgres` process's run time from Linux's schedstat, ns), the WAL it
// wrote per create, and the rows each handler's tables gained or changed per create. Run it
// through `node scripts/with-postgres.mjs "tsx bench/pg-create-cost.ts"` (RABOSH_PG_URL).
// Knobs: RABOSH_PG_COST_ROUNDS (5), RABOSH_PG_COST_CREATES (creates per caller, 20).
import { readdirSync, readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { RaboshMemoryToolHandler } from '../index.js';
import { openPgHandler } from './alternatives/pg-handler.js';

const url = process.env['RABOSH_PG_URL'];
if (!url) throw new Error('RABOSH_PG_URL is not set; run through scripts/with-postgres.mjs');
const rounds = Number(process.env['RABOSH_PG_COST_ROUNDS'] ?? 5);
const perCaller = Number(process.env['RABOSH_PG_COST_CREATES'] ?? 20);
const body = (c: number) => `MARK${c}\n${'f'.repeat(4000)}\n`;

/** Nanoseconds on a CPU of every process named `postgres`, by pid. */
function serverNs(): Map<string, number> {
  const out = new Map<string, number>();
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() !== 'postgres') continue;
      out.set(pid, Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]));
    } catch {
      // The process ended between the listing and the read.
    }
  }
  return out;
}

const spent = (before: Map<string, number>, after: Map<string, number>) =>
  [...after].reduce((sum, [pid, ns]) => sum + ns - (before.get(pid) ?? 0), 0);

const admin = new pg.Client({ connectionString: url });
await admin.connect();
const lsn = async () => BigInt((await admin.query(`SELECT pg_current_wal_lsn() - '0/0' AS b`)).rows[0].b as string);
/** Rows inserted + updated + deleted in `schema`'s tables so far (the statistics lag ~1 s). */
async function rowsTouched(schema: string): Promise<number> {
  await new Promise((r) => setTimeout(r, 1200));
  const r = await admin.query(
    `SELECT coalesce(sum(n_tup_ins + n_tup_upd + n_tup_del), 0)::bigint AS n FROM pg_stat_user_tables WHERE schemaname = $1`,
    [schema],
  );
  return Number(r.rows[0].n);
}

type Create = (path: string, text: string) => Promise<string>;
const handlers: Record<string, (schema: string) => Promise<{ create: Create; close(): Promise<void> }>> = {
  ours: async (schema) => {
    const h = await RaboshMemoryToolHandler.open(`${url}${url.includes('?') ? '&' : '?'}schema=${schema}`);
    return { create: async (path, file_text) => (await h.execute({ command: 'create', path, file_text })).text, close: () => h.close() };
  },
  'node-postgres': async (schema) => {
    const h = await openPgHandler(url, schema);
    return { create: (path, file_text) => h.create({ command: 'create', path, file_text }), close: () => h.close() };
  },
};

const tag = Date.now().toString(36);
for (let round = 0; round < rounds; round++) {
  for (const [name, open] of Object.entries(handlers)) {
    const schema = `cost_${name.replace('-', '_')}_${tag}_${round}`;
    const h = await open(schema);
    const burst = async (dir: string) =>
      Promise.all(
        Array.from({ length: 64 }, async (_, c) => {
          for (let k = 0; k < perCaller; k++) {
            const answer = await h.create(`/memories/${dir}/c${c}-${k}.md`, body(c));
            if (!answer.startsWith('File created')) throw new Error(answer);
          }
        }),
      );
    await burst('warm'); // every pooled connection open, the tables' first pages made
    const rows0 = await rowsTouched(schema);
    const [cpu0, wal0, t0] = [serverNs(), await lsn(), performance.now()];
    await burst('timed');
    const seconds = (performance.now() - t0) / 1000;
    const [cpu1, wal1] = [serverNs(), await lsn()];
    const rows1 = await rowsTouched(schema);
    await h.close();
    const n = 64 * perCaller;
    console.log(
      JSON.stringify({
        round,
        handler: name,
        creates_per_s: Math.round(n / seconds),
        server_cpu_us_per_create: Math.round(spent(cpu0, cpu1) / n / 1000),
        wal_bytes_per_create: Number((wal1 - wal0) / BigInt(n)),
        rows_touched_per_create: (rows1 - rows0) / n,
      }),
    );
  }
}
await admin.end();
