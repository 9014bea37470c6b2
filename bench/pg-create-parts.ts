// What a create's commit costs the server, part by part (issue 34): the fused statement ours
// sends for a create in one directory (`crates/rabosh-memory-postgres/src/sql.rs`, `Q::Fused`
// with its settings guard), then the same without the change feed's row, without the summary
// rows, and under READ COMMITTED, beside the node-postgres handler's INSERT. 8 connections
// each run their share of the creates; per create: the server's CPU (every process of the
// cluster, from /proc) and WAL bytes. Run through
// `node scripts/with-postgres.mjs "tsx bench/pg-create-parts.ts"`.
import pg from 'pg';
import { RaboshMemoryToolHandler } from '../index.js';
import { serverCpuMs } from './server-cpu.js';

const url = process.env['RABOSH_PG_URL'];
if (!url) throw new Error('RABOSH_PG_URL is not set; run through scripts/with-postgres.mjs');
const CREATES = Number(process.env['RABOSH_BENCH_PARTS_N'] ?? 2000);
const ROUNDS = Number(process.env['RABOSH_BENCH_PARTS_ROUNDS'] ?? 3);
const CONNECTIONS = 8;
const body = `${'f'.repeat(4095)}\n`;

async function counters(c: pg.Client): Promise<{ cpu: number; wal: number }> {
  const r = (await c.query<{ pid: number; lsn: string }>('SELECT pg_backend_pid() AS pid, pg_current_wal_lsn()::TEXT AS lsn')).rows[0]!;
  const [hi, lo] = r.lsn.split('/').map((x) => Number.parseInt(x, 16));
  return { cpu: serverCpuMs(r.pid) ?? Number.NaN, wal: hi! * 2 ** 32 + lo! };
}

/** The statement of one variant in schema `s`, and the parameters of create `i`. */
interface Variant {
  name: string;
  isolation: 'SERIALIZABLE' | 'READ COMMITTED';
  sql: (s: string) => string;
  params: (i: number, tag: string) => unknown[];
}

const key = (tag: string, i: number) => Buffer.from(`m::${tag}/c${i}.md`);
const meta = Buffer.alloc(40, 7);
const settingsRange = "k >= '\\x633a'::BYTEA AND k < '\\x633b'::BYTEA";

// Scalar parameters where ours sends one-element arrays: node-postgres sends an array of
// buffers as hex text, which would charge the server a parse ours (binary arrays) never costs.
function ours(feed: boolean, dirs: boolean, checks = true): (s: string) => string {
  return (s) => {
    const t = `"${s}".kv`;
    const mark = `(SELECT 1 / (1 - count(*)) FROM "${s}".rabosh_schema WHERE id = 2) = 1`;
    const guard = `(SELECT ln(CASE WHEN (SELECT m FROM ${t} WHERE k = $1 AND ${settingsRange}) IS NOT DISTINCT FROM $2::BYTEA THEN 1 ELSE 0 END::FLOAT8)) = 0`;
    const where = checks ? ` WHERE ${mark} AND ${guard}` : ' WHERE $1::BYTEA IS NOT NULL OR $2::BYTEA IS NULL';
    const parts = [`new AS (INSERT INTO ${t} (k, v, m) SELECT $3::BYTEA, $4::BYTEA, $5::BYTEA${where})`];
    if (feed)
      parts.push(
        `changed AS (INSERT INTO "${s}".feed AS t (k, s, x, t) VALUES ($14::BYTEA, $15::BYTEA, pg_current_xact_id()::TEXT::INT8, $16::INT2) ON CONFLICT (k) DO UPDATE SET s = excluded.s, x = excluded.x, t = excluded.t)`,
      );
    const dirsAdd = `INSERT INTO "${s}".dirs AS t (d, r, f, s, n, b, vn, vb) VALUES ($6::BYTEA, $8::BYTEA, true, 0::INT2, $10::INT8, $11::INT8, $12::INT8, $13::INT8), ($7::BYTEA, $9::BYTEA, true, 0::INT2, $10::INT8, $11::INT8, $12::INT8, $13::INT8) ON CONFLICT (d, r, f, s) DO UPDATE SET n = t.n + excluded.n, b = t.b + excluded.b, vn = t.vn + excluded.vn, vb = t.vb + excluded.vb`;
    // Every variant keeps all 16 parameters referenced, so one parameter list serves them all.
    const unused = `SELECT $6::BYTEA, $7::BYTEA, $8::BYTEA, $9::BYTEA, $10::INT8, $11::INT8, $12::INT8, $13::INT8, $14::BYTEA, $15::BYTEA, $16::INT2`;
    if (!dirs) return `WITH ${parts.join(', ')} ${unused}`;
    if (!feed) parts.push(`unused AS (SELECT $14::BYTEA, $15::BYTEA, $16::INT2)`);
    return `WITH ${parts.join(', ')} ${dirsAdd}`;
  };
}

