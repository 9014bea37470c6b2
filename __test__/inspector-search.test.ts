// The inspector's filter: text that is a memory path answers the memories whose path starts with
// it, read from where that path sorts, so the filter of one path reads about as many keys as it
// shows, not the scope (an open filter is asked again after every write elsewhere). Any other
// text is still searched for in every path, in any case. Both page through every match exactly
// once, in path order.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Rabosh, RaboshMemoryToolHandler, type ListOptions } from '../index.js';
import { Api } from '../apps/cli/src/inspector/api.js';
import { ask } from './inspector-harness.js';

const work = mkdtempSync(join(tmpdir(), 'rabosh-inspector-search-'));
const INFO = { name: 'store', backend: 'directory', scope: 'default', history: false, actor: { type: 'user', id: 'inspector' } } as const;

/** Memories that sort around /memories/a/b: before it, at it, below it, beside it, after it. */
const AROUND = [
  '/memories/a/a.md',
  '/memories/a/b',
  '/memories/a/b-x.md',
  '/memories/a/b.md',
  '/memories/a/b/c.md',
  '/memories/a/b/d/e.md',
  '/memories/a/bé.md',
  '/memories/a/bz.md',
  '/memories/a/B.md',
  '/memories/a/c.md',
  // The text of the path inside another path: a path filter is a prefix, so not this.
  '/memories/x/memories/a/b.md',
];
/** Memories the filter of one path must not read: the rest of the scope. */
const FILLER = 2_000;

let db: Rabosh;
let handler: RaboshMemoryToolHandler;
let all: { path: string; bytes: number }[];

beforeAll(async () => {
  db = await Rabosh.open(join(work, 'store'));
  handler = new RaboshMemoryToolHandler(db);
  await handler.importMemories([
    ...AROUND.map((path, i) => ({ path, content: `${path} ${'é'.repeat(i)}` })),
    ...Array.from({ length: FILLER }, (_, i) => ({ path: `/memories/z/${String(i).padStart(5, '0')}.md`, content: 'z' })),
  ]);
  all = (await handler.exportMemories())
    .map((m) => ({ path: m.path, bytes: Buffer.byteLength(m.content, 'utf8') }))
    .sort((x, y) => Buffer.compare(Buffer.from(x.path), Buffer.from(y.path)));
});

afterAll(async () => {
  await db?.close();
  rmSync(work, { recursive: true, force: true });
});

/** `handler`, counting the memories its listings answer and whether any searched with `contains`. */
function counted(h: RaboshMemoryToolHandler): { handler: RaboshMemoryToolHandler; listed: number; contains: number } {
  const seen = { handler: h, listed: 0, contains: 0 };
  seen.handler = new Proxy(h, {
    get(target, key) {
      const v = Reflect.get(target, key, target) as unknown;
      if (typeof v !== 'function') return v;
      if (key !== 'listMemories') return v.bind(target);
      return async (options?: ListOptions) => {
        if (options?.contains !== undefined) seen.contains++;
        const page = await target.listMemories(options);
        seen.listed += page.memories.length;
        return page;
      };
    },
  });
  return seen;
}

/** Every page of the filter `q`, `limit` at a time; the pages asked for. */
async function walk(api: Api, q: string, limit: number): Promise<{ matches: { path: string; bytes: number }[]; pages: number }> {
  const matches: { path: string; bytes: number }[] = [];
  let after: string | null = null;
  let pages = 0;
  do {
    const { status, body } = await ask(api, 'search', { q, limit: String(limit), ...(after === null ? {} : { after }) });
    expect(status, JSON.stringify(body)).toBe(200);
    expect(body.memories.length).toBeLessThanOrEqual(limit);
    matches.push(...body.memories.map((m: { path: string; bytes: number }) => ({ path: m.path, bytes: m.bytes })));
    after = body.next;
    pages++;
  } while (after !== null);
  return { matches, pages };
}

describe('a filter that is a memory path', () => {
  for (const q of ['/memories/a/b', '/memories/a', '/memories/a/b/c.md', '/memories/a/bé.md', '/memories/z/019']) {
    it(`answers the memories whose path starts with ${q}, in order, a page at a time`, async () => {
      const want = all.filter((m) => m.path.startsWith(q));
      expect(want.length).toBeGreaterThan(0);
      for (const limit of [1, 2, 3, 200]) {
        const { matches, pages } = await walk(new Api(handler, INFO), q, limit);
        expect(matches, `limit ${limit}`).toEqual(want);
        expect(pages).toBe(Math.max(1, Math.ceil(want.length / limit)));
      }
    });
  }

  it('reads about as many memories as it shows, not the scope', async () => {
    const seen = counted(handler);
    const { body } = await ask(new Api(seen.handler, INFO), 'search', { q: '/memories/a/b/c.md' });
    expect(seen.contains).toBe(0);
    expect(seen.listed).toBeLessThanOrEqual(8);
    expect(body).toEqual({ memories: all.filter((m) => m.path === '/memories/a/b/c.md'), next: null });
  });

  it('answers nothing for a path no memory starts with, or a cursor past its matches', async () => {
    expect((await ask(new Api(handler, INFO), 'search', { q: '/memories/nothing' })).body).toEqual({ memories: [], next: null });
    expect((await ask(new Api(handler, INFO), 'search', { q: '/memories/a/b', after: '/memories/a/c.md' })).body).toEqual({
      memories: [],
      next: null,
    });
  });
});

describe('any other text', () => {
  for (const q of ['a/b', 'B', '/MEMORIES/A/B', '/memories/a/b/', 'memories/a', '0199']) {
    it(`is searched for in every path, in any case: ${JSON.stringify(q)}`, async () => {
      const want = all.filter((m) => m.path.toLowerCase().includes(q.toLowerCase()));
      for (const limit of [2, 200]) expect((await walk(new Api(handler, INFO), q, limit)).matches).toEqual(want);
    });
  }
});
