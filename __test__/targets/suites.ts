// The repository's own vitest suites that run under each foreign platform's official Node (the
// platforms' native test tools come from scripts/targets/foreign.mjs). Chosen for what differs
// between platforms: the contract strings and the handler (both backends), the path normaliser
// (Windows spellings), one store shared by processes, and crashes (on Windows the kill is
// TerminateProcess). Suites that need the Linux toolchain (packing, the Node-line binaries,
// callgrind, koffi's thread clock) stay native.
export const CROSS_SUITES = [
  '__test__/strings.test.ts',
  '__test__/differential.test.ts',
  '__test__/paths.test.ts',
  '__test__/smoke.test.ts',
  '__test__/lifecycle.test.ts',
  '__test__/shared-store.test.ts',
  '__test__/multi-process.test.ts',
  '__test__/crash.test.ts',
];
