// The Bun binary of the pinned `bun` devDependency. Bun's npm package links its binary in a
// postinstall step; where that step did not run, the binary is still in the platform package it
// ships as an optional dependency, so both places are tried and nothing is downloaded.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');

export function bunBinary(): string {
  const arch = process.arch === 'arm64' ? 'aarch64' : process.arch;
  const platform = process.platform === 'win32' ? 'windows' : process.platform;
  const exe = process.platform === 'win32' ? 'bun.exe' : 'bun';
  const candidates = [
    join(root, 'node_modules', 'bun', 'bin', 'bun.exe'),
    ...['', '-baseline', '-musl', '-musl-baseline'].map((flavour) =>
      join(root, 'node_modules', '@oven', `bun-${platform}-${arch}${flavour}`, 'bin', exe),
    ),
  ];
  const tried: string[] = [];
  for (const candidate of candidates) {
    if (!existsSync(candidate)) continue;
    const r = spawnSync(candidate, ['--version'], { encoding: 'utf8' });
    if (r.status === 0) return candidate;
    tried.push(`${candidate}: ${r.error?.message ?? r.stderr}`);
  }
  throw new Error(`no runnable bun binary in node_modules (is the bun devDependency installed?)\n${tried.join('\n')}`);
}
