import { defineConfig } from 'vitest/config';

// The cross-platform runs (`npm run test:targets`): each file drives another platform's build
// under its emulator, or checks a build that cannot run here. Run one at a time: each one already
// keeps both cores busy.
export default defineConfig({
  test: {
    include: ['__test__/targets/*.test.ts'],
    // The engine's and memory crate's Rust suites built for Windows (under Wine) and musl take
    // about 25 more minutes on two cores than CI has: `npm run test:targets:rust` runs them.
    exclude: process.env['RABOSH_TARGETS_RUST'] === '1' ? [] : ['__test__/targets/*-rust.test.ts'],
    pool: 'forks',
    fileParallelism: false,
    testTimeout: 1_800_000,
    hookTimeout: 900_000,
  },
});
