// Under Bun (the `bun` npm package, pinned), the built package loads and a create/view round trip
// gives the contract's answers. Bun's npm package links its binary in a postinstall step; where
// that step did not run, the binary is still in the platform package it ships as an optional
// dependency, so both places are tried and nothing is downloaded.
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');

function bunBinary(): string {
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

describe('Bun', () => {
  it('loads the built package and round-trips create/view', () => {
    const bun = bunBinary();
    const r = spawnSync(bun, [join(root, '__test__', 'fixtures', 'bun-roundtrip.mjs')], {
      cwd: root,
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.runtime).toMatch(/^bun \d+\.\d+\.\d+/);
    expect(out.created).toEqual({ text: 'File created successfully at: /memories/bun.md', isError: false });
    expect(out.viewed).toEqual({
      text: "Here's the content of /memories/bun.md with line numbers:\n     1\thello from bun\n     2\t",
      isError: false,
    });
    expect(out.listed).toEqual({
      text:
        "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:" +
        '\n15B\t/memories\n15B\t/memories/bun.md',
      isError: false,
    });
  });
});
