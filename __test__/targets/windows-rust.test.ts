// The engine's and the memory crate's Rust suites built for x86_64-pc-windows-gnu (mingw-w64)
// and run under Wine, one binary after another; the PostgreSQL runs reach the Linux server
// scripts/with-postgres.mjs started on 127.0.0.1 (RABOSH_PG_URL).
import { describe, it } from 'vitest';
// @ts-expect-error: plain ESM helpers of the build scripts, no type declarations.
import { runForeign } from '../../scripts/targets/foreign.mjs';
import { BOUNDED_ENV, runRustSuites } from './rust-suites.js';

const PASS_ON = ['RABOSH_PG_URL', 'RABOSH_PG_RESTART', 'RABOSH_PG_CA'];

describe('Rust suites on Windows x64 under Wine', () => {
  it('every test binary of rabosh and rabosh-memory passes', async () => {
    const env: Record<string, string> = { ...BOUNDED_ENV, RUST_BACKTRACE: '1' };
    for (const k of PASS_ON) if (process.env[k]) env[k] = process.env[k];
    await runRustSuites(
      'x86_64-pc-windows-gnu',
      { CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER: process.env['CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER'] ?? 'x86_64-w64-mingw32-gcc' },
      (exe, name) =>
        runForeign('win32-x64', exe, ['--test-threads=2'], { env, timeoutMs: 900_000, tag: `rust-${name.replace('/', '-')}` }),
    );
  });
});
