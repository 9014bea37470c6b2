// The PostgreSQL store through the public API, against the real server of with-postgres.mjs:
// open by URL, the six commands, listing, usage, expiry, export/import, close; what the engine's
// maintenance answers there; typed connection faults that name no host or password; and
// several client processes incrementing counters through view + str_replace losing nothing; a
// client SIGKILLed mid-rename of a 1,000-memory subtree leaves all-old or all-new.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  BackendUnavailableError,
  InvalidOptionError,
  NotAStoreError,
  Rabosh,
  RaboshMemoryToolHandler,
  StoreClosedError,
  UnsupportedError,
} from '../index.js';
import { freshPgUrl, pgBaseUrl } from './pg-url.js';
import { eachLine } from './child-lines.js';

const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));

describe('PostgreSQL store by URL', () => {
  it('six commands, listing, usage, expiry, export/import and close, as on a directory', async () => {
    const url = freshPgUrl('e2e');
    const h = await RaboshMemoryToolHandler.open(url);
    const run = (input: Record<string, unknown>) => h.execute(input);
    try {
      expect(await run({ command: 'create', path: '/memories/notes/a.md', file_text: 'one\ntwo' })).toEqual({
        text: 'File created successfully at: /memories/notes/a.md',
        isError: false,
      });
      expect((await run({ command: 'create', path: '/memories/notes/a.md', file_text: 'x' })).text).toBe(
        'Error: File /memories/notes/a.md already exists',
      );
      expect((await run({ command: 'str_replace', path: '/memories/notes/a.md', old_str: 'two', new_str: 'three' })).isError).toBe(false);
      expect((await run({ command: 'insert', path: '/memories/notes/a.md', insert_line: 0, insert_text: 'zero' })).text).toBe(
        'The file /memories/notes/a.md has been edited.',
      );
      expect((await run({ command: 'view', path: '/memories/notes/a.md' })).text).toBe(
        "Here's the content of /memories/notes/a.md with line numbers:\n     1\tzero\n     2\tone\n     3\tthree\n     4\t",
      );
      expect((await run({ command: 'rename', old_path: '/memories/notes', new_path: '/memories/kept' })).text).toBe(
        'Successfully renamed /memories/notes to /memories/kept',
      );
      await run({ command: 'create', path: '/memories/.hidden', file_text: 'h' });
      expect((await run({ command: 'view', path: '/memories' })).text).toBe(
        "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:" +
          '\n15B\t/memories\n15B\t/memories/kept/\n15B\t/memories/kept/a.md',
      );
      expect(await h.usage()).toEqual({ memories: 2, bytes: 16 });
      const exported = await h.exportMemories();
      expect(exported.map((m) => [m.path, m.content])).toEqual([
        ['/memories/.hidden', 'h'],
        ['/memories/kept/a.md', 'zero\none\nthree\n'],
      ]);
      expect((await run({ command: 'delete', path: '/memories/kept' })).text).toBe('Successfully deleted /memories/kept');
      expect(await h.expireBefore(new Date(Date.now() + 60_000))).toBe(1);
      expect(await h.usage()).toEqual({ memories: 0, bytes: 0 });
      expect((await h.importMemories(exported.map(({ path, content }) => ({ path, content })))).memories).toBe(2);
    } finally {
      await h.close();
    }
    await expect(h.execute({ command: 'view', path: '/memories' })).rejects.toBeInstanceOf(StoreClosedError);
    // Another open of the same URL (another process would do the same) sees what was committed.
    const again = await RaboshMemoryToolHandler.open(url, { listingIndex: false });
    try {
      expect(await again.usage()).toEqual({ memories: 2, bytes: 16 });
      expect((await again.execute({ command: 'view', path: '/memories/kept/a.md', view_range: [3, 3] })).text).toBe(
        "Here's the content of /memories/kept/a.md with line numbers:\n     3\tthree",
      );
    } finally {
      await again.close();
    }
  });

  it('two scopes of one database stay apart, and two opens share one scope', async () => {
    const url = freshPgUrl('scopes');
    const [a, b] = await Promise.all([Rabosh.open(url), Rabosh.open(url)]);
    try {
      const one = new RaboshMemoryToolHandler(a, { scope: 'one' });
      const two = new RaboshMemoryToolHandler(a, { scope: 'two' });
      const oneElsewhere = new RaboshMemoryToolHandler(b, { scope: 'one' });
      await one.execute({ command: 'create', path: '/memories/x', file_text: 'abc' });
      expect(await two.usage()).toEqual({ memories: 0, bytes: 0 });
      expect(await oneElsewhere.usage()).toEqual({ memories: 1, bytes: 3 });
      expect(a.stats().commits).toBe(1);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('the engine maintenance answers UnsupportedError, sync resolves, buffered and exclusive are refused', async () => {
    const url = freshPgUrl('maint');
    await expect(Rabosh.open(url, { durability: 'buffered' })).rejects.toBeInstanceOf(InvalidOptionError);
    // A URL cannot be held alone: refused, not silently shared.
    const exclusive = Rabosh.open(url, { exclusive: true });
    await expect(exclusive).rejects.toBeInstanceOf(InvalidOptionError);
    await expect(exclusive).rejects.toThrow(/^invalid option exclusive: exclusive: true is not supported by PostgreSQL stores \(/);
    // The URL is parsed once, by the core: a misspelt parameter is named, its value never shown.
    const typo = Rabosh.open(`${url}&pool_sise=secret-value`);
    await expect(typo).rejects.toBeInstanceOf(InvalidOptionError);
    await expect(typo).rejects.toThrow('invalid option pool_sise: unknown option');
    await expect(typo).rejects.not.toThrow('secret-value');
    const db = await Rabosh.open(url);
    try {
      await expect(db.compact()).rejects.toThrow(/^compact is not supported by PostgreSQL stores \(/);
      await expect(db.compact()).rejects.toBeInstanceOf(UnsupportedError);
      await expect(db.verify()).rejects.toBeInstanceOf(UnsupportedError);
      await expect(db.checkpoint('/nonexistent-checkpoint-dir')).rejects.toBeInstanceOf(UnsupportedError);
      expect(() => db.snapshot()).toThrow(UnsupportedError);
      await expect(db.sync()).resolves.toBeUndefined();
    } finally {
      await db.close();
    }
    await expect(db.sync()).rejects.toBeInstanceOf(StoreClosedError);
  });

  it('create: false refuses a schema without a store (NotAStoreError, nothing created) and opens one that has it', async () => {
    const url = freshPgUrl('nocreate');
    const refused = Rabosh.open(url, { create: false });
    await expect(refused).rejects.toBeInstanceOf(NotAStoreError);
    await expect(refused).rejects.toThrow(`the PostgreSQL schema ${new URL(url).searchParams.get('schema')} holds no rabosh store`);
    // Still nothing there: a second refusal, then a creating open finds an empty store.
    await expect(Rabosh.open(url, { create: false })).rejects.toBeInstanceOf(NotAStoreError);
    const h = await RaboshMemoryToolHandler.open(url);
    try {
      expect(await h.usage()).toEqual({ memories: 0, bytes: 0 });
      await h.execute({ command: 'create', path: '/memories/a', file_text: 'xy' });
    } finally {
      await h.close();
    }
    const db = await Rabosh.open(url, { create: false });
    try {
      expect(await new RaboshMemoryToolHandler(db).usage()).toEqual({ memories: 1, bytes: 2 });
    } finally {
      await db.close();
    }
  });

  it('wrong password, refused connection and missing database: typed, without host or password', async () => {
    const base = new URL(pgBaseUrl());
    const secret = decodeURIComponent(base.password);
    const cases: Array<[string, string]> = [];
    const wrong = new URL(base.href);
    wrong.password = 'not-the-password-xyz';
    cases.push([wrong.href, 'RABOSH_PG_AUTHENTICATION_FAILED']);
    const refused = new URL(base.href);
    refused.port = '1'; // nothing listens on port 1
    cases.push([refused.href, 'RABOSH_PG_UNREACHABLE']);
    const missing = new URL(base.href);
    missing.pathname = '/no_such_database_here';
    cases.push([missing.href, 'RABOSH_PG_DATABASE_MISSING']);
    for (const [url, code] of cases) {
      const e = await RaboshMemoryToolHandler.open(url).then(
        () => null,
        (err: unknown) => err,
      );
      expect(e).toBeInstanceOf(BackendUnavailableError);
      const err = e as BackendUnavailableError;
      expect(err.code).toBe(code);
      for (const leak of [secret, 'not-the-password-xyz', base.hostname, base.port]) {
        expect(err.message).not.toContain(leak);
        expect(String(err.stack)).not.toContain(leak);
      }
    }
  });

  it('SIGKILL of a client mid-rename of a 1,000-memory subtree: all old or all new', async () => {
    const url = freshPgUrl('kill');
    const N = 1_000;
    const setup = await RaboshMemoryToolHandler.open(url);
    const files = Array.from({ length: N }, (_, i) => ({ path: `/memories/tree/d${i % 10}/m${i}.md`, content: `memory ${i}` }));
    expect((await setup.importMemories(files)).memories).toBe(N);
    const t0 = performance.now();
    await setup.execute({ command: 'rename', old_path: '/memories/tree', new_path: '/memories/moved' });
    await setup.execute({ command: 'rename', old_path: '/memories/moved', new_path: '/memories/tree' });
    const perRename = (performance.now() - t0) / 2;
    try {
      for (let round = 0; round < 8; round++) {
        const target = 1 + (round % 3);
        const killed = await new Promise<{ lines: string[]; err: string }>((resolve, reject) => {
          const child = spawn(process.execPath, [fixture('crash-rename.mjs'), url], { stdio: ['ignore', 'pipe', 'pipe'] });
          const lines: string[] = [];
          let err = '';
          child.stderr.on('data', (d) => (err += d));
          eachLine(child.stdout, (line) => {
            lines.push(line);
            // The next rename is already on its way when this line arrives; the kill lands
            // at a random point of it or of the one after (half the time of one rename apart).
            if (line.startsWith(`R ${target} `)) setTimeout(() => child.kill('SIGKILL'), Math.random() * 2 * perRename);
          });
          child.on('error', reject);
          child.on('close', () => resolve({ lines, err }));
        });
        expect(killed.err, `round ${round}`).toBe('');
        expect(
          killed.lines.some((l) => l.startsWith(`R ${target} `)),
          `round ${round}`,
        ).toBe(true);
        const paths = (await setup.exportMemories()).map((m) => m.path);
        const under = (root: string) => paths.filter((p) => p.startsWith(`${root}/`)).length;
        expect([paths.length, under('/memories/tree'), under('/memories/moved')], `round ${round}`).toSatisfy(
          ([all, a, b]: number[]) => all === N && ((a === N && b === 0) || (a === 0 && b === N)),
        );
      }
    } finally {
      await setup.close();
    }
  });

  it('client processes incrementing counters through view + str_replace lose no increment', async () => {
    const url = freshPgUrl('count');
    const PROCS = 4;
    const TIMES = 15;
    const counters = ['/memories/c0', '/memories/c1'];
    const setup = await RaboshMemoryToolHandler.open(url);
    for (const path of counters) await setup.execute({ command: 'create', path, file_text: 'n=0;' });
    const children = Array.from(
      { length: PROCS },
      (_, i) =>
        new Promise<string>((resolve, reject) => {
          const child = spawn(process.execPath, [fixture('pg-counter.mjs'), url, counters[i % 2]!, String(TIMES)], {
            stdio: ['ignore', 'pipe', 'pipe'],
          });
          let out = '';
          let err = '';
          child.stdout.on('data', (d) => (out += d));
          child.stderr.on('data', (d) => (err += d));
          child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`child ${i} exited ${code}: ${err}`))));
        }),
    );
    try {
      expect(await Promise.all(children)).toEqual(Array(PROCS).fill(`DONE ${TIMES}\n`));
      for (const path of counters) {
        expect((await setup.execute({ command: 'view', path })).text).toContain(`\tn=${(PROCS / 2) * TIMES};`);
      }
    } finally {
      await setup.close();
    }
  });
});
