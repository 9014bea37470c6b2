// db.sync on a PostgreSQL store (the same seam: memory changes and base records in one
// SERIALIZABLE transaction): push, pull, a conflict kept as a version, a rename, a delete, and two
// store handles syncing the same scope at once without doubling anything.
import { describe, expect, it } from 'vitest';
import Anthropic from '@anthropic-ai/sdk';
import { Rabosh, RaboshMemoryToolHandler } from '../index.js';
import { MemoryStoresStandIn } from './fixtures/memory-stores-stand-in.js';
import { freshPgUrl } from './pg-url.js';

describe('db.sync over PostgreSQL', () => {
  it('syncs both ways, keeps a conflict, and two handles at once converge', async () => {
    const remote = await new MemoryStoresStandIn().start();
    const client = new Anthropic({ baseURL: remote.baseURL, apiKey: 'test' });
    const url = freshPgUrl('sync');
    const db = await Rabosh.open(url, { history: true });
    const other = await Rabosh.open(url, { history: true });
    const h = new RaboshMemoryToolHandler(db);
    const opts = { memoryStoreId: remote.storeId };
    try {
      for (let i = 0; i < 12; i++) await h.put(`/memories/m${i}.md`, `local ${i}`);
      remote.put('/r.md', 'remote');
      const first = await db.sync(client, opts);
      expect(first.pushed).toHaveLength(12);
      expect((await h.get('/memories/r.md'))?.content).toBe('remote');

      const mine = await h.put('/memories/m0.md', 'edited here');
      remote.put('/m0.md', 'edited there');
      remote.rename('/m1.md', '/moved.md');
      await h.remove('/memories/m2.md');
      for (let i = 3; i < 12; i++) remote.put(`/m${i}.md`, `remote ${i}`);
      const [a, b] = await Promise.all([db.sync(client, opts), other.sync(client, opts)]);
      const conflicts = [...a.conflicts, ...b.conflicts];
      expect(conflicts.length).toBeGreaterThanOrEqual(1);
      expect(conflicts.every((c) => c.kind === 'edit-edit' && c.path === '/memories/m0.md')).toBe(true);
      await db.sync(client, opts);
      const local = new Map((await h.exportMemories()).map((m) => [m.path.slice('/memories'.length), m.content]));
      expect(local).toEqual(remote.snapshot());
      expect(remote.byPath('/m2.md')).toBeUndefined();
      expect(local.get('/moved.md')).toBe('local 1');
      expect(local.get('/m0.md')).toBe('edited there');
      expect((await h.version(mine.versionId as string))?.content).toBe('edited here');
      // Each hosted change was pulled once: one local version per memory for this round.
      const m5 = await h.versions({ path: '/memories/m5.md' });
      expect(m5.data.filter((v) => v.contentSha256 !== null && v.operation === 'modified')).toHaveLength(1);
    } finally {
      await other.close();
      await db.close();
      await remote.close();
    }
  });
});
