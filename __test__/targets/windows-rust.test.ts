// The engine's and the memory crate's Rust suites built for x86_64-pc-windows-gnu (mingw-w64)
// and run under Wine, one binary after another; the PostgreSQL runs reach the Linux server
// scripts/with-postgres.mjs started on 127.0.0.1 (RABOSH_PG_URL); its restart, stop and
// continue commands run here, asked for over RABOSH_PG_CONTROL (scripts/targets/pg-control.mjs says why).
import { describe, it } from 'vitest';
// @ts-expect-error: plain ESM helpers of the build scripts, no type declarations.
import { runForeign } from '../../scripts/targets/foreign.mjs';
// @ts-expect-error: as above.
import { startPgControl } from '../../scripts/targets/pg-control.mjs';
import { BOUNDED_ENV, runRustSuites } from './rust-suites.js';

const PASS_ON = ['RABOSH_PG_URL', 'RABOSH_PG_CA', 'RABOSH_PG_LOG'];

describe('Rust suites on Windows x64 under Wine', () => {
  it('every test binary of rabosh and rabosh-memory passes', async () => {
    const env: Record<string, string> = { ...BOUNDED_ENV, RUST_BACKTRACE: '1' };
    for (const k of PASS_ON) if (process.env[k]) env[k] = process.env[k];
    const control = await startPgControl();
    env['RABOSH_PG_CONTROL'] = control.address;
    try {
      await runRustSuites(
        'x86_64-pc-windows-gnu',
        { CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER: process.env['CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER'] ?? 'x86_64-w64-mingw32-gcc' },
        (exe, name) =>
          runForeign('win32-x64', exe, ['--test-threads=2'], { env, timeoutMs: 900_000, tag: `rust-${name.replace('/', '-')}` }),
      );
    } finally {
      await control.close();
    }
  });
});
