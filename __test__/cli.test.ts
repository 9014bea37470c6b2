// What people tripped on at the shell: bad --scope is a usage error like every other bad
// argument, import draws progress on a terminal, counts are singular when they are 1, export is
// whole or absent and never writes through a symbolic link, import says truthfully why a file
// cannot be imported, and read-only commands never turn a directory into a store.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RaboshMemoryToolHandler } from '../index.js';
import { run } from '../apps/cli/src/program.js';
import { cli, json, seed, writeTree } from './cli-harness.js';
import { dirPerTest } from './dir-per-test.js';

const dirs = dirPerTest('rabosh-cli-users');

describe('--scope', () => {
  for (const args of [
    ['view', 'STORE'],
    ['usage', 'STORE'],
    ['import', 'FROM', 'STORE'],
  ]) {
    it(`a bad scope exits 2 before any store is opened (${args[0]})`, () => {
      writeTree(join(dirs.dir, 'from'), { 'memories/a.md': 'x' });
      const r = cli(...args.map((a) => (a === 'STORE' ? dirs.store : a === 'FROM' ? join(dirs.dir, 'from') : a)), '--scope', 'bad scope!');
      expect(r.status).toBe(2);
      expect(r.stderr).toContain('invalid --scope "bad scope!"');
      expect(existsSync(dirs.store)).toBe(false);
    });
  }
});

describe('plurals', () => {
  it('one memory, one byte, one file are singular', async () => {
    writeTree(join(dirs.dir, 'from'), { 'memories/a.md': 'x' });
    expect(cli('import', join(dirs.dir, 'from'), dirs.store).stdout).toBe('imported 1 memory (1 B) in one commit\n');
    expect(cli('usage', dirs.store).stdout).toBe('1 memory, 1 B (1 byte)\n');
    expect(cli('export', dirs.store, join(dirs.dir, 'to')).stdout).toBe(`exported 1 memory (1 B) to ${join(dirs.dir, 'to')}\n`);
    const v = json(cli('verify', dirs.store, '--json'));
    const word = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;
    expect(cli('verify', dirs.store).stdout).toBe(
      `ok: ${word(v.records, 'record', 'records')} in ${word(v.files, 'file', 'files')}, ${word(v.keys, 'live key', 'live keys')}\n`,
    );
    // The memory's key and the change feed's (its entry and marker): the words follow the count.
    expect(v.keys).toBeGreaterThan(1);
    expect(cli('expire', dirs.store, '--before', '2000-01-01').stdout).toBe(
      'expired 0 memories last updated before 2000-01-01T00:00:00.000Z\n',
    );
  });
});

/** A terminal as cli-progress sees one (isTTY and a width), handing what is drawn to `sink`. */
function terminal(sink: (s: string) => void) {
  return {
    isTTY: true,
    columns: 100,
    write: (s: string) => {
      sink(s);
      return true;
    },
    on() {},
    removeListener() {},
  };
}

describe('import progress on a terminal', () => {
  it('draws a bar on stderr while reading, and says it is committing', async () => {
    writeTree(join(dirs.dir, 'from'), Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`memories/m${i}.md`, `memory ${i}`])));
    let out = '';
    let err = '';
    const tty = terminal((s) => {
      err += s;
    });
    const code = await run(['import', join(dirs.dir, 'from'), dirs.store], {
      stdout: {
        isTTY: true,
        write: (s: string) => {
          out += s;
        },
      },
      stderr: tty,
    });
    expect(code).toBe(0);
    expect(out).toBe('imported 30 memories (260 B) in one commit\n');
    expect(err).toMatch(/read \[[^\]]*\] 30\/30 100%/);
    expect(err).toContain('committing 30 memories…');
  });

  it('draws nothing for --json', async () => {
    writeTree(join(dirs.dir, 'from'), { 'memories/a.md': 'x' });
    let err = '';
    const tty = terminal((s) => {
      err += s;
    });
    await run(['import', join(dirs.dir, 'from'), dirs.store, '--json'], { stdout: { isTTY: true, write: () => true }, stderr: tty });
    expect(err).toBe('');
  });
});

