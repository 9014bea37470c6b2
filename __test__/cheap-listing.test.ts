// Issue 24: a listing of up to 8,192 memories (16,384 lines as the index bounds them, each name
// counted as a memory and a directory) from a listing index already built is answered on the
// calling thread (the binding's viewIfCheap), not on the libuv pool: for the bench's 5,000 × 64 B
// directory the pool hop and its promise cost more than the listing itself. Larger listings (and
// a root whose two levels hold more) still go to the pool, and both paths answer the same text.
// Shown failing on the old addon (1,024 lines): viewIfCheap answered null for 5,000 memories.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Rabosh, RaboshMemoryToolHandler } from '../index.js';
import { NativeMemories } from '../src/native.js';
import { storeNative } from '../src/store.js';
import { makeTempDir, removeDir } from './tmp-dir.js';

const SMALL = 5_000;
const LARGE = 9_000;
const MAX_CHARS = 1e9;

describe('listings answered on the calling thread', () => {
  let dir: string;
  let db: Rabosh;
  let handler: RaboshMemoryToolHandler;
  let native: NativeMemories;

  beforeAll(async () => {
    dir = makeTempDir('rabosh-cheap-listing');
    db = await Rabosh.open(dir, { durability: 'buffered' });
    handler = new RaboshMemoryToolHandler(db, { listingIndex: true });
    const creates: Promise<string>[] = [];
    for (let i = 0; i < SMALL; i++)
      creates.push(handler.create({ command: 'create', path: `/memories/small/n${i}.md`, file_text: `s${i}\n` }));
    for (let i = 0; i < LARGE; i++)
      creates.push(handler.create({ command: 'create', path: `/memories/large/n${i}.md`, file_text: `l${i}\n` }));
    for (const answer of await Promise.all(creates)) expect(answer).toMatch(/^File created/);
    // The first listing builds the index (on the pool); the binding then knows each node's size.
    await handler.view({ command: 'view', path: '/memories' });
    native = new NativeMemories(storeNative(db), {
      scope: 'default',
      maxMemoryBytes: 1 << 30,
      createOverwrites: false,
      trackAccess: false,
      listingIndex: true,
    });
  });

  afterAll(async () => {
    await db?.close();
    removeDir(dir);
  });

  it(`answers a listing of ${SMALL.toLocaleString('en-US')} memories there, the same text the pool gives`, async () => {
    const cheap = native.viewIfCheap('/memories/small', null, MAX_CHARS);
    expect(typeof cheap).toBe('string');
    const pooled = await native.view('/memories/small', null, MAX_CHARS);
    expect(pooled).toMatchObject({ type: 'Dir' });
    expect(cheap).toBe((pooled as { text: string }).text);
    expect((cheap as string).split('\n')).toHaveLength(SMALL + 2);
    expect(await handler.view({ command: 'view', path: '/memories/small' })).toBe(cheap);
  });

  it(`leaves a listing of ${LARGE.toLocaleString('en-US')}, and a root holding both, to the pool`, async () => {
    for (const path of ['/memories/large', '/memories']) {
      expect(native.viewIfCheap(path, null, MAX_CHARS)).toBeNull();
      const pooled = (await native.view(path, null, MAX_CHARS)) as { type: string; text: string };
      expect(pooled.type).toBe('Dir');
      expect(await handler.view({ command: 'view', path })).toBe(pooled.text);
    }
  });

  it('still answers a small file view there', async () => {
    const path = '/memories/small/n7.md';
    const cheap = native.viewIfCheap(path, null, MAX_CHARS);
    expect(cheap).toMatch(/^Here's the content of \/memories\/small\/n7\.md with line numbers:\n {5}1\ts7\n/);
    expect(await handler.view({ command: 'view', path })).toBe(cheap);
  });
});
