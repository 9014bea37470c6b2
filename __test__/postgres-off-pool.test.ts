// Issue 20: calls on a PostgreSQL store run on the store's own threads, never on Node's libuv
// pool (4 threads), which every fs and dns call of the process shares. With the server made slow
// (a trigger on this test's own memory table sleeping 3 s per row, so other test files sharing
// the server are untouched) and 16 edits plus 8 usage() calls in flight, fs.readFile and
// dns.lookup('localhost') keep their latency. On the old code (calls on the libuv pool) the 4
// pool threads are all asleep in the server and every readFile waits seconds.
// The history and host-edit calls (versions, version, get, put, at, historyUsage, pruneHistory)
// and the sync's calls go the same way: the second case holds this store's table locked for 3 s
// while 24 of them wait on it. Shown failing on their old code (history.rs and sync_base.rs on
// the libuv pool): readFile waited for the lock, ~3 s.
import { execFileSync, spawn } from 'node:child_process';
import { lookup } from 'node:dns/promises';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { Rabosh, RaboshMemoryToolHandler } from '../index.js';
import { NativeMemories } from '../src/native.js';
import { storeNative } from '../src/store.js';
import { freshPgUrl, pgBaseUrl } from './pg-url.js';

const SLEEP_S = 3;
const IN_FLIGHT = 16;

const psqlBin = process.env.RABOSH_PG_BIN ? join(process.env.RABOSH_PG_BIN, 'psql') : 'psql';

function psql(sql: string): void {
  execFileSync(psqlBin, [pgBaseUrl(), '-v', 'ON_ERROR_STOP=1', '-q', '-c', sql], { stdio: 'pipe' });
}

/**
 * Holds `table` locked against reads and writes for `seconds` from a psql session of its own;
 * resolves once the lock is held, with a promise of the session's end.
 */
async function lockFor(table: string, seconds: number): Promise<{ released: Promise<void> }> {
  const child = spawn(psqlBin, [pgBaseUrl(), '-v', 'ON_ERROR_STOP=1'], { stdio: ['pipe', 'pipe', 'pipe'] });
  const released = new Promise<void>((resolve, reject) =>
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`psql holding the lock exited ${code}`)))),
  );
  const held = new Promise<void>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      // psql prints each statement's tag as it completes: LOCK TABLE comes once the lock is held.
      if (out.includes('LOCK TABLE')) resolve();
    });
    released.catch(reject);
  });
  child.stdin.end(`BEGIN;\nLOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE;\nSELECT pg_sleep(${seconds});\nCOMMIT;\n`);
  await held;
  return { released };
}

/** Probes' latencies while `calls` (each resolving to when it settled) are in flight. */
async function probedWhile(started: number, calls: Promise<number>[]) {
  // Give the calls time to reach the server and wait there.
  await new Promise((r) => setTimeout(r, 300));
  const busy = { readFile: await latency(20, probes.readFile), dnsLookup: await latency(20, probes.dnsLookup) };
  const probedFor = performance.now() - started;
  const took = await Promise.all(calls);
  return { busy, probedFor, took };
}

async function idleLatency() {
  return { readFile: await latency(20, probes.readFile), dnsLookup: await latency(20, probes.dnsLookup) };
}

/** Latencies in ms of `n` sequential runs of `f`: p50 and max. */
async function latency(n: number, f: () => Promise<unknown>): Promise<{ p50: number; max: number }> {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await f();
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  return { p50: Number(times[Math.floor(n / 2)]!.toFixed(2)), max: Number(times[n - 1]!.toFixed(2)) };
}

const self = fileURLToPath(import.meta.url);
const probes = {
  readFile: () => readFile(self),
  dnsLookup: () => lookup('localhost'),
};

