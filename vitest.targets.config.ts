import { defineConfig } from 'vitest/config';

// The cross-platform runs (`npm run test:targets`): each file drives another platform's build
// under its emulator, or checks a build that cannot run here. The files run side by side: an
// emulated Node runs its suites in one vitest worker (it sees two cores, keeps one), so qemu's and
// Wine's runs each keep about one core busy, and the rehearsal mostly waits on npm. Each file
// works in directories of its own (its platform's addon, its own runs/ and app folders).
export default defineConfig({
  test: {
    include: ['__test__/targets/*.test.ts'],
    // The engine's and memory crate's Rust suites built for Windows (under Wine) and musl take
    // about 25 more minutes on two cores than CI has: `npm run test:targets:rust` runs them.
    exclude: process.env['RABOSH_TARGETS_RUST'] === '1' ? [] : ['__test__/targets/*-rust.test.ts'],
    pool: 'forks',
    setupFiles: ['__test__/cpu-per-file.ts'],
    maxWorkers: 3,
    testTimeout: 1_800_000,
    hookTimeout: 900_000,
  },
});
