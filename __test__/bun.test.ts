// Under Bun (the `bun` npm package, pinned), the built package loads and a create/view round trip
// gives the contract's answers.
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { bunBinary } from './bun-binary.js';

const root = join(import.meta.dirname, '..');

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