describe('PostgreSQL off the libuv pool', () => {
  it(`with ${IN_FLIGHT} calls waiting ${SLEEP_S} s each on the server, fs.readFile and dns.lookup keep their latency`, async () => {
    const url = `${freshPgUrl('offpool')}&pool_size=${IN_FLIGHT + 8}`;
    const schema = new URL(url).searchParams.get('schema')!;
    const h = await RaboshMemoryToolHandler.open(url);
    try {
      // One memory per call, edited in place to the same size: each transaction writes its own
      // row and no summary row, so the calls never conflict (and never retry) with each other.
      for (let i = 0; i < IN_FLIGHT; i++) {
        await h.execute({ command: 'create', path: `/memories/slow/${i}.md`, file_text: 'a' });
      }
      const idle = await idleLatency();
      psql(
        `CREATE FUNCTION "${schema}".slow() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(${SLEEP_S}); RETURN NEW; END $$;` +
          ` CREATE TRIGGER slow BEFORE INSERT OR UPDATE ON "${schema}".kv FOR EACH ROW EXECUTE FUNCTION "${schema}".slow();`,
      );
      const started = performance.now();
      const edits = Array.from({ length: IN_FLIGHT }, (_, i) =>
        h.execute({ command: 'str_replace', path: `/memories/slow/${i}.md`, old_str: 'a', new_str: 'b' }).then((out) => {
          expect(out.isError).toBe(false);
          return performance.now() - started;
        }),
      );
      // Reads too (usage is a read on its own connection): they queue behind nothing here, but
      // on the old code they would wait for a free libuv thread like readFile.
      const usages = Array.from({ length: 8 }, () => h.usage());
      const { busy, probedFor, took } = await probedWhile(started, edits);
      await Promise.all(usages);
      const figures = {
        idle,
        busy,
        probedForMs: Math.round(probedFor),
        editMs: { min: Math.round(Math.min(...took)), max: Math.round(Math.max(...took)) },
      };
      console.log(`postgres-off-pool figures: ${JSON.stringify(figures)}`);
      // Generous bound: a readFile behind four 3 s calls would take seconds (24 s on the old
      // code, where the calls held the libuv pool).
      expect(busy.readFile.max).toBeLessThan(1000);
      expect(busy.dnsLookup.max).toBeLessThan(1000);
      // The server really was slow while the probes ran: every edit waited for its sleep, and
      // the probes were done before the first edit was.
      expect(Math.min(...took)).toBeGreaterThanOrEqual(SLEEP_S * 1000 * 0.9);
      expect(probedFor).toBeLessThan(Math.min(...took));
      expect((await h.usage()).memories).toBe(IN_FLIGHT);
    } finally {
      await h.close();
    }
  });

  it(`with ${IN_FLIGHT + 8} history, host-edit and sync calls waiting ${SLEEP_S} s on a locked table, fs.readFile and dns.lookup keep their latency`, async () => {
    const url = `${freshPgUrl('offpoolh')}&pool_size=${IN_FLIGHT + 16}`;
    const schema = new URL(url).searchParams.get('schema')!;
    const db = await Rabosh.open(url, { history: true });
    const h = new RaboshMemoryToolHandler(db);
    // The sync's calls, on a native handler as src/sync/engine.ts makes one.
    const sync = new NativeMemories(storeNative(db), {
      scope: 'default',
      maxMemoryBytes: 1 << 20,
      createOverwrites: false,
      trackAccess: false,
      listingIndex: false,
    });
    try {
      await h.execute({ command: 'create', path: '/memories/h.md', file_text: 'one' });
      const [first] = (await h.versions()).data;
      const when = new Date();
      const idle = await idleLatency();
      const { released } = await lockFor(`"${schema}".kv`, SLEEP_S);
      const started = performance.now();
      const settled = (p: Promise<unknown>) => p.then(() => performance.now() - started);
      const each: (() => Promise<unknown>)[] = [
        () => h.versions(),
        () => h.version(first!.id),
        () => h.get('/memories/h.md'),
        () => h.historyUsage(),
        () => h.at(when),
        () => h.pruneHistory(),
      ];
      const calls = Array.from({ length: IN_FLIGHT }, (_, i) => settled(each[i % each.length]!()));
      // Host writes, each to a memory of its own (no conflict retries between them).
      for (let i = 0; i < 4; i++) calls.push(settled(h.put(`/memories/put/${i}.md`, `p${i}`)));
      for (let i = 0; i < 2; i++) calls.push(settled(sync.syncEntries('/memories')));
      for (let i = 0; i < 2; i++) calls.push(settled(sync.syncBases('')));
      const { busy, probedFor, took } = await probedWhile(started, calls);
      await released;
      const figures = {
        idle,
        busy,
        probedForMs: Math.round(probedFor),
        callMs: { min: Math.round(Math.min(...took)), max: Math.round(Math.max(...took)) },
      };
      console.log(`postgres-off-pool history figures: ${JSON.stringify(figures)}`);
      expect(busy.readFile.max).toBeLessThan(1000);
      expect(busy.dnsLookup.max).toBeLessThan(1000);
      expect(Math.min(...took)).toBeGreaterThanOrEqual(SLEEP_S * 1000 * 0.8);
      expect(probedFor).toBeLessThan(Math.min(...took));
      expect((await h.versions({ pathPrefix: '/memories/put' })).data).toHaveLength(4);
    } finally {
      await db.close();
    }
  });
});
