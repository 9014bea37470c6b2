// Runs every test binary of the engine and the memory crate built for another target, one after
// another, and asserts each passes; shared by the Windows (Wine) and musl (native) tests.
import { expect } from 'vitest';
// @ts-expect-error: plain ESM helpers of the build scripts, no type declarations.
import { buildRustTests, summarise } from '../../scripts/targets/rust-tests.mjs';

export interface Run {
  code: number | string | null;
  stdout: string;
  stderr: string;
}

/**
 * Builds the test binaries for `triple` (timed), runs each with `run`, prints a line per binary
 * and asserts every one exited 0 having run at least one test.
 */
export async function runRustSuites(triple: string, buildEnv: Record<string, string>, run: (exe: string, name: string) => Promise<Run>) {
  const built = Date.now();
  const bins: { name: string; exe: string }[] = buildRustTests(triple, buildEnv);
  console.log(`${triple}: ${bins.length} test binaries built in ${((Date.now() - built) / 1000).toFixed(0)} s`);
  expect(bins.length).toBeGreaterThan(30);
  const failures: string[] = [];
  for (const { name, exe } of bins) {
    const started = Date.now();
    const r = await run(exe, name);
    const output = `${r.stdout}\n${r.stderr}`;
    const { passed, failed } = summarise(output);
    const secs = ((Date.now() - started) / 1000).toFixed(0);
    console.log(`${triple} ${name}: ${passed} passed, ${failed} failed, exit ${r.code}, ${secs} s`);
    if (r.code !== 0 || failed > 0 || (passed === 0 && !EMPTY_ELSEWHERE.includes(name)))
      failures.push(`${name} (exit ${r.code}):\n${output.slice(-3000)}`);
  }
  expect(failures, failures.join('\n\n')).toEqual([]);
}

/**
 * Binaries whose tests are all for one OS or the host (rabosh/handles counts /proc/self/fd: Linux
 * only; the PostgreSQL failover test drives a cluster through node on the host).
 */
const EMPTY_ELSEWHERE = ['rabosh/handles', 'rabosh-memory-postgres/postgres_failover'];

/** Budgets for the long property and power-loss tests on an emulated or second target. */
export const BOUNDED_ENV: Record<string, string> = {
  RABOSH_POWERLOSS_RUNS: '2',
  RABOSH_POWERLOSS_BUFFERED_RUNS: '1',
  RABOSH_POWERLOSS_SHARED_RUNS: '2',
};
