// macOS x64 and arm64: linked on this Linux machine by `npm run build:targets` (zig, with the
// framework name stubs scripts/build-targets.mjs explains) but NOT run here; nothing here can run
// a Mach-O. What is checked is what dyld would check first: a 64-bit Mach-O library for the right
// CPU, loading only libraries a Mac has, exporting the napi entry point. Running them is the
// GitHub matrix's (macos-latest, Rosetta for x64).
import { describe, expect, it } from 'vitest';
// @ts-expect-error: plain ESM helpers of the build scripts, no type declarations.
import { addonPath } from '../../scripts/build-targets.mjs';
// @ts-expect-error: as above.
import { inspectMachO } from '../../scripts/macho.mjs';

const SYSTEM = /^(\/usr\/lib\/[^/]+\.dylib|\/System\/Library\/Frameworks\/[A-Za-z]+\.framework\/Versions\/A\/[A-Za-z]+)$/;

describe.each([
  { platform: 'darwin-x64', cpu: 'x86_64' },
  { platform: 'darwin-arm64', cpu: 'arm64' },
])('$platform addon', ({ platform, cpu }) => {
  it('is a Mach-O library for its CPU that exports napi_register_module_v1 and loads only system libraries', () => {
    const m = inspectMachO(addonPath(platform));
    expect(m.cpu).toBe(cpu);
    expect(['dylib', 'bundle']).toContain(m.fileType);
    expect(m.exports).toContain('_napi_register_module_v1');
    expect(m.dylibs).toContain('/usr/lib/libSystem.B.dylib');
    for (const lib of m.dylibs) expect(lib).toMatch(SYSTEM);
  });
});
