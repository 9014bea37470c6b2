import { defineConfig } from 'vitest/config';

export default defineConfig({
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
