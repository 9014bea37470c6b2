import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['__test__/**/*.test.ts'],
    // Crash tests spawn and SIGKILL child processes: separate processes, generous time.
    pool: 'forks',
    testTimeout: 300_000,
    hookTimeout: 120_000,
  },
});