describe('export is whole or absent', () => {
  it('refuses a symlinked <to>/memories and writes nothing where it points', async () => {
    await seed(dirs.store, { '/memories/a.md': 'x' });
    const elsewhere = join(dirs.dir, 'elsewhere');
    mkdirSync(elsewhere);
    mkdirSync(join(dirs.dir, 'to'));
    symlinkSync(elsewhere, join(dirs.dir, 'to', 'memories'), 'junction');
    const r = cli('export', dirs.store, join(dirs.dir, 'to'), '--json');
    expect(r.status).toBe(1);
    expect(JSON.parse(r.stderr).error.code).toBe('CLI_TARGET_SYMLINK');
    expect(readdirSync(elsewhere)).toEqual([]);
    expect(readdirSync(join(dirs.dir, 'to'))).toEqual(['memories']);
  });

  it('refuses a symlinked <to>', async () => {
    await seed(dirs.store, { '/memories/a.md': 'x' });
    const elsewhere = join(dirs.dir, 'elsewhere');
    mkdirSync(elsewhere);
    symlinkSync(elsewhere, join(dirs.dir, 'to'), 'junction');
    const r = cli('export', dirs.store, join(dirs.dir, 'to'));
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('is a symbolic link');
    expect(readdirSync(elsewhere)).toEqual([]);
  });

  it('a write that fails half-way leaves nothing behind, and a retry is not refused', async () => {
    // A real failing write after /memories/a.md was written: on POSIX a file size limit (Node
    // ignores SIGXFSZ, so the write fails with EFBIG); on Windows a name NTFS cannot hold.
    const bad = process.platform === 'win32' ? '/memories/z/what?.md' : '/memories/z/big.md';
    await seed(dirs.store, { '/memories/a.md': 'first', [bad]: 'x'.repeat(4096) });
    const to = join(dirs.dir, 'to');
    mkdirSync(to);
    const bin = resolve(import.meta.dirname, '..', 'apps', 'cli', 'dist', 'main.js');
    const r =
      process.platform === 'win32'
        ? spawnSync(process.execPath, [bin, 'export', dirs.store, to], { encoding: 'utf8' })
        : spawnSync('sh', ['-c', 'ulimit -f 2 && exec "$0" "$@"', process.execPath, bin, 'export', dirs.store, to], { encoding: 'utf8' });
    expect(r.stderr).toMatch(new RegExp(`^rabosh-memory: cannot export ${bad.replace('?', '\\?')}: .*; nothing was exported\\n$`));
    expect(r.status).toBe(1);
    expect(readdirSync(to)).toEqual([]);

    const h = await RaboshMemoryToolHandler.open(dirs.store);
    expect((await h.execute({ command: 'delete', path: bad })).isError).toBe(false);
    await h.close();
    const retry = cli('export', dirs.store, to);
    expect(retry.status).toBe(0);
    expect(readdirSync(to)).toEqual(['memories']);
    expect(readFileSync(join(to, 'memories', 'a.md'), 'utf8')).toBe('first');
  });
});

