// Contract §5–§6: options, usage, expiry, scopes, closing and the store lock.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { Rabosh, RaboshMemoryToolHandler, StoreLockedError } from '../index.js';
import { makeTempDir, removeDir } from './tmp-dir.js';

let dir: string;
beforeEach(() => {
  dir = makeTempDir('rabosh-life');
});
afterEach(() => {
  removeDir(dir);
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const create = (path: string, file_text: string) => ({ command: 'create', path, file_text });

async function rejection(p: Promise<unknown> | (() => unknown)): Promise<any> {
  try {
    await (typeof p === 'function' ? p() : p);
  } catch (e) {
    return e;
  }
  throw new Error('expected a rejection, got a result');
}

describe('closing', () => {
  it('close is idempotent, for an owned handler and for a store', async () => {
    const h = await RaboshMemoryToolHandler.open(dir);
    await h.close();
    await h.close();
    const db = await Rabosh.open(dir);
    await db.close();
    await db.close();
  });

  it('every command after close rejects with a clear closed-store error', async () => {
    const h = await RaboshMemoryToolHandler.open(dir);
    await h.execute(create('/memories/a', 'x'));
    await h.close();
    const calls: Array<() => Promise<unknown>> = [
      () => h.execute({ command: 'view', path: '/memories' }),
      () => h.execute(create('/memories/b', 'x')),
      () => h.view({ command: 'view', path: '/memories/a' }),
      () => h.create({ command: 'create', path: '/memories/c', file_text: 'x' }),
      () => h.str_replace({ command: 'str_replace', path: '/memories/a', old_str: 'x', new_str: 'y' }),
      () => h.insert({ command: 'insert', path: '/memories/a', insert_line: 0, insert_text: 'y' }),
      () => h.delete({ command: 'delete', path: '/memories/a' }),
      () => h.rename({ command: 'rename', old_path: '/memories/a', new_path: '/memories/z' }),
      () => h.usage(),
      () => h.expireBefore(new Date()),
    ];
    for (const call of calls) {
      const e = await rejection(call);
      expect(e).toBeInstanceOf(Error);
      expect(e.code).toBe('RABOSH_CLOSED');
      expect(String(e.message)).toMatch(/closed/i);
    }
  });

  it('await using closes an owned handler at the end of the scope', async () => {
    let escaped: RaboshMemoryToolHandler;
    {
      await using h = await RaboshMemoryToolHandler.open(dir);
      await h.execute(create('/memories/a', 'x'));
      escaped = h;
    }
    expect((await rejection(escaped.execute({ command: 'view', path: '/memories' }))).code).toBe('RABOSH_CLOSED');
    // the lock is released: the directory opens again and the memory is there
    await using again = await RaboshMemoryToolHandler.open(dir);
    expect(await again.usage()).toEqual({ memories: 1, bytes: 1 });
  });

  it('await using closes a store', async () => {
    {
      await using db = await Rabosh.open(dir);
      const h = new RaboshMemoryToolHandler(db);
      await h.execute(create('/memories/a', 'x'));
    }
    await using db2 = await Rabosh.open(dir);
    expect(await new RaboshMemoryToolHandler(db2).usage()).toEqual({ memories: 1, bytes: 1 });
  });

  it('a handler over a host-opened store does not close the store', async () => {
    const db = await Rabosh.open(dir);
    try {
      const h = new RaboshMemoryToolHandler(db);
      await h.execute(create('/memories/a', 'x'));
      await h.close();
      const other = new RaboshMemoryToolHandler(db);
      expect(await other.execute({ command: 'view', path: '/memories/a' })).toEqual({
        text: "Here's the content of /memories/a with line numbers:\n     1\tx",
        isError: false,
      });
    } finally {
      await db.close();
    }
  });

  it('closing the store closes the handlers built over it', async () => {
    const db = await Rabosh.open(dir);
    const h = new RaboshMemoryToolHandler(db);
    await db.close();
    expect((await rejection(h.execute({ command: 'view', path: '/memories' }))).code).toBe('RABOSH_CLOSED');
  });

  it("an owned store's directory can be deleted after close, and opens fresh afterwards", async () => {
    const h = await RaboshMemoryToolHandler.open(dir);
    await h.execute(create('/memories/a/b', 'x'.repeat(1000)));
    await h.close();
    removeDir(dir);
    expect(existsSync(dir)).toBe(false);
    const fresh = await RaboshMemoryToolHandler.open(dir);
    expect(await fresh.usage()).toEqual({ memories: 0, bytes: 0 });
    await fresh.close();
  });
});

describe('the store lock', () => {
  it('with exclusive: true, a second open of the same directory in one process fails with StoreLockedError naming the holder', async () => {
    const db = await Rabosh.open(dir, { exclusive: true });
    try {
      const e = await rejection(Rabosh.open(dir));
      expect(e).toBeInstanceOf(StoreLockedError);
      expect(e.code).toBe('RABOSH_STORE_LOCKED');
      expect(e.holder.pid).toBe(process.pid);
      expect(typeof e.holder.host).toBe('string');
      const viaHandler = await rejection(RaboshMemoryToolHandler.open(dir, { exclusive: true }));
      expect(viaHandler).toBeInstanceOf(StoreLockedError);
    } finally {
      await db.close();
    }
    // released on close
    await (await Rabosh.open(dir, { exclusive: true })).close();
  });

  it('by default a second open shares the store; an exclusive open is refused while it is shared', async () => {
    const a = await Rabosh.open(dir);
    const b = await Rabosh.open(dir);
    try {
      const e = await rejection(Rabosh.open(dir, { exclusive: true }));
      expect(e).toBeInstanceOf(StoreLockedError);
      expect(e.holder.pid).toBe(process.pid);
    } finally {
      await a.close();
      await b.close();
    }
  });
});

describe('options', () => {
  it('history is a store option: refused on a handler over an open store, naming Rabosh.open', async () => {
    const db = await Rabosh.open(dir);
    try {
      const e = await rejection(() => new RaboshMemoryToolHandler(db, { history: true } as never));
      expect(String(e.message)).toMatch(/Rabosh\.open/);
    } finally {
      await db.close();
    }
    const viaOpen = await rejection(RaboshMemoryToolHandler.open(dir, { history: 'yes' } as never));
    expect(String(viaOpen.message)).toMatch(/history/);
    // a refused open leaves no lock behind
    await (await RaboshMemoryToolHandler.open(dir, { history: true })).close();
  });

  const bad: Array<[string, unknown, string]> = [
    ['scope', 'a:b', 'a:b'],
    ['scope', '', ''],
    ['scope', 'x'.repeat(65), 'x'.repeat(65)],
    ['scope', 'sp ace', 'sp ace'],
    ['scope', 'é', 'é'],
    ['maxMemoryBytes', 0, '0'],
    ['maxMemoryBytes', -1, '-1'],
    ['maxMemoryBytes', 1.5, '1.5'],
    ['maxMemoryBytes', Number.NaN, 'NaN'],
    ['maxMemoryBytes', '100', '100'],
    ['viewMaxChars', 0, '0'],
    ['viewMaxChars', -5, '-5'],
    ['viewMaxChars', Number.POSITIVE_INFINITY, 'Infinity'],
  ];
  for (const [option, value, rendered] of bad) {
    it(`${option}: ${JSON.stringify(value) ?? String(value)} is refused, naming the option and the value`, async () => {
      const db = await Rabosh.open(dir);
      try {
        const e = await rejection(() => new RaboshMemoryToolHandler(db, { [option]: value } as never));
        expect(e.code).toBe('RABOSH_INVALID_OPTION');
        expect(String(e.message)).toContain(option);
        expect(String(e.message)).toContain(rendered);
      } finally {
        await db.close();
      }
    });
  }

  it('valid edge values are accepted', async () => {
    const db = await Rabosh.open(dir);
    try {
      new RaboshMemoryToolHandler(db, { scope: 'A-z_0.9', maxMemoryBytes: 1, viewMaxChars: 1 });
      new RaboshMemoryToolHandler(db, { scope: 'x'.repeat(64) });
    } finally {
      await db.close();
    }
  });
});

describe('scopes, usage and expiry', () => {
  it('scopes separate namespaces in one store', async () => {
    await using db = await Rabosh.open(dir);
    const a = new RaboshMemoryToolHandler(db, { scope: 'alice' });
    const b = new RaboshMemoryToolHandler(db, { scope: 'bob' });
    const d = new RaboshMemoryToolHandler(db);
    await a.execute(create('/memories/x', 'alice'));
    expect(await b.execute({ command: 'view', path: '/memories/x' })).toEqual({
      text: 'The path /memories/x does not exist. Please provide a valid path.',
      isError: true,
    });
    expect(await b.execute(create('/memories/x', 'bob!'))).toEqual({
      text: 'File created successfully at: /memories/x',
      isError: false,
    });
    expect(await a.usage()).toEqual({ memories: 1, bytes: 5 });
    expect(await b.usage()).toEqual({ memories: 1, bytes: 4 });
    expect(await d.usage()).toEqual({ memories: 0, bytes: 0 });
  });

  it('usage counts memories and UTF-8 bytes', async () => {
    await using h = await RaboshMemoryToolHandler.open(dir);
    await h.execute(create('/memories/a', 'é'));
    await h.execute(create('/memories/.h/b', '\u{1F600}'));
    await h.execute(create('/memories/c', ''));
    expect(await h.usage()).toEqual({ memories: 3, bytes: 6 });
  });

  it('expireBefore deletes what was last updated before the instant, in its scope only', async () => {
    await using db = await Rabosh.open(dir);
    const h = new RaboshMemoryToolHandler(db);
    const other = new RaboshMemoryToolHandler(db, { scope: 'other' });
    await h.execute(create('/memories/old', 'o'));
    await h.execute(create('/memories/edited', 'e'));
    await other.execute(create('/memories/old', 'o'));
    await sleep(5);
    const cut = new Date();
    await sleep(5);
    await h.execute(create('/memories/new', 'n'));
    await h.execute({ command: 'str_replace', path: '/memories/edited', old_str: 'e', new_str: 'E' });
    expect(await h.expireBefore(cut)).toBe(1);
    expect(await h.usage()).toEqual({ memories: 2, bytes: 2 });
    expect(await other.usage()).toEqual({ memories: 1, bytes: 1 });
    expect(await h.expireBefore(new Date(0))).toBe(0);
    expect(await h.expireBefore(new Date(Date.now() + 60_000))).toBe(2);
    expect(await h.usage()).toEqual({ memories: 0, bytes: 0 });
  });

  it('with trackAccess a view keeps a memory alive', async () => {
    await using db = await Rabosh.open(dir);
    const h = new RaboshMemoryToolHandler(db, { trackAccess: true });
    await h.execute(create('/memories/read', 'r'));
    await h.execute(create('/memories/unread', 'u'));
    await sleep(5);
    const cut = new Date();
    await sleep(5);
    await h.execute({ command: 'view', path: '/memories/read' });
    expect(await h.expireBefore(cut)).toBe(1);
    expect((await h.execute({ command: 'view', path: '/memories/read' })).isError).toBe(false);
  });

  it('a rename keeps the moved memories (updatedAt is set)', async () => {
    await using h = await RaboshMemoryToolHandler.open(dir);
    await h.execute(create('/memories/a', 'a'));
    await sleep(5);
    const cut = new Date();
    await sleep(5);
    await h.execute({ command: 'rename', old_path: '/memories/a', new_path: '/memories/b' });
    expect(await h.expireBefore(cut)).toBe(0);
  });
});
