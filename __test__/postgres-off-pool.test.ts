// Issue 20: calls on a PostgreSQL store run on the store's own threads, never on Node's libuv
// pool (4 threads), which every fs and dns call of the process shares. With the server made slow
// (a trigger on this test's own memory table sleeping 3 s per row, so other test files sharing
// the server are untouched) and 16 edits plus 8 usage() calls in flight, fs.readFile and
// dns.lookup('localhost') keep their latency. On the old code (calls on the libuv pool) the 4
// pool threads are all asleep in the server and every readFile waits seconds.
import { execFileSync } from 'node:child_process';
import { lookup } from 'node:dns/promises';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { RaboshMemoryToolHandler } from '../index.js';
import { freshPgUrl, pgBaseUrl } from './pg-url.js';

const SLEEP_S = 3;
const IN_FLIGHT = 16;

function psql(sql: string): void {
  const psqlBin = process.env.RABOSH_PG_BIN ? join(process.env.RABOSH_PG_BIN, 'psql') : 'psql';
  execFileSync(psqlBin, [pgBaseUrl(), '-v', 'ON_ERROR_STOP=1', '-q', '-c', sql], { stdio: 'pipe' });
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
      const idle = { readFile: await latency(20, probes.readFile), dnsLookup: await latency(20, probes.dnsLookup) };
      psql(
        `CREATE FUNCTION "${schema}".slow() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(${SLEEP_S}); RETURN NEW; END $$;` +
          ` CREATE TRIGGER slow BEFORE INSERT OR UPDATE ON "${schema}".kv FOR EACH ROW EXECUTE FUNCTION "${schema}".slow();`,
      );
      const started = performance.now();
      const edits = Array.from({ length: IN_FLIGHT }, (_, i) =>
        h
          .execute({ command: 'str_replace', path: `/memories/slow/${i}.md`, old_str: 'a', new_str: 'b' })
          .then((out) => {
            expect(out.isError).toBe(false);
            return performance.now() - started;
          }),
      );
      // Reads too (usage is a read on its own connection): they queue behind nothing here, but
      // on the old code they would wait for a free libuv thread like readFile.
      const usages = Array.from({ length: 8 }, () => h.usage());
      // Give the edits time to reach the server and sit in the trigger.
      await new Promise((r) => setTimeout(r, 300));
      const busy = { readFile: await latency(20, probes.readFile), dnsLookup: await latency(20, probes.dnsLookup) };
      const probedFor = performance.now() - started;
      const took = await Promise.all(edits);
      await Promise.all(usages);
      const figures = { idle, busy, probedForMs: Math.round(probedFor), editMs: { min: Math.round(Math.min(...took)), max: Math.round(Math.max(...took)) } };
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
});