describe('import says why a file cannot be imported', () => {
  it('a 3 GB sparse file is too large, and is not read', () => {
    writeTree(join(dirs.dir, 'from'), { 'memories/a.md': 'x' });
    const big = join(dirs.dir, 'from', 'memories', 'big.md');
    writeFileSync(big, '');
    truncateSync(big, 3 * 2 ** 30);
    const r = cli('import', join(dirs.dir, 'from'), dirs.store);
    expect(r.status).toBe(1);
    expect(r.stderr).toBe(`rabosh-memory: cannot import ${big}: too large (${3 * 2 ** 30} bytes; a memory holds at most 1048576)\n`);
    expect(existsSync(dirs.store)).toBe(false);
  });

  it('an unreadable file is "permission denied", not "not valid UTF-8"', () => {
    // Root reads a chmod 000 file anyway, so as root the CLI runs as root without the two
    // capabilities that override file permissions (setpriv): still the owner of the clone and
    // the tree, so it loads from wherever the repository was cloned (a 0700 parent included),
    // where another user such as `nobody` could not. On Windows, an ACL denies reading instead.
    const from = join(dirs.dir, 'from');
    writeTree(from, { 'memories/a.md': 'x', 'memories/secret.md': 'y' });
    const secret = join(from, 'memories', 'secret.md');
    const asRoot = typeof process.getuid === 'function' && process.getuid() === 0;
    if (process.platform === 'win32') {
      expect(spawnSync('icacls', [secret, '/deny', `${process.env['USERNAME']}:(R)`]).status).toBe(0);
    } else {
      chmodSync(secret, 0o000);
    }
    const bin = resolve(import.meta.dirname, '..', 'apps', 'cli', 'dist', 'main.js');
    const argv = [process.execPath, bin, 'import', from, dirs.store];
    const noOverride = ['setpriv', '--bounding-set=-dac_override,-dac_read_search', '--inh-caps=-all', '--'];
    const [exe, ...args] = asRoot ? [...noOverride, ...argv] : argv;
    const r = spawnSync(exe!, args, { encoding: 'utf8' });
    expect(r.stderr).toBe(`rabosh-memory: cannot import ${secret}: permission denied\n`);
    expect(r.status).toBe(1);
    if (process.platform === 'win32') spawnSync('icacls', [secret, '/remove:d', `${process.env['USERNAME']}`]);
  });
});

describe('read-only commands never create a store', () => {
  const readOnly = (s: string, to: string): string[][] => [
    ['view', s],
    ['usage', s],
    ['stats', s],
    ['verify', s],
    ['export', s, to],
    ['checkpoint', s, to],
    ['expire', s, '--before', '1d'],
  ];

  it('an existing empty directory is refused and left empty', () => {
    mkdirSync(dirs.store);
    for (const args of readOnly(dirs.store, join(dirs.dir, 'to'))) {
      const r = cli(...args);
      expect(r.status, args[0]).toBe(1);
      expect(r.stderr, args[0]).toBe(`rabosh-memory: no store at ${dirs.store}\n`);
      expect(readdirSync(dirs.store), args[0]).toEqual([]);
      expect(existsSync(join(dirs.dir, 'to')), args[0]).toBe(false);
    }
  });

  // Needs the engine's create: false (RaboshOptions.create), merged from another branch.
  it('a directory holding other files is refused and left as it was', () => {
    writeTree(dirs.store, { 'notes.txt': 'not a store' });
    for (const args of readOnly(dirs.store, join(dirs.dir, 'to'))) {
      const r = cli(...args);
      expect(r.status, args[0]).toBe(1);
      expect(readdirSync(dirs.store), args[0]).toEqual(['notes.txt']);
    }
  });
});

