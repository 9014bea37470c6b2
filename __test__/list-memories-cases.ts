// What listMemories must answer on every backend: pages in path byte order that together hold
// every memory once (hidden ones too) with its UTF-8 size, a `next` that resumes exactly after the
// last path whatever was written in between, and refusals of a bad limit or cursor.
import { expect } from 'vitest';
import { InvalidArgumentError, type ListedMemory, type RaboshMemoryToolHandler } from '../index.js';

/** Every page from the first, `limit` at a time. */
export async function allPages(h: RaboshMemoryToolHandler, limit: number): Promise<ListedMemory[][]> {
  const pages: ListedMemory[][] = [];
  let after: string | undefined;
  for (;;) {
    const page = await h.listMemories({ ...(after === undefined ? {} : { after }), limit });
    pages.push(page.memories);
    if (page.next === null) return pages;
    expect(page.next).toBe(page.memories.at(-1)!.path);
    after = page.next;
  }
}

export async function checkPaging(h: RaboshMemoryToolHandler): Promise<void> {
  const files = Array.from({ length: 2_000 }, (_, i) => ({
    path: `/memories/n${String(i).padStart(4, '0')}.md`,
    content: 'x'.repeat(i % 7),
  }));
  files.push(
    { path: '/memories/.hidden/k', content: 'hidden' },
    { path: '/memories/é/ü', content: 'éü' },
    { path: '/memories/A', content: '' },
  );
  await h.importMemories(files);
  const exported = await h.exportMemories();

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
