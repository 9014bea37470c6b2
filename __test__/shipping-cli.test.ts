// The `rabosh-memory` command line, run as a real process (the built bin) against real stores:
// every subcommand, --json, exit codes, the lock error naming its holder, and an import →
// export round trip that must reproduce the source directory byte for byte.
import { existsSync, readFileSync, readdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Rabosh } from '../index.js';
import { cli, json, seed, writeTree } from './cli-harness.js';
import { dirPerTest } from './dir-per-test.js';

const dirs = dirPerTest('rabosh-cli');

describe('view', () => {
  it('prints what the model sees, for a directory and a file, with --range', async () => {
    await seed(dirs.store, { '/memories/notes/a.md': 'one\ntwo\nthree\n' });
    const dirView = cli('view', dirs.store);
    expect(dirView.status).toBe(0);
    expect(dirView.stdout).toBe(
      "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n" +
        '14B\t/memories\n14B\t/memories/notes/\n14B\t/memories/notes/a.md\n',
    );
    const fileView = cli('view', dirs.store, '/memories/notes/a.md', '--range', '2,3');
    expect(fileView.stdout).toBe("Here's the content of /memories/notes/a.md with line numbers:\n     2\ttwo\n     3\tthree\n");
  });

  it('exits 1 on a failure outcome and says so in --json', async () => {
    await seed(dirs.store, { '/memories/a.md': 'x' });
    const r = cli('view', dirs.store, '/memories/nope', '--json');
    expect(r.status).toBe(1);
    expect(json(r)).toEqual({
      path: '/memories/nope',
      text: 'The path /memories/nope does not exist. Please provide a valid path.',
      isError: true,
    });
  });

  it('refuses a directory that holds no store, without creating one', () => {
    const missing = join(dirs.dir, 'nothing-here');
    const r = cli('view', missing);
    expect(r.status).toBe(1);
    expect(r.stderr).toBe(`rabosh-memory: no store at ${missing}\n`);
    expect(existsSync(missing)).toBe(false);
  });
});

describe('usage and stats', () => {
  it('usage counts a scope, hidden memories included', async () => {
    await seed(dirs.store, { '/memories/a.md': 'hello', '/memories/.hidden/b.md': 'abc' });
    await seed(dirs.store, { '/memories/other.md': 'zzzzzzzz' }, 'other');
    expect(cli('usage', dirs.store).stdout).toBe('2 memories, 8 B (8 bytes)\n');
    expect(json(cli('usage', dirs.store, '--json'))).toEqual({ memories: 2, bytes: 8 });
    expect(json(cli('usage', dirs.store, '--json', '--scope', 'other'))).toEqual({ memories: 1, bytes: 8 });
  });

  it('stats prints the store figures, not the per-open counters (always 0 from a fresh open)', async () => {
    await seed(dirs.store, { '/memories/a.md': 'hello' });
    const s = json(cli('stats', dirs.store, '--json'));
    // The store's keys: the memory's and the change feed's (its entry and marker).
    expect(s.keys).toBeGreaterThan(1);
    expect(s.seq).toBeGreaterThanOrEqual(1);
    expect(Object.keys(s).sort()).toEqual(['deadBytes', 'files', 'keys', 'liveBytes', 'seq']);
    const human = cli('stats', dirs.store).stdout;
    expect(human).toMatch(new RegExp(`^keys\\s+${s.keys}$`, 'm'));
    expect(human).not.toMatch(/commits|fsyncs|valuesRead|bytesWritten|compactions|openSnapshots/);
  });
});

describe('import refusals (before any store is touched)', () => {
  it('import refuses the whole directory when one file is not UTF-8, and writes nothing', () => {
    const from = join(dirs.dir, 'from');
    writeTree(from, { 'memories/ok.md': 'fine\n', 'memories/bad.bin': Buffer.from([0xff, 0xfe, 0x00]) });
    const r = cli('import', from, dirs.store);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`cannot import ${join(from, 'memories', 'bad.bin')}: not valid UTF-8`);
    expect(existsSync(dirs.store)).toBe(false);
  });

  it('import refuses symbolic links (they could lead outside the directory)', () => {
    const from = join(dirs.dir, 'from');
    writeTree(from, { 'memories/ok.md': 'fine\n', 'outside/secret.md': 'elsewhere\n' });
    // A directory link: 'junction' needs no privilege on Windows and is a symlink elsewhere.
    symlinkSync(join(from, 'outside'), join(from, 'memories', 'linked'), 'junction');
    const r = cli('import', from, dirs.store);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('symbolic links are not followed');
  });
});

