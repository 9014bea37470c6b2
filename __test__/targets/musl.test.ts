// linux-x64-musl: loaded by musl's own dynamic loader on this Debian machine. Not by a musl Node
// or Bun (none runs here; scripts/targets/musl-host.mjs says why) but by a musl-gcc program that
// stubs the Node-API and dlopen()s the addon with every symbol bound at load. That proves the
// addon links against musl's libc alone and finds every libc function it uses in Debian's musl;
// it does not run the addon's JS-facing code, which is the GitHub matrix's (node:alpine).
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: plain ESM helpers of the build scripts, no type declarations.
import { addonPath } from '../../scripts/build-targets.mjs';
// @ts-expect-error: as above.
import { hostImports, interpreter, neededLibraries, runMuslHost } from '../../scripts/targets/musl-host.mjs';

const cache = join(fileURLToPath(new URL('../..', import.meta.url)), 'node_modules', '.cache', 'musl-host');
const musl = addonPath('linux-x64-musl');
const glibc = addonPath('linux-x64-gnu');

describe('linux-x64-musl addon under musl', () => {
  it('needs only musl libc and loads with every import bound, exporting napi_register_module_v1', () => {
    expect(neededLibraries(musl)).toEqual(['libc.so']);
    const stubs = hostImports(musl);
    expect(stubs).toContain('napi_create_function');
    const run = runMuslHost(musl, join(cache, 'musl'));
    expect(interpreter(join(cache, 'musl', 'host'))).toBe('/lib/ld-musl-x86_64.so.1');
    expect(run.stderr).toBe('');
    expect(run.result).toEqual({ loaded: true, entry: 'napi_register_module_v1', stubs: stubs.length, called: [] });
    expect(run.status).toBe(0);
  });

  it('is refused when one Node-API function is missing: the loader binds everything at load', () => {
    const [dropped, ...rest] = hostImports(musl);
    const run = runMuslHost(musl, join(cache, 'musl-short'), rest);
    expect(run.result.loaded).toBe(false);
    expect(run.result.error).toContain(dropped);
    expect(run.status).toBe(1);
  });

  it('tells the glibc build apart: musl refuses to load it', () => {
    expect(neededLibraries(glibc)).toContain('libc.so.6');
    const run = runMuslHost(glibc, join(cache, 'glibc'), hostImports(musl));
    expect(run.result.loaded).toBe(false);
    expect(run.result.error).toMatch(/Error loading shared library (libc\.so\.6|ld-linux-x86-64\.so\.2|libgcc_s\.so\.1)/);
    expect(run.status).toBe(1);
  });
});
