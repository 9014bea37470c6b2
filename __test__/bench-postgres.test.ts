// `npm run bench:postgres` at a tiny size against the real server scripts/with-postgres.mjs
// starts (RABOSH_PG_URL; without it this fails, saying how to run it, like every PostgreSQL
// suite): ours embedded, ours over PostgreSQL and the hand-written node-postgres handler must
// give the same answers to every measured command, and a planted difference must fail the run.
// No timing is asserted.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { pgBaseUrl } from './pg-url.js';

const repo = resolve(import.meta.dirname, '..');
const scratch = mkdtempSync(join(tmpdir(), 'bench-pg-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function bench(name: string, env: Record<string, string> = {}) {
  const out = join(scratch, `${name}.md`);
  const run = spawnSync(process.execPath, ['--import', 'tsx', join(repo, 'bench', 'postgres.ts')], {
    cwd: repo,
    env: {
      ...process.env,
      RABOSH_PG_URL: pgBaseUrl(),
      RABOSH_BENCH_PG_N: '5',
      RABOSH_BENCH_PG_RUNS: '2',
      RABOSH_BENCH_PG_OUT: out,
      ...env,
    },
    encoding: 'utf8',
    timeout: 300_000,
  });
  return { status: run.status, stderr: run.stderr, report: readFileSync(out, 'utf8') };
}

describe('npm run bench:postgres at a tiny size', () => {
  it('measures ours and the node-postgres handler and finds every answer the same', () => {
    const { status, stderr, report } = bench('agree');
    expect(report).toMatch(/All three gave the same \d+ answers in every round/);
    expect(report).toContain('| node-postgres handler |');
    // Two rounds: medians, and each ratio's range over them; the machine and server first.
    expect(report).toContain('median of 2');
    expect(report).toMatch(/\| 64 callers creating in one directory, creates\/s \|.*\| \d+\.\d\d \(\d+\.\d\d–\d+\.\d\d\) \|$/m);
    expect(report.split('\n')[0]).toMatch(/ × \d+, .* · PostgreSQL \d+(\.\d+)? on the same machine \(fsync (on|off)/);
    expect(status, stderr.slice(-2000)).toBe(0);
  }, 360_000);

  it('measures only the one-directory row, with its costs per create, when asked (issue 34)', () => {
    const { status, stderr, report } = bench('burst', { RABOSH_BENCH_PG_ROWS: 'burst' });
    expect(report).toMatch(/All three gave the same \d+ answers in every round/);
    const rows = report.split('\n').filter((l) => /^\| [^r-]/.test(l));
    expect(rows.map((l) => l.split(' | ')[0])).toEqual([
      '| 64 callers creating in one directory, creates/s',
      '| client CPU per create, ms',
      '| server CPU per create, ms',
      '| WAL per create, bytes',
    ]);
    // Each round says which of the two went first (they alternate) and the ratio of its own.
    expect(stderr).toMatch(/round 2 \(node-postgres first\): ours \d+\/s, node-postgres \d+\/s, ratio \d+\.\d\d/);
    expect(status, stderr.slice(-2000)).toBe(0);
  }, 360_000);

  it('refuses a row filter it does not know', () => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', join(repo, 'bench', 'postgres.ts')], {
      cwd: repo,
      env: { ...process.env, RABOSH_PG_URL: pgBaseUrl(), RABOSH_BENCH_PG_ROWS: 'creat' },
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(run.stderr).toContain('RABOSH_BENCH_PG_ROWS: only "burst" is known');
    expect(run.status).not.toBe(0);
  }, 180_000);

  it('exits non-zero when the node-postgres handler answers differently', () => {
    const { status, report } = bench('broken', { RABOSH_BENCH_SABOTAGE: 'node-postgres' });
    expect(report).toContain('- node-postgres handler: answer 1 of');
    expect(status).toBe(1);
  }, 360_000);
});
