// What listMemories must answer on every backend: pages in path byte order that together hold
// every memory once (hidden ones too) with its UTF-8 size, a `next` that resumes exactly after the
// last path whatever was written in between, the same with a search over paths (`contains`), and
// refusals of a bad limit, cursor, text or option.
import { expect } from 'vitest';
import { InvalidArgumentError, InvalidOptionError, type ListedMemory, type RaboshMemoryToolHandler } from '../index.js';

/** Every page from the first, `limit` at a time, of the memories whose path contains `contains`. */
export async function allPages(h: RaboshMemoryToolHandler, limit: number, contains?: string): Promise<ListedMemory[][]> {
  const pages: ListedMemory[][] = [];
  let after: string | undefined;
  for (;;) {
    const page = await h.listMemories({
      ...(after === undefined ? {} : { after }),
      limit,
      ...(contains === undefined ? {} : { contains }),
    });
    pages.push(page.memories);
    if (page.next === null) return pages;
    expect(page.next).toBe(page.memories.at(-1)!.path);
    after = page.next;
  }
}

/**
 * Imports `count` memories at `path(i)` of `i % sizes` bytes, then three more (a hidden one, one
 * of non-ASCII UTF-8, an empty one) at `extras`; answers what went in and what exports.
 */
async function seeded(
  h: RaboshMemoryToolHandler,
  count: number,
  path: (i: number) => string,
  sizes: number,
  extras: [string, string, string],
) {
  const files = Array.from({ length: count }, (_, i) => ({ path: path(i), content: 'x'.repeat(i % sizes) }));
  files.push({ path: extras[0], content: 'hidden' }, { path: extras[1], content: 'éü' }, { path: extras[2], content: '' });
  await h.importMemories(files);
  return { files, exported: await h.exportMemories() };
}

export async function checkPaging(h: RaboshMemoryToolHandler): Promise<void> {
  const { files, exported } = await seeded(h, 2_000, (i) => `/memories/n${String(i).padStart(4, '0')}.md`, 7, [
    '/memories/.hidden/k',
    '/memories/é/ü',
    '/memories/A',
  ]);

  // Exactly two full pages and a third of 3: the second's next is not null, the third's is.
  const pages = await allPages(h, 1_000);
  expect(pages.map((p) => p.length)).toEqual([1_000, 1_000, 3]);
  const listed = pages.flat();
  expect(listed.map((m) => m.path)).toEqual(exported.map((m) => m.path));
  expect(listed.map((m) => m.bytes)).toEqual(exported.map((m) => Buffer.byteLength(m.content, 'utf8')));
  expect(listed.map((m) => m.updatedAt.getTime())).toEqual(exported.map((m) => m.updatedAt.getTime()));
  // Path byte order (UTF-8), not UTF-16 order: the same here, checked rather than assumed.
  const bytes = listed.map((m) => Buffer.from(m.path, 'utf8'));
  expect(bytes.every((b, i) => i === 0 || Buffer.compare(bytes[i - 1]!, b) < 0)).toBe(true);
  // A page that ends exactly at the last memory says so.
  const whole = await h.listMemories({ limit: files.length });
  expect([whole.memories.length, whole.next]).toEqual([files.length, null]);

  // Writes between two pages move nothing across the cursor.
  const first = await h.listMemories({ limit: 10 });
  await h.execute({ command: 'create', path: '/memories/n0000.md.new', file_text: 'before the cursor' });
  await h.execute({ command: 'delete', path: first.next! });
  await h.execute({ command: 'delete', path: '/memories/n0010.md' });
  const second = await h.listMemories({ after: first.next!, limit: 3 });
  expect(first.next).toBe('/memories/n0007.md');
  expect(second.memories.map((m) => m.path)).toEqual(['/memories/n0008.md', '/memories/n0009.md', '/memories/n0011.md']);

  for (const limit of [0, -1, 1.5, 10_001, Number.NaN]) {
    await expect(h.listMemories({ limit }), String(limit)).rejects.toBeInstanceOf(InvalidArgumentError);
  }
  for (const after of ['/memories/../x', 'memories/a', '/memories/a/', '']) {
    await expect(h.listMemories({ after }), after).rejects.toBeInstanceOf(InvalidArgumentError);
  }
  expect(await h.listMemories({ after: '/memories/é/ü' })).toEqual({ memories: [], next: null });
}

