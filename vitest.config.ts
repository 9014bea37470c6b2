import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  // The app package imports the library by name; in-process tests load both from source, so
  // there is one copy of each class (a child process runs apps/cli/dist against dist/ instead).
  resolve: { alias: [{ find: /^rabosh-memory$/, replacement: resolve(import.meta.dirname, 'index.ts') }] },
  test: {
    include: ['__test__/**/*.test.ts'],
    // The cross-platform runs have their own config (vitest.targets.config.ts).
    exclude: ['**/node_modules/**', '__test__/targets/**'],
    // Crash tests spawn and SIGKILL child processes: separate processes, generous time.
    pool: 'forks',
    setupFiles: ['__test__/cpu-per-file.ts'],
    // Vitest's default, one worker fewer than the cores, runs one file at a time on CI's two
    // cores, and most files spend their time waiting on the child processes they start (CLI, MCP
    // server, npm, PostgreSQL, the benchmark's children). Each file works in directories and
    // schemas of its own, so two run side by side.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // Limits that only a hang reaches. Suites that can hang watch each call themselves (a
    // per-call watchdog names the input); these whole-test limits must not fire on a slow but
    // healthy run, and on a 2-core box shared with other builds a test can take many times its
    // quiet time (docs/investigations/ci-time.md).
    testTimeout: 1_200_000,
    hookTimeout: 900_000,
  },
});