describe('expire', () => {
  it('deletes what was last updated before the date and reports the count', async () => {
    await seed(dirs.store, { '/memories/a.md': 'a', '/memories/b.md': 'b' });
    const past = cli('expire', dirs.store, '--before', '2000-01-01', '--json');
    expect(json(past)).toEqual({ deleted: 0, before: '2000-01-01T00:00:00.000Z' });
    const future = new Date(Date.now() + 86_400_000).toISOString();
    const r = cli('expire', dirs.store, '--before', future);
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(`expired 2 memories last updated before ${future}\n`);
    expect(json(cli('usage', dirs.store, '--json'))).toEqual({ memories: 0, bytes: 0 });
  });

  it('rejects a date it cannot read with exit code 2', async () => {
    await seed(dirs.store, { '/memories/a.md': 'a' });
    const r = cli('expire', dirs.store, '--before', 'last tuesday');
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('invalid --before "last tuesday"');
    const missing = cli('expire', dirs.store);
    expect(missing.status).toBe(2);
    expect(missing.stderr).toContain("required option '--before <date>' not specified");
  });
});

describe('checkpoint and verify', () => {
  it('checkpoint writes a copy that opens with the same memories', async () => {
    await seed(dirs.store, { '/memories/a.md': 'checkpointed\n' });
    const to = join(dirs.dir, 'cp');
    const r = cli('checkpoint', dirs.store, to, '--json');
    expect(r.status).toBe(0);
    expect(json(r).to).toBe(to);
    const view = cli('view', to, '/memories/a.md');
    expect(view.stdout).toBe("Here's the content of /memories/a.md with line numbers:\n     1\tcheckpointed\n     2\t\n");
  });

  it('verify passes a sound store and fails a damaged one with the corruption code', async () => {
    await seed(dirs.store, { '/memories/a.md': 'x'.repeat(4096), '/memories/b.md': 'y'.repeat(4096) });
    const ok = cli('verify', dirs.store, '--json');
    expect(ok.status).toBe(0);
    expect(json(ok).ok).toBe(true);

    // Flip one byte in the middle of the largest data file.
    const files = readdirSync(dirs.store)
      .map((name) => join(dirs.store, name))
      .filter((p) => statSync(p).isFile())
      .sort((a, b) => statSync(b).size - statSync(a).size);
    const victim = files[0]!;
    const bytes = readFileSync(victim);
    const at = Math.floor(bytes.length / 2);
    bytes[at] = bytes[at]! ^ 0xff;
    writeFileSync(victim, bytes);

    const bad = cli('verify', dirs.store, '--json');
    expect(bad.status).toBe(1);
    expect(JSON.parse(bad.stderr).error.code).toBe('RABOSH_CORRUPTION');
  });
});

describe('a locked store', () => {
  it('read-only commands work beside a live (shared) holder', async () => {
    await seed(dirs.store, { '/memories/a.md': 'x' });
    const db = await Rabosh.open(dirs.store);
    try {
      const r = cli('usage', dirs.store, '--json');
      expect(r.status).toBe(0);
      expect(json(r)).toMatchObject({ memories: 1 });
      const v = cli('view', dirs.store, '/memories/a.md');
      expect(v.status).toBe(0);
      expect(v.stdout).toContain('x');
    } finally {
      await db.close();
    }
  });

  it('names an exclusive holder and exits 3', async () => {
    await seed(dirs.store, { '/memories/a.md': 'x' });
    const db = await Rabosh.open(dirs.store, { exclusive: true });
    try {
      const r = cli('usage', dirs.store);
      expect(r.status).toBe(3);
      expect(r.stderr).toContain(`is locked by pid ${process.pid} on host ${hostname()}`);
      // which side was exclusive: the holder; the CLI opens shared
      expect(r.stderr).toMatch(/, which opened it exclusively \(exclusive: true\); this command opens it shared /);
      const j = cli('usage', dirs.store, '--json');
      expect(j.status).toBe(3);
      const err = JSON.parse(j.stderr).error;
      expect(err.code).toBe('RABOSH_STORE_LOCKED');
      expect(err.holder.pid).toBe(process.pid);
      expect(err.holder.host).toBe(hostname());
    } finally {
      await db.close();
    }
  });
});

describe('the command line itself', () => {
  it('an unknown command is a usage error (exit 2) with help', () => {
    const r = cli('frobnicate');
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("unknown command 'frobnicate'");
  });

  it('--version prints the package version', () => {
    const pkg = JSON.parse(readFileSync(resolve(import.meta.dirname, '..', 'package.json'), 'utf8'));
    expect(cli('--version').stdout.trim()).toBe(pkg.version);
  });
});