describe('the CLI speaks the CLI’s language', () => {
  it('an import conflict names the --overwrite flag, not the API option', () => {
    writeTree(join(dirs.dir, 'from'), { 'memories/a.md': 'x' });
    expect(cli('import', join(dirs.dir, 'from'), dirs.store).status).toBe(0);
    const r = cli('import', join(dirs.dir, 'from'), dirs.store);
    expect(r.status).toBe(1);
    expect(r.stderr).toBe(
      'rabosh-memory: nothing imported: /memories/a.md already exists (pass --overwrite to replace existing memories)\n',
    );
    const j = cli('import', join(dirs.dir, 'from'), dirs.store, '--json');
    expect(JSON.parse(j.stderr).error).toMatchObject({ code: 'RABOSH_INVALID_ARGUMENT' });
    expect(JSON.parse(j.stderr).error.message).toContain('--overwrite');
    expect(cli('import', join(dirs.dir, 'from'), dirs.store, '--overwrite').status).toBe(0);
  });

  it('a file given as the store is refused in words, for every kind of command', () => {
    const file = join(dirs.dir, 'not-a-dir');
    writeFileSync(file, 'plain file');
    writeTree(join(dirs.dir, 'from'), { 'memories/a.md': 'x' });
    for (const target of [file, join(file, 'below')]) {
      for (const args of [
        ['view', target],
        ['usage', target],
        ['stats', target],
        ['import', join(dirs.dir, 'from'), target],
        ['history', target, '/memories/a.md'],
      ]) {
        const r = cli(...args);
        expect(r.status, args.join(' ')).toBe(1);
        expect(r.stderr, args.join(' ')).toBe(
          `rabosh-memory: ${target} is not a directory: a store is a directory (or a postgres:// URL)\n`,
        );
      }
    }
    expect(JSON.parse(cli('usage', file, '--json').stderr).error.code).toBe('CLI_NOT_A_DIRECTORY');
    expect(readFileSync(file, 'utf8')).toBe('plain file');
  });

  it('show prints an unknown version on stderr, not stdout', async () => {
    const h = await RaboshMemoryToolHandler.open(dirs.store, { history: true });
    await h.execute({ command: 'create', path: '/memories/n.md', file_text: 'one' });
    await h.close();
    const r = cli('show', dirs.store, '0'.repeat(32));
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(`rabosh-memory: no version ${'0'.repeat(32)}\n`);
    const j = cli('show', dirs.store, '0'.repeat(32), '--json');
    expect(j.stdout).toBe('');
    expect(JSON.parse(j.stderr)).toEqual({ error: { code: 'CLI_NO_VERSION', message: `no version ${'0'.repeat(32)}` } });
  });

  it('a revert to the content already there says nothing changed, and writes no version', async () => {
    const h = await RaboshMemoryToolHandler.open(dirs.store, { history: true });
    await h.execute({ command: 'create', path: '/memories/n.md', file_text: 'one' });
    await h.execute({ command: 'str_replace', path: '/memories/n.md', old_str: 'one', new_str: 'two' });
    const [second, first] = (await h.versions({ path: '/memories/n.md' })).data;
    await h.close();
    const noop = cli('revert', dirs.store, '/memories/n.md', second!.id);
    expect(noop.status).toBe(0);
    expect(noop.stdout).toBe(`nothing changed: /memories/n.md already holds the content of version ${second!.id}\n`);
    expect(json(cli('revert', dirs.store, '/memories/n.md', second!.id, '--json'))).toEqual({
      path: '/memories/n.md',
      versionId: second!.id,
      changed: false,
    });
    expect(json(cli('history', dirs.store, '/memories/n.md', '--json')).data).toHaveLength(2);
    const real = json(cli('revert', dirs.store, '/memories/n.md', first!.id, '--json'));
    expect(real).toMatchObject({ path: '/memories/n.md', changed: true });
    expect(real.versionId).not.toBe(second!.id);
    expect(cli('revert', dirs.store, '/memories/n.md', first!.id).stdout).toMatch(/^nothing changed: /);
  });

  it('--help gives the defaults, --json and the exit codes', () => {
    for (const args of [['--help'], ['view', '--help'], ['history', '--help']]) {
      const r = cli(...args);
      expect(r.status, args.join(' ')).toBe(0);
      expect(r.stdout, args.join(' ')).toMatch(/--json/);
      expect(r.stdout, args.join(' ')).toMatch(
        /Exit codes:\n\s+0\s+ok\n\s+1\s+.+\n\s+2\s+bad command line.*\n\s+3\s+the store is open exclusively elsewhere/,
      );
      expect(r.stdout, args.join(' ')).toContain('(default: "default")');
    }
    const view = cli('view', '--help').stdout.replace(/\s+/g, ' '); // commander wraps at 80 columns
    expect(view).toContain('(default: "/memories")');
    expect(view).toMatch(/--max-chars <n> [^-]*\(default: 16000\)/);
    expect(view).toMatch(/--range <start,end> [^-]*\(default: the whole file\)/);
  });
});
