// Runs CROSS_SUITES with the repository's own vitest under a foreign platform's official Node and
// returns vitest's summary; the caller asserts on it.
import { expect } from 'vitest';
// @ts-expect-error: plain ESM helpers of the build scripts, no type declarations.
import { foreignNode, foreignTools, placeAddon, runForeign } from '../../scripts/targets/foreign.mjs';
import { CROSS_SUITES } from './suites.js';

export async function runSuitesUnder(platform: 'win32-x64' | 'linux-arm64', extraEnv: Record<string, string> = {}) {
  foreignTools(platform);
  placeAddon(platform);
  const node = foreignNode(platform, 22);
  const env: Record<string, string> = { CI: 'true', ...extraEnv };
  if (process.env['RABOSH_PG_URL']) env['RABOSH_PG_URL'] = process.env['RABOSH_PG_URL'];
  // Under qemu every machine instruction V8's optimising compilers emit is translated again
  // before it runs, and vitest's main process (module graph, transforms, reporting) runs little
  // of its code often enough to repay that: without those tiers the run cost about a fifth less
  // CPU. Vitest starts its workers without these flags, so the suites themselves run as before;
  // the addon is this platform's optimised build as ever.
  const v8 = platform === 'linux-arm64' ? ['--no-opt', '--no-maglev'] : [];
  const run = await runForeign(
    platform,
    node,
    // Two workers: an emulated run is the last thing `npm test` waits for, and with one worker it
    // left a core idle once everything else had finished (docs/investigations/ci-time.md).
    [...v8, 'node_modules/vitest/vitest.mjs', 'run', '--config', 'vitest.config.ts', '--maxWorkers', '2', '--no-color', ...CROSS_SUITES],
    { env, timeoutMs: 1_500_000, tag: `suites-${platform}` },
  );
  const output = `${run.stdout}\n${run.stderr}`;
  // vitest's closing lines, e.g. " Test Files  8 passed (8)" and "      Tests  120 passed (120)".
  const files = /Test Files\s+(.*)\n/.exec(output)?.[1] ?? '';
  const tests = /\n\s+Tests\s+(.*)\n/.exec(output)?.[1] ?? '';
  console.log(`${platform}: files ${files}; tests ${tests}`);
  if (run.code !== 0) console.log(output.slice(-20_000));
  expect(run.code, output.slice(-4000)).toBe(0);
  expect(files).toMatch(new RegExp(`^${CROSS_SUITES.length} passed`));
  return { files, tests, output };
}
