// listMemories on a store directory: pages of memories from their metadata, with or without a
// search over paths (list-memories-cases.ts), and a scope's pages hold its own memories only.
import { afterEach, beforeEach, expect, it } from 'vitest';
import { Rabosh, RaboshMemoryToolHandler } from '../index.js';
import { allPages, checkPaging, checkSearch } from './list-memories-cases.js';
import { makeTempDir, removeDir } from './tmp-dir.js';

let dir: string;
let db: Rabosh;
beforeEach(async () => {
  dir = makeTempDir('rabosh-list');
  db = await Rabosh.open(dir);
});
afterEach(async () => {
  await db.close();
  removeDir(dir);
});

it('lists every memory once, in path order, a page at a time, resuming exactly after the cursor', async () => {
  await checkPaging(new RaboshMemoryToolHandler(db));
});

it('pages the memories whose path contains a text, in any case, with the same cursor and checks', async () => {
  await checkSearch(new RaboshMemoryToolHandler(db));
});

it('lists the memories of its own scope only; an empty scope is one empty last page', async () => {
  const a = new RaboshMemoryToolHandler(db, { scope: 'a' });
  const b = new RaboshMemoryToolHandler(db, { scope: 'b' });
  expect(await b.listMemories()).toEqual({ memories: [], next: null });
  await a.importMemories([{ path: '/memories/x', content: 'x' }]);
  await b.importMemories([{ path: '/memories/y', content: 'yy' }]);
  expect((await allPages(b, 1)).flat().map((m) => [m.path, m.bytes])).toEqual([['/memories/y', 2]]);
  expect(await b.listMemories({ contains: '/memories/x' })).toEqual({ memories: [], next: null });
});
