// `rabosh-memory import` and `export` as real processes against real stores: an import → export
// round trip must reproduce the source directory byte for byte and land as one commit, and
// export must refuse what a plain directory cannot hold instead of losing it.
// Both need the handler's whole-scope read and one-commit write (exportMemories/importMemories).
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Rabosh } from '../index.js';
import { cli, json, seed, writeTree } from './cli-harness.js';
import { dirPerTest } from './dir-per-test.js';

const dirs = dirPerTest('rabosh-cli');

/** Every file under `dir` as relative path → bytes. */
function tree(dir: string): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else out.set(relative(dir, p).split('\\').join('/'), readFileSync(p));
    }
  };
  walk(dir);
  return out;
}

describe('import and export', () => {
  // Names and bytes a careless implementation would alter: a BOM, CRLF, no trailing newline, an
  // empty file, a hidden file and directory, node_modules, non-ASCII names, tabs.
  const source: Record<string, string | Buffer> = {
    'memories/readme.md': 'top level\n',
    'memories/notes/crlf.txt': 'windows\r\nline endings\r\n',
    'memories/notes/no-newline.txt': 'no trailing newline',
    'memories/notes/empty.md': '',
    'memories/notes/deep/deeper/deepest.md': 'three levels down\n',
    'memories/.hidden/secret.md': 'dot directory\n',
    'memories/.profile': 'dot file\n',
    'memories/node_modules/pkg.md': 'not a real package\n',
    'memories/ünïcødé/日本語.md': 'ユニコード\n',
    'memories/tabs.tsv': 'a\tb\tc\n',
    'memories/bom.txt': Buffer.from([0xef, 0xbb, 0xbf, 0x68, 0x69, 0x0a]),
  };

  it('import then export reproduces the source directory byte for byte, in one commit', async () => {
    const from = join(dirs.dir, 'from');
    writeTree(from, source);
    const imported = cli('import', from, dirs.store, '--json');
    expect(imported.stderr).toBe('');
    expect(imported.status).toBe(0);
    const files = Object.keys(source).length;
    expect(json(imported).memories).toBe(files);

    const db = await Rabosh.open(dirs.store);
    expect(db.stats().seq).toBe(1); // a fresh store, one import: exactly one commit
    await db.close();

    const to = join(dirs.dir, 'to');
    const exported = cli('export', dirs.store, to, '--json');
    expect(exported.status).toBe(0);
    expect(json(exported).memories).toBe(files);
    const want = tree(from);
    const got = tree(to);
    expect([...got.keys()].sort()).toEqual([...want.keys()].sort());
    for (const [rel, bytes] of want) expect(got.get(rel)!.equals(bytes), rel).toBe(true);
  });

  it('export refuses a memory that is also a directory, naming it', async () => {
    await seed(dirs.store, { '/memories/a': 'file', '/memories/a/b.md': 'child' });
    const r = cli('export', dirs.store, join(dirs.dir, 'to'));
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('/memories/a is both a memory and a directory');
  });

  it('export never writes over an existing non-empty target, and draws no progress bar when piped', async () => {
    await seed(dirs.store, { '/memories/a.md': 'x' });
    const to = join(dirs.dir, 'to');
    writeTree(to, { 'memories/keep.md': 'mine' });
    const r = cli('export', dirs.store, to);
    expect(r.status).toBe(1);
    expect(readFileSync(join(to, 'memories', 'keep.md'), 'utf8')).toBe('mine');
    const ok = cli('export', dirs.store, join(dirs.dir, 'fresh'));
    expect(ok.status).toBe(0);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: an escape code is what it looks for
    expect(ok.stdout + ok.stderr).not.toMatch(/\u001b\[/);
  });
});