export async function checkSearch(h: RaboshMemoryToolHandler): Promise<void> {
  const { exported } = await seeded(h, 300, (i) => `/memories/${i % 3 === 0 ? 'Notes' : 'logs'}/n${String(i).padStart(3, '0')}.md`, 5, [
    '/memories/.hidden/notes.md',
    '/memories/Ärger/Ü.md',
    '/memories/zz-notes',
  ]);
  const matching = (text: string) => exported.filter((m) => m.path.toLowerCase().includes(text.toLowerCase()));

  // Pages of the matches only, in path order, with their sizes and times; the last says so
  // although paths that do not match follow it.
  const pages = await allPages(h, 30, 'NOTES/');
  expect(pages.map((p) => p.length)).toEqual([30, 30, 30, 10]);
  const listed = pages.flat();
  expect(listed.map((m) => m.path)).toEqual(matching('notes/').map((m) => m.path));
  expect(listed.map((m) => m.bytes)).toEqual(matching('notes/').map((m) => Buffer.byteLength(m.content, 'utf8')));
  expect(listed.map((m) => m.updatedAt.getTime())).toEqual(matching('notes/').map((m) => m.updatedAt.getTime()));
  const exact = await h.listMemories({ contains: 'notes/', limit: 100 });
  expect([exact.memories.length, exact.next]).toEqual([100, null]);
  // Both sides in lower case, beyond ASCII too; hidden memories match like any other.
  expect((await h.listMemories({ contains: 'äRGER/ü' })).memories.map((m) => m.path)).toEqual(['/memories/Ärger/Ü.md']);
  expect((await h.listMemories({ contains: 'HIDDEN' })).memories.map((m) => m.path)).toEqual(['/memories/.hidden/notes.md']);
  expect(await h.listMemories({ contains: 'nowhere' })).toEqual({ memories: [], next: null });
  // Empty text: every memory.
  expect(await h.listMemories({ contains: '', limit: 50 })).toEqual(await h.listMemories({ limit: 50 }));

  // Writes between two pages move nothing across the cursor, matching or not.
  const first = await h.listMemories({ contains: 'notes', limit: 5 });
  expect(first.next).toBe('/memories/Notes/n009.md');
  await h.execute({ command: 'create', path: '/memories/Notes/n000.md.new', file_text: 'before the cursor' });
  await h.execute({ command: 'delete', path: first.next! });
  await h.execute({ command: 'delete', path: '/memories/Notes/n012.md' });
  await h.execute({ command: 'create', path: '/memories/Notes/n012.md.new', file_text: 'after the cursor' });
  const second = await h.listMemories({ contains: 'notes', after: first.next!, limit: 3 });
  expect(second.memories.map((m) => m.path)).toEqual(['/memories/Notes/n012.md.new', '/memories/Notes/n015.md', '/memories/Notes/n018.md']);

  // One validation for every listing: a search refuses what a listing refuses.
  for (const limit of [0, 10_001, 1.5]) {
    await expect(h.listMemories({ contains: 'notes', limit }), String(limit)).rejects.toBeInstanceOf(InvalidArgumentError);
  }
  for (const after of ['/memories/../x', '../x', '/memories/Notes/']) {
    await expect(h.listMemories({ contains: 'notes', after }), after).rejects.toBeInstanceOf(InvalidArgumentError);
  }
  for (const contains of [5, null, ['notes']]) {
    await expect(h.listMemories({ contains } as never), String(contains)).rejects.toBeInstanceOf(InvalidArgumentError);
  }
  // An unknown or misspelt option is refused, as every options object of the library refuses it.
  for (const options of [{ contain: 'notes' }, { text: 'notes' }, { after: undefined, cursor: 'x' }]) {
    await expect(h.listMemories(options as never), JSON.stringify(options)).rejects.toBeInstanceOf(InvalidOptionError);
  }
}
