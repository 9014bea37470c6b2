// The engine's and the memory crate's Rust suites as static x86_64-unknown-linux-musl binaries,
// run natively one after another against the PostgreSQL server of scripts/with-postgres.mjs.
import { spawn } from 'node:child_process';
import { describe, it } from 'vitest';
import { BOUNDED_ENV, type Run, runRustSuites } from './rust-suites.js';

function runNative(exe: string, args: string[], env: Record<string, string>, timeoutMs: number): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(exe, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? signal, stdout, stderr });
    });
  });
}

describe('Rust suites as static musl binaries', () => {
  it('every test binary of rabosh and rabosh-memory passes', async () => {
    await runRustSuites(
      'x86_64-unknown-linux-musl',
      // rustc links musl binaries with its own self-contained crt and libc (static-pie); musl-gcc
      // as the linker made dynamic PIEs with a static libc that segfault before main. musl-gcc
      // compiles the C dependencies (ring) only.
      { CC_x86_64_unknown_linux_musl: process.env['CC_x86_64_unknown_linux_musl'] ?? 'musl-gcc' },
      (exe) => runNative(exe, ['--test-threads=2'], BOUNDED_ENV, 900_000),
    );
  });
});