function oursParams(i: number, tag: string): unknown[] {
  const k = key(tag, i);
  const size = body.length;
  return [
    Buffer.from('c:history'),
    null,
    k,
    Buffer.from(body),
    meta,
    Buffer.from('m::/'),
    Buffer.from(`m::${tag}/`),
    Buffer.from(`${tag}/c${i}.md`),
    Buffer.from(`c${i}.md`),
    1,
    size,
    1,
    size,
    k,
    Buffer.from('m::'),
    1,
  ];
}

const variants: Variant[] = [
  {
    name: 'node-postgres handler: INSERT … ON CONFLICT DO NOTHING',
    isolation: 'READ COMMITTED',
    sql: (s) => `INSERT INTO "${s}".memories (path, size, content) VALUES ($1, $2, $3) ON CONFLICT (path) DO NOTHING`,
    params: (i, tag) => [`/memories/${tag}/c${i}.md`, body.length, body],
  },
  { name: 'ours: the fused create', isolation: 'SERIALIZABLE', sql: ours(true, true), params: oursParams },
  { name: 'ours without the feed row', isolation: 'SERIALIZABLE', sql: ours(false, true), params: oursParams },
  { name: 'ours without feed and summary rows', isolation: 'SERIALIZABLE', sql: ours(false, false), params: oursParams },
  {
    name: 'ours without feed, summary rows, mark and guard',
    isolation: 'SERIALIZABLE',
    sql: ours(false, false, false),
    params: oursParams,
  },
  { name: 'ours under READ COMMITTED', isolation: 'READ COMMITTED', sql: ours(true, true), params: oursParams },
];

const schema = `parts_${process.pid}`;
const h = await RaboshMemoryToolHandler.open(`${url}${url.includes('?') ? '&' : '?'}schema=${schema}`);
await h.execute({ command: 'create', path: '/memories/x.md', file_text: 'x' });
await h.close();
const admin = new pg.Client({ connectionString: url });
await admin.connect();
await admin.query(`CREATE TABLE "${schema}".memories (path text COLLATE "C" PRIMARY KEY, size integer NOT NULL, content text NOT NULL)`);
await admin.query(`CREATE INDEX ON "${schema}".memories (path) INCLUDE (size)`);
const clients = await Promise.all(
  Array.from({ length: CONNECTIONS }, async () => {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    return c;
  }),
);
const results = new Map<string, { cpu: number[]; wal: number[] }>();
for (let round = 0; round < ROUNDS; round++) {
  for (const v of variants) {
    const tag = `r${round}_${v.name.replace(/\W+/g, '_')}`;
    for (const c of clients) await c.query(`SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL ${v.isolation}`);
    const text = v.sql(schema);
    const before = await counters(admin);
    let next = 0;
    await Promise.all(
      clients.map(async (c, n) => {
        while (next < CREATES) {
          const i = next++;
          await c.query({ name: `${tag}_${n}`.slice(0, 60), text, values: v.params(i, tag) });
        }
      }),
    );
    const after = await counters(admin);
    const r = results.get(v.name) ?? { cpu: [], wal: [] };
    r.cpu.push((after.cpu - before.cpu) / CREATES);
    r.wal.push((after.wal - before.wal) / CREATES);
    results.set(v.name, r);
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
console.log(
  `| ${CREATES} creates × ${ROUNDS} rounds, ${CONNECTIONS} connections | server CPU per create, ms (median, range) | WAL per create, bytes |`,
);
console.log('|---|---|---|');
for (const [name, r] of results)
  console.log(
    `| ${name} | ${median(r.cpu).toFixed(3)} (${Math.min(...r.cpu).toFixed(3)}–${Math.max(...r.cpu).toFixed(3)}) | ${median(r.wal).toFixed(0)} |`,
  );
for (const c of clients) await c.end();
await admin.query(`DROP SCHEMA "${schema}" CASCADE`);
await admin.end();
