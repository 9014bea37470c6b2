// The hosted store is read in path-ordered pages (`limit`, `page` cursor) and written with at
// most `concurrency` requests in flight (issue 22): a store of 250 memories is pulled whole in
// pages of 20 with content, a no-change sync lists it in ceil(250 / 100) = 3 pages, and a push of
// 40 memories never has more than the bound in flight at the stand-in.
import { describe, expect, it } from 'vitest';
import { client, db, h, remote, useSyncFixture } from './sync-harness.js';

useSyncFixture('rabosh-sync-paging');

describe('db.sync paging and concurrency', () => {
  it('reads every page of a store larger than one page', async () => {
    for (let i = 0; i < 250; i++) remote.put(`/p/m${String(i).padStart(3, '0')}.md`, `memory ${i}`);
    const first = await db.sync(client, { memoryStoreId: remote.storeId });
    expect(first.pulled).toHaveLength(250);
    expect(first.requests).toBe(Math.ceil(250 / 20)); // one listing with content, 20 a page
    expect((await h.exportMemories()).length).toBe(250);
    const second = await db.sync(client, { memoryStoreId: remote.storeId });
    expect([second.pushed, second.pulled, second.deleted, second.conflicts, second.skipped].flat()).toEqual([]);
    expect(second.requests).toBe(3);
    // A change on the last page is found.
    remote.put('/p/m249.md', 'changed');
    const third = await db.sync(client, { memoryStoreId: remote.storeId });
    expect(third.pulled.map((c) => c.path)).toEqual(['/memories/p/m249.md']);
  });

  it('keeps at most `concurrency` requests in flight', async () => {
    for (let i = 0; i < 40; i++) await h.put(`/memories/m${i}.md`, `memory ${i}`);
    // Each answer waits, so that a client without a bound would have all 40 out at once.
    remote.delayMs = 50;
    const r = await db.sync(client, { memoryStoreId: remote.storeId, concurrency: 3 });
    expect(r.pushed).toHaveLength(40);
    expect(remote.maxInFlight).toBeLessThanOrEqual(3);
    expect(remote.maxInFlight).toBeGreaterThan(1); // and it does send them side by side
  });
});
