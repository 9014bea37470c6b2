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
    testTimeout: 300_000,
    hookTimeout: 120_000,
  },
});
