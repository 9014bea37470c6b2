import { defineConfig } from 'vitest/config';

// The cross-platform runs (`npm run test:targets`): each file drives another platform's build
// under its emulator, or checks a build that cannot run here. Run one at a time: each one already
// keeps both cores busy.
export default defineConfig({
  test: {
    include: ['__test__/targets/*.test.ts'],
    pool: 'forks',
    fileParallelism: false,
    testTimeout: 1_800_000,
    hookTimeout: 900_000,
  },
});
