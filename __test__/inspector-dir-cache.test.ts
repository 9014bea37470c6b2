// The inspector's server keeps the directories the page lists and brings them up to date from
// the change feed: the root's names after a write elsewhere cost that write's directory, not a
// read of the whole scope, and every answer stays what `handler.children` answers at that moment
// (the page's header, what `handler.usage` counts), whatever the commands, from this process or
// another, and when the feed cannot name what changed.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Rabosh, RaboshMemoryToolHandler } from '../index.js';
import { Api } from '../apps/cli/src/inspector/api.js';
import { ask, runInAnotherProcess } from './inspector-harness.js';

const work = mkdtempSync(join(tmpdir(), 'rabosh-inspector-dir-cache-'));
const INFO = { name: 'store', backend: 'directory', scope: 'default', history: false, actor: { type: 'user', id: 'inspector' } } as const;

let db: Rabosh;
let handler: RaboshMemoryToolHandler;

beforeAll(async () => {
  db = await Rabosh.open(join(work, 'store'));
  handler = new RaboshMemoryToolHandler(db);
});

afterAll(async () => {
  await db?.close();
  rmSync(work, { recursive: true, force: true });
});

/** `handler`, counting the directories its `children` reads. */
function counted(h: RaboshMemoryToolHandler): { handler: RaboshMemoryToolHandler; reads: string[] } {
  const reads: string[] = [];
  const proxy = new Proxy(h, {
    get(target, key) {
      const v = Reflect.get(target, key, target) as unknown;
      if (typeof v !== 'function') return v;
      return (...args: unknown[]) => {
        if (key === 'children') reads.push(args[0] as string);
        return (v as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { handler: proxy, reads };
}

/** What the server answers for a directory's page, beside what the store answers now. */
async function same(api: Api, dir: string, limit = 5_000, after?: string): Promise<void> {
  const got = await ask(api, 'children', { path: dir, limit: String(limit), ...(after === undefined ? {} : { after }) });
  const want = await handler.children(dir, { limit, ...(after === undefined ? {} : { after }) });
  expect(got.status, JSON.stringify(got.body)).toBe(200);
  const { digest, ...answer } = got.body;
  expect(typeof digest).toBe('string');
  expect(answer, dir).toEqual({
    path: want.path,
    memories: want.memories,
    bytes: want.bytes,
    total: want.total,
    entries: want.entries.map((e) => [e.name, e.memoryBytes, e.memories, e.bytes]),
    next: want.next,
  });
}

async function run(input: Record<string, unknown>): Promise<void> {
  await handler.execute(input as Parameters<RaboshMemoryToolHandler['execute']>[0]);
}

describe('the inspector server keeps the listings it answered', () => {
  it("answers the root again after a write without reading the scope's every memory again", async () => {
    await handler.importMemories([
      ...Array.from({ length: 30 }, (_, i) => ({ path: `/memories/cost/a/f${i}.md`, content: 'x'.repeat(i) })),
      { path: '/memories/cost/b/one.md', content: 'one' },
    ]);
    const { handler: h, reads } = counted(handler);
    const api = new Api(h, INFO);
    const before = (await ask(api, 'children', { path: '/memories/cost' })).body;
    expect(reads).toEqual(['/memories/cost']);
    reads.length = 0;
    await run({ command: 'create', path: '/memories/cost/a/new.md', file_text: 'new\n' });
    const after = (await ask(api, 'children', { path: '/memories/cost' })).body;
    expect(after.memories).toBe(before.memories + 1);
    expect(after.entries[0]).toEqual(['a', null, 31, before.entries[0][3] + 4]);
    // Only the name the write lies under is read again, not the directory asked for.
    expect(reads).toEqual(['/memories/cost/a']);
  });

  it('answers what the store answers, after every kind of command, and the header counts as usage() does', async () => {
    const api = new Api(handler, INFO);
    const dirs = ['/memories', '/memories/p', '/memories/p/q', '/memories/p/q/r', '/memories/s'];
    // A fixed sequence that reaches every case: a name that is a memory and a directory at once,
    // hidden names, renames of files and of directories in and out of listed ones, and deletions
    // that empty a directory.
    let seed = 7;
    const rand = (n: number) => {
      // mulberry32: every bit of it varies, so every command comes up.
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) % n;
    };
    // Byte order is not UTF-16 order: U+FF46 sorts before U+1F600 in UTF-16, after it in UTF-8.
    const names = ['a.md', 'b.md', '.hidden.md', 'é.md', '\u{1F600}.md', '\uFF46.md', 'q', 'r'];
    const newPath = () => {
      const depth = 1 + rand(3);
      const segs = Array.from({ length: depth }, () => ['p', 's', 'q', 'r'][rand(4)]);
      return `/memories/${segs.join('/')}/${names[rand(names.length)]}`;
    };
    /** Mostly a memory that is there, so that edits, deletions and renames find one. */
    const somePath = async () => {
      const there = (await handler.listMemories({ limit: 1000 })).memories;
      return there.length === 0 || rand(4) === 0 ? newPath() : there[rand(there.length)]!.path;
    };
    const parent = (path: string) => path.slice(0, path.lastIndexOf('/'));
    // A name that is a memory and a directory at once.
    await handler.importMemories([
      { path: '/memories/p/q', content: 'both' },
      { path: '/memories/p/q/r/a.md', content: 'below' },
    ]);
    for (const d of dirs) await same(api, d);
    for (let step = 0; step < 150; step++) {
      const path = await somePath();
      switch (rand(6)) {
        case 0:
          await run({ command: 'create', path: newPath(), file_text: 'y'.repeat(rand(50)) });
          break;
        case 1:
          await run({ command: 'create', path, file_text: 'w'.repeat(rand(50)) });
          break;
        case 2:
          await run({ command: 'insert', path, insert_line: 0, insert_text: 'more\n' });
          break;
        case 3:
          await run({ command: 'delete', path: rand(3) === 0 ? parent(path) : path });
          break;
        case 4:
          await run({ command: 'rename', old_path: parent(path), new_path: parent(newPath()) });
          break;
        default:
          await run({ command: 'rename', old_path: path, new_path: newPath() });
      }
      if (step % 3 === 0) {
        for (const d of dirs) await same(api, d);
        const usage = await handler.usage();
        expect((await ask(api, 'usage')).body).toEqual({ memories: usage.memories, bytes: usage.bytes });
      }
    }
    // A name that sorts apart in UTF-16 and UTF-8 arrives in a kept listing.
    await run({ command: 'create', path: '/memories/s/\u{1F600}.md', file_text: 'x' });
    await same(api, '/memories/s');
    await run({ command: 'create', path: '/memories/s/\uFF46.md', file_text: 'y' });
    await same(api, '/memories/s');
    // Pages of a kept listing start after the name given, as the store's do, whether or not the
    // name is there.
    for (const after of ['p', 'o', 'zz', '\u{1F600}', '\uFF46']) await same(api, '/memories', 2, after);
    for (const d of dirs) await same(api, d, 1, 'b.md');
  });

  it("sees another process's writes, and starts over when the feed cannot name what changed", async () => {
    const { handler: h, reads } = counted(handler);
    const api = new Api(h, INFO);
    await same(api, '/memories');
    runInAnotherProcess(join(work, 'store'), { command: 'create', path: '/memories/elsewhere/x.md', file_text: 'from another process' });
    await same(api, '/memories');
    // More paths at once than the feed's poll collects: every listing is read again.
    await handler.importMemories(Array.from({ length: 10_050 }, (_, i) => ({ path: `/memories/bulk/m${i}.md`, content: 'b' })));
    reads.length = 0;
    await same(api, '/memories');
    expect(reads).toContain('/memories');
    // A directory too long to keep whole is answered page by page, from the store.
    await same(api, '/memories/bulk', 100);
    await same(api, '/memories/bulk', 100, 'm5000.md');
  });
});
