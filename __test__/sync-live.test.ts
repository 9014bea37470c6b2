// db.sync against the real hosted memory stores, only on explicit opt-in (RABOSH_LIVE=1), like
// live.test.ts. Opting in without ANTHROPIC_API_KEY fails: a live run that silently did nothing
// would prove nothing. It creates a throwaway memory store, syncs both ways with a conflict and a
// delete, and deletes the store.
import { describe, expect, it } from 'vitest';
import Anthropic from '@anthropic-ai/sdk';
import { Rabosh, RaboshMemoryToolHandler } from '../index.js';
import { makeTempDir, removeDir } from './tmp-dir.js';

const live = process.env.RABOSH_LIVE === '1';

describe('live hosted memory store sync', () => {
  if (!live) {
    it('is off (set RABOSH_LIVE=1 and ANTHROPIC_API_KEY to sync with a real memory store)', () => {
      expect(process.env.RABOSH_LIVE).not.toBe('1');
    });
    return;
  }

  it('pushes, pulls, resolves a conflict and carries a delete with a real memory store', async () => {
    expect(process.env.ANTHROPIC_API_KEY, 'RABOSH_LIVE=1 needs ANTHROPIC_API_KEY').toBeTruthy();
    const client = new Anthropic();
    const store = await client.beta.memoryStores.create({ name: `rabosh-sync-live-${Date.now()}` });
    const dir = makeTempDir('rabosh-sync-live');
    const db = await Rabosh.open(dir, { history: true });
    const h = new RaboshMemoryToolHandler(db);
    try {
      const opts = { memoryStoreId: store.id };
      await h.put('/memories/local.md', 'from rabosh');
      await client.beta.memoryStores.memories.create(store.id, { path: '/hosted.md', content: 'from the API' });
      const first = await db.sync(client, opts);
      expect(first.pushed.map((c) => c.remotePath)).toEqual(['/local.md']);
      expect(first.pulled.map((c) => c.path)).toEqual(['/memories/hosted.md']);
      expect((await h.get('/memories/hosted.md'))?.content).toBe('from the API');

      const mine = await h.put('/memories/hosted.md', 'edited locally');
      const hosted = first.pulled[0]?.remoteId as string;
      await client.beta.memoryStores.memories.update(hosted, { memory_store_id: store.id, content: 'edited remotely' });
      await h.remove('/memories/local.md');
      const second = await db.sync(client, opts);
      expect(second.conflicts).toEqual([
        expect.objectContaining({ kind: 'edit-edit', winner: 'remote', kept: { side: 'local', versionId: mine.versionId } }),
      ]);
      expect(second.deleted).toEqual([expect.objectContaining({ side: 'remote', remotePath: '/local.md' })]);
      expect((await h.get('/memories/hosted.md'))?.content).toBe('edited remotely');
      const third = await db.sync(client, opts);
      expect([third.pushed, third.pulled, third.deleted, third.conflicts].flat()).toEqual([]);
    } finally {
      await db.close();
      removeDir(dir);
      await client.beta.memoryStores.delete(store.id);
    }
  });
});
