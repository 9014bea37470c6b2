// A PostgreSQL server restarted ten times, then SIGSTOPped, under one long-lived handle, through
// the public API and Node's thread pool: the first commands after each restart succeed, and with
// the server stopped each command fails within its client_timeout (2 s) with a typed error
// instead of hanging; after SIGCONT the next works. Runs a private server (with-postgres.mjs
// without RABOSH_PG_URL), since restarting the shared one would break the other test files.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const script = fileURLToPath(new URL('../scripts/with-postgres.mjs', import.meta.url));
const fixture = fileURLToPath(new URL('./fixtures/pg-server-faults.mjs', import.meta.url));

it('restarts fail no command, and a stopped server fails commands within client_timeout', () => {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env['RABOSH_PG_URL'];
  const r = spawnSync(process.execPath, [script, process.execPath, fixture], { env, encoding: 'utf8', timeout: 240_000 });
  expect(r.status, r.stderr).toBe(0);
  // No panic, no backtrace, no warning from the native side.
  expect(r.stderr).toBe('');
  const out = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as {
    restarts: string[][];
    stopped: Array<{ command: string; outcome: string; ms: number }>;
    afterCont: string;
  };
  expect(out.restarts).toEqual(Array.from({ length: 10 }, () => ['ok', 'ok', 'ok', 'ok']));
  for (const s of out.stopped) {
    expect(s.outcome, s.command).toMatch(/^BackendUnavailableError RABOSH_PG_TIMEOUT: /);
    // Ended by the 2 s client deadline (generous bounds: a busy machine), not by SIGCONT.
    expect(s.ms, s.command).toBeGreaterThanOrEqual(1_500);
    expect(s.ms, s.command).toBeLessThan(30_000);
  }
  expect(out.stopped.map((s) => s.command)).toEqual(['view', 'create']);
  expect(out.afterCont).toBe('ok');
});
