// A scope a page at a time through the handler: a directory's names with their sizes (no content
// read), and an export that streams from one snapshot. (A search over paths: list-memories tests.)
import { afterEach, beforeEach, expect, it } from 'vitest';
import { InvalidArgumentError, Rabosh, RaboshMemoryToolHandler } from '../index.js';
import { makeTempDir, removeDir } from './tmp-dir.js';

let dir: string;
let db: Rabosh;
let h: RaboshMemoryToolHandler;
beforeEach(async () => {
  dir = makeTempDir('rabosh-browse');
  db = await Rabosh.open(dir);
  h = new RaboshMemoryToolHandler(db);
  await h.importMemories([
    { path: '/memories/a', content: 'memory at a' },
    { path: '/memories/a/x.md', content: 'xx' },
    { path: '/memories/a.b', content: 'dot' },
    { path: '/memories/a/deep/y.md', content: 'yyy' },
    { path: '/memories/.hidden/h.md', content: 'hh' },
    { path: '/memories/z.md', content: 'é' },
  ]);
});
afterEach(async () => {
  await db.close();
  removeDir(dir);
});

it('lists a directory one level deep: hidden names too, a name both a memory and a directory once', async () => {
  const page = await h.children('/memories');
  expect(page).toMatchObject({ path: '/memories', memories: 6, bytes: 11 + 2 + 3 + 3 + 2 + 2, total: 4, next: null });
  expect(page.entries).toEqual([
    { name: '.hidden', path: '/memories/.hidden', memoryBytes: null, memories: 1, bytes: 2 },
    { name: 'a', path: '/memories/a', memoryBytes: 11, memories: 2, bytes: 5 },
    { name: 'a.b', path: '/memories/a.b', memoryBytes: 3, memories: 0, bytes: 0 },
    { name: 'z.md', path: '/memories/z.md', memoryBytes: 2, memories: 0, bytes: 0 },
  ]);
  expect((await h.children('/memories/a')).entries.map((e) => e.name)).toEqual(['deep', 'x.md']);
  expect(await h.children('/memories/nothing')).toMatchObject({ total: 0, entries: [], next: null });
});

it('pages a directory: every name once, in order, and reads no memory content', async () => {
  await h.importMemories(Array.from({ length: 25 }, (_, i) => ({ path: `/memories/p/n${String(i).padStart(2, '0')}`, content: 'c' })));
  const valuesBefore = db.stats().valuesRead;
  const names: string[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await h.children('/memories/p', { limit: 10, ...(after === undefined ? {} : { after }) });
    expect(page.total).toBe(25);
    names.push(...page.entries.map((e) => e.name));
    if (page.next === null) break;
    after = page.next;
  }
  expect(names).toEqual(Array.from({ length: 25 }, (_, i) => `n${String(i).padStart(2, '0')}`));
  expect(db.stats().valuesRead).toBe(valuesBefore);
});

it('streams the export a page at a time, as exportMemories answers, from one snapshot', async () => {
  const whole = await h.exportMemories();
  const streamed = [];
  for await (const m of h.exportStream({ pageSize: 2 })) {
    // Written during the export: the stream keeps to the state it started from.
    if (streamed.length === 0) await h.create({ command: 'create', path: '/memories/0-new.md', file_text: 'late' });
    streamed.push(m);
  }
  expect(streamed).toEqual(whole);
  expect(db.stats().openSnapshots).toBe(0);
  // Broken off early, it lets its snapshot go.
  for await (const _ of h.exportStream({ pageSize: 1 })) break;
  expect(db.stats().openSnapshots).toBe(0);
  await expect(h.exportStream({ pageSize: 0 }).next()).rejects.toBeInstanceOf(InvalidArgumentError);
});
