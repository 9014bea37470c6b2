// What import reads and export writes, when the file system is not what it seemed: a source file
// swapped between the walk and the read (for a link to a file outside the tree, a FIFO, another
// file) is refused and nothing outside is read, nor does the import hang; a file name that is not
// UTF-8 and a target export cannot write are said in words, naming the file.
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  closeSync,
  constants,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  renameSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Progress } from '../apps/cli/src/progress.js';
import { readTree } from '../apps/cli/src/tree.js';
import { cli, seed, writeTree } from './cli-harness.js';
import { makeTempDir, removeDir } from './tmp-dir.js';

const posix = process.platform !== 'win32';
const none: Progress = { tick() {}, stop() {} };

let tmp: string;
let fifo: string | null;
beforeEach(() => {
  tmp = makeTempDir('rabosh-cli-sources');
  fifo = null;
});
afterEach(() => {
  // A reader that did block on the FIFO (the fault this file tests) is let go: a writer opens it.
  if (fifo !== null) {
    try {
      closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK));
    } catch {
      // No reader waits on it.
    }
  }
  removeDir(tmp);
});

/** Reads `<tmp>/from` with `swap` run between the walk and the read (when progress starts). */
function readSwapped(swap: () => void): Promise<unknown> {
  return readTree(join(tmp, 'from'), 1_048_576, () => {
    swap();
    return none;
  });
}

describe.runIf(posix)('a source file swapped between the walk and the read', () => {
  const a = () => join(tmp, 'from', 'memories', 'a.md');
  beforeEach(() => {
    writeTree(join(tmp, 'from'), { 'memories/a.md': 'inside' });
    writeFileSync(join(tmp, 'outside.txt'), 'a secret outside the tree');
  });

  it('for a link to a file outside the tree: refused, the outside file not read', async () => {
    const err = await readSwapped(() => {
      unlinkSync(a());
      symlinkSync(join(tmp, 'outside.txt'), a());
    }).catch((e: unknown) => e);
    expect((err as Error).message).toBe(
      `cannot import ${a()}: it was replaced by a symbolic link after it was listed (links are not followed)`,
    );
  });

  it('for a FIFO: refused at once, not waited on', { timeout: 20_000 }, async () => {
    const err = await readSwapped(() => {
      unlinkSync(a());
      fifo = a();
      expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    }).catch((e: unknown) => e);
    expect((err as Error).message).toBe(
      `cannot import ${a()}: it was replaced by something that is not a regular file after it was listed`,
    );
  });

  it('for another file: refused', async () => {
    writeFileSync(join(tmp, 'other.md'), 'another');
    const err = await readSwapped(() => renameSync(join(tmp, 'other.md'), a())).catch((e: unknown) => e);
    expect((err as Error).message).toBe(`cannot import ${a()}: it was replaced by another file after it was listed`);
  });

  it('left alone, it is read', async () => {
    const { files } = (await readSwapped(() => {})) as { files: Array<{ path: string; content: string }> };
    expect(files).toEqual([{ path: '/memories/a.md', content: 'inside' }]);
  });
});

describe.runIf(posix)('said in words, naming the file', () => {
  it('a file name that is not UTF-8', () => {
    const from = join(tmp, 'from');
    writeTree(from, { 'memories/a.md': 'x' });
    // f<0xff>.md: a name Linux allows and no memory path can hold.
    writeFileSync(Buffer.concat([Buffer.from(`${join(from, 'memories')}/f`), Buffer.from([0xff]), Buffer.from('.md')]), 'y');
    const store = join(tmp, 'store');
    const r = cli('import', from, store);
    expect(r.stderr).toBe(
      `rabosh-memory: cannot import ${join(from, 'memories', 'f\uFFFD.md')}: its file name is not valid UTF-8 (memory paths are text); rename it\n`,
    );
    expect(r.status).toBe(1);
    expect(existsSync(store)).toBe(false);
  });

  it('an export target that cannot be written', async () => {
    const store = join(tmp, 'store');
    await seed(store, { '/memories/a.md': 'x' });
    const to = join(tmp, 'read-only');
    mkdirSync(to, { mode: 0o555 });
    chmodSync(to, 0o555);
    // Root writes anyway: as root the CLI runs without the capabilities that override file
    // permissions (it still owns everything here).
    const asRoot = process.getuid?.() === 0;
    const argv = [process.execPath, join(import.meta.dirname, '..', 'apps', 'cli', 'dist', 'main.js'), 'export', store, to];
    const noOverride = ['setpriv', '--bounding-set=-dac_override,-dac_read_search', '--inh-caps=-all', '--'];
    const [exe, ...args] = asRoot ? [...noOverride, ...argv] : argv;
    const r = spawnSync(exe!, args, { encoding: 'utf8' });
    chmodSync(to, 0o755);
    expect(r.stderr).toBe(`rabosh-memory: cannot export to ${to}: permission denied; nothing was exported\n`);
    expect(r.status).toBe(1);
    expect(readdirSync(to)).toEqual([]);
  });
});
