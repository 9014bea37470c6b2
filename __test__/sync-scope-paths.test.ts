// Two items of issue 22 the other sync tests leave out: the `scope` option (a sync touches its
// scope only, and two scopes map the same hosted store independently), and a hosted path that is
// an ancestor or descendant of another memory's (skipped and reported `path-conflict`, never
// renamed or truncated).
import { describe, expect, it } from 'vitest';
import { RaboshMemoryToolHandler } from '../index.js';
import { client, db, remote, useSyncFixture } from './sync-harness.js';

useSyncFixture('rabosh-sync-scope');

const contents = async (h: RaboshMemoryToolHandler) => new Map((await h.exportMemories()).map((m) => [m.path, m.content]));

describe('db.sync scope and path conflicts', () => {
  it('syncs only its scope; another scope is neither pushed nor written', async () => {
    const mine = new RaboshMemoryToolHandler(db, { scope: 'team' });
    const other = new RaboshMemoryToolHandler(db, { scope: 'default' });
    await mine.put('/memories/a.md', 'team a');
    await other.put('/memories/b.md', 'default b');
    remote.put('/c.md', 'hosted c');
    const r = await db.sync(client, { memoryStoreId: remote.storeId, scope: 'team' });
    expect(r.pushed.map((c) => c.path)).toEqual(['/memories/a.md']);
    expect(remote.snapshot()).toEqual(
      new Map([
        ['/a.md', 'team a'],
        ['/c.md', 'hosted c'],
      ]),
    );
    expect(await contents(mine)).toEqual(
      new Map([
        ['/memories/a.md', 'team a'],
        ['/memories/c.md', 'hosted c'],
      ]),
    );
    expect(await contents(other)).toEqual(new Map([['/memories/b.md', 'default b']]));
    // The other scope's first sync of the same store: its own base, so it pulls both and pushes b.
    const d = await db.sync(client, { memoryStoreId: remote.storeId, scope: 'default' });
    expect(d.firstSync).toBe(true);
    expect(d.pulled.map((c) => c.path).sort()).toEqual(['/memories/a.md', '/memories/c.md']);
    expect(d.pushed.map((c) => c.path)).toEqual(['/memories/b.md']);
  });

  it('a hosted memory above a local one is skipped as path-conflict, both kept', async () => {
    const h = new RaboshMemoryToolHandler(db);
    await h.put('/memories/d/e.md', 'local below');
    remote.put('/d', 'hosted above');
    const r = await db.sync(client, { memoryStoreId: remote.storeId });
    const skipped = r.skipped.map((s) => [s.reason, s.side, s.path]).sort();
    // The pull of /d meets the local /memories/d/e.md, and the push of /d/e.md the hosted /d.
    expect(skipped).toEqual([
      ['path-conflict', 'local', '/memories/d/e.md'],
      ['path-conflict', 'remote', '/memories/d'],
    ]);
    expect(r.rounds).toBe(1); // a rule no retry changes: not pushed again round after round
    expect(await contents(h)).toEqual(new Map([['/memories/d/e.md', 'local below']]));
    expect(remote.snapshot()).toEqual(new Map([['/d', 'hosted above']]));
  });
});
