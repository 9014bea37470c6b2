// db.sync(client, options) against the memory-stores stand-in, through the real SDK client:
// push, pull, three-way merge, conflicts that keep the losing edit, deletes and their guards,
// renames carried as renames, preconditions on both sides, retries, lost responses, skips.
import { describe, expect, it } from 'vitest';
import { Rabosh, type SyncReport } from '../index.js';
import { client, db, h, remote, reopen, sha, sync, useSyncFixture } from './sync-harness.js';
import { makeTempDir, removeDir } from './tmp-dir.js';

useSyncFixture('rabosh-sync', { actor: { type: 'app', id: 'test' } });

async function localFiles(): Promise<Map<string, string>> {
  return new Map((await h.exportMemories()).map((m) => [m.path, m.content]));
}

describe('db.sync', () => {
  it('pushes local memories, pulls remote ones, and a second sync does nothing', async () => {
    await h.put('/memories/a.md', 'local a');
    await h.put('/memories/d/b.md', 'local b');
    remote.put('/r.md', 'remote r');
    const first = await sync();
    expect(first.firstSync).toBe(true);
    expect(first.pushed.map((c) => c.remotePath).sort()).toEqual(['/a.md', '/d/b.md']);
    expect(first.pulled.map((c) => c.path)).toEqual(['/memories/r.md']);
    expect(remote.snapshot()).toEqual(
      new Map([
        ['/a.md', 'local a'],
        ['/d/b.md', 'local b'],
        ['/r.md', 'remote r'],
      ]),
    );
    expect(await localFiles()).toEqual(
      new Map([
        ['/memories/a.md', 'local a'],
        ['/memories/d/b.md', 'local b'],
        ['/memories/r.md', 'remote r'],
      ]),
    );
    const before = remote.requests;
    const second = await sync();
    expect(second.firstSync).toBe(false);
    expect([second.pushed, second.pulled, second.deleted, second.conflicts, second.skipped].every((x) => x.length === 0)).toBe(true);
    expect(remote.requests - before).toBe(1); // one list page
    expect(second.requests).toBe(1);
  });

  it('refuses a store without history, and a client without memoryStores names the minimum SDK', async () => {
    const plainDir = makeTempDir('rabosh-sync-plain');
    const plain = await Rabosh.open(plainDir);
    try {
      await expect(plain.sync(client, { memoryStoreId: remote.storeId })).rejects.toThrow(/history: true/);
    } finally {
      await plain.close();
      removeDir(plainDir);
    }
    await expect(db.sync({ beta: {} }, { memoryStoreId: remote.storeId })).rejects.toThrow(/0\.91\.0 or later/);
    await expect(db.sync(client, { memoryStoreId: remote.storeId, bogus: 1 } as never)).rejects.toThrow(/unknown sync option/);
  });

  it('carries edits one way each, by content hash against the base', async () => {
    await h.put('/memories/x.md', 'v1');
    await h.put('/memories/y.md', 'y1');
    await sync();
    await h.put('/memories/x.md', 'v2 local');
    remote.put('/y.md', 'y2 remote');
    const r = await sync();
    expect(r.pushed).toEqual([expect.objectContaining({ path: '/memories/x.md', operation: 'modified', contentSha256: sha('v2 local') })]);
    expect(r.pulled).toEqual([expect.objectContaining({ path: '/memories/y.md', operation: 'modified', contentSha256: sha('y2 remote') })]);
    expect(r.conflicts).toEqual([]);
    expect(remote.byPath('/x.md')?.content).toBe('v2 local');
    expect((await h.get('/memories/y.md'))?.content).toBe('y2 remote');
    // The pulled change is a local version by the sync's actor.
    const v = await h.versions({ path: '/memories/y.md', limit: 1 });
    expect(v.data[0]?.actor).toEqual({ type: 'memory_store', id: remote.storeId });
    expect(v.data[0]?.contentSha256).toBe(sha('y2 remote'));
  });

  it('hostedActors records each pulled change with its hosted author', async () => {
    remote.put('/s.md', 'by a session'); // the stand-in's session_actor
    const r = await sync({ hostedActors: true });
    expect(r.pulled).toHaveLength(1);
    const v = await h.versions({ path: '/memories/s.md', limit: 1 });
    expect(v.data[0]?.actor).toEqual({ type: 'session_actor', id: 'sesn_standin' });
    expect(r.requests).toBe(2); // the full listing, and the version's author
  });

  it('a conflict keeps the remote as current and the local edit as a revertible version, reported', async () => {
    await h.put('/memories/c.md', 'base');
    await sync();
    const mine = await h.put('/memories/c.md', 'local edit');
    remote.put('/c.md', 'remote edit');
    const r = await sync();
    expect(r.conflicts).toEqual([
      {
        kind: 'edit-edit',
        path: '/memories/c.md',
        remotePath: '/c.md',
        remoteId: remote.byPath('/c.md')?.id,
        localSha256: sha('local edit'),
        remoteSha256: sha('remote edit'),
        winner: 'remote',
        kept: { side: 'local', versionId: mine.versionId },
      },
    ]);
    expect((await h.get('/memories/c.md'))?.content).toBe('remote edit');
    const kept = await h.version(mine.versionId as string);
    expect(kept?.content).toBe('local edit');
    await h.revert('/memories/c.md', mine.versionId as string);
    expect((await sync()).pushed.map((c) => c.path)).toEqual(['/memories/c.md']);
    expect(remote.byPath('/c.md')?.content).toBe('local edit');
  });

  it("onConflict 'local' and a function choose the side; the remote loser stays a hosted version", async () => {
    await h.put('/memories/a.md', 'base a');
    await h.put('/memories/b.md', 'base b');
    await sync();
    await h.put('/memories/a.md', 'local a');
    await h.put('/memories/b.md', 'local b');
    remote.put('/a.md', 'remote a');
    remote.put('/b.md', 'remote b');
    const remoteA = remote.byPath('/a.md')?.versionId;
    const seen: string[] = [];
    const r = await sync({
      onConflict: async (c: { path: string }) => {
        seen.push(c.path);
        return c.path.endsWith('a.md') ? 'local' : 'remote';
      },
    });
    expect(seen.sort()).toEqual(['/memories/a.md', '/memories/b.md']);
    expect(remote.byPath('/a.md')?.content).toBe('local a');
    expect((await h.get('/memories/b.md'))?.content).toBe('remote b');
    const a = r.conflicts.find((c) => c.path === '/memories/a.md');
    expect(a?.winner).toBe('local');
    expect(a?.kept).toEqual({ side: 'remote', memoryVersionId: remoteA });
    expect(remote.versions.find((v) => v.id === remoteA)?.content).toBe('remote a');
  });

  it('deletes both ways; delete against edit keeps the edit', async () => {
    for (const n of ['1', '2', '3', '4']) await h.put(`/memories/${n}.md`, `n${n}`);
    await sync();
    await h.remove('/memories/1.md');
    remote.remove('/2.md');
    await h.remove('/memories/3.md');
    remote.put('/3.md', 'edited there');
    remote.remove('/4.md');
    await h.put('/memories/4.md', 'edited here');
    const r = await sync();
    expect(r.deleted.sort((x, y) => x.path.localeCompare(y.path))).toEqual([
      expect.objectContaining({ side: 'remote', path: '/memories/1.md' }),
      expect.objectContaining({ side: 'local', path: '/memories/2.md' }),
    ]);
    expect(r.conflicts.map((c) => [c.kind, c.path, c.winner]).sort()).toEqual([
      ['delete-edit', '/memories/3.md', 'remote'],
      ['edit-delete', '/memories/4.md', 'local'],
    ]);
    expect(remote.snapshot()).toEqual(
      new Map([
        ['/3.md', 'edited there'],
        ['/4.md', 'edited here'],
      ]),
    );
    expect(await localFiles()).toEqual(
      new Map([
        ['/memories/3.md', 'edited there'],
        ['/memories/4.md', 'edited here'],
      ]),
    );
    expect((await sync()).pushed).toEqual([]);
  });

  it('an emptied side is not read as a mass delete, and deletions are capped per sync', async () => {
    for (let i = 0; i < 30; i++) await h.put(`/memories/m${i}.md`, `c${i}`);
    await sync();
    for (const m of [...remote.memories.values()]) remote.remove(m.path);
    const r = await sync();
    expect(r.deleted).toEqual([]);
    expect(r.skipped.filter((s) => s.reason === 'empty-side')).toHaveLength(30);
    expect((await localFiles()).size).toBe(30);
    const forced = await sync({ deletes: { allowEmptySide: true, max: 100 } });
    expect(forced.deleted).toHaveLength(30);
    expect((await localFiles()).size).toBe(0);
  });

  it('deletes: false keeps deletions to their side', async () => {
    await h.put('/memories/a.md', 'a');
    await h.put('/memories/b.md', 'b');
    await sync();
    await h.remove('/memories/a.md');
    const r = await sync({ deletes: false });
    expect(r.deleted).toEqual([]);
    expect(r.skipped).toEqual([expect.objectContaining({ reason: 'deletes-off', path: '/memories/a.md' })]);
    expect(remote.byPath('/a.md')?.content).toBe('a');
  });

  it('caps deletions carried in one sync and carries the rest next time', async () => {
    for (let i = 0; i < 40; i++) await h.put(`/memories/m${i}.md`, `c${i}`);
    await sync();
    for (let i = 0; i < 30; i++) await h.remove(`/memories/m${i}.md`);
    const first = await sync();
    expect(first.deleted).toHaveLength(10);
    expect(first.skipped.filter((s) => s.reason === 'delete-cap')).toHaveLength(20);
    await sync();
    await sync();
    expect(remote.memories.size).toBe(10);
  });

  it('renames are carried as renames both ways (ids kept)', async () => {
    await h.put('/memories/old.md', 'text');
    await h.put('/memories/r-old.md', 'other');
    await sync();
    const id = remote.byPath('/old.md')?.id;
    await h.execute({ command: 'rename', old_path: '/memories/old.md', new_path: '/memories/sub/new.md' });
    remote.rename('/r-old.md', '/r-new.md');
    const localId = (await h.versions({ path: '/memories/r-old.md', limit: 1 })).data[0]?.memoryId;
    const r = await sync();
    expect(r.pushed).toEqual([expect.objectContaining({ operation: 'renamed', remotePath: '/sub/new.md' })]);
    expect(r.pulled).toEqual([expect.objectContaining({ operation: 'renamed', path: '/memories/r-new.md' })]);
    expect(remote.byPath('/sub/new.md')?.id).toBe(id);
    expect(remote.memories.size).toBe(2);
    const v = await h.versions({ path: '/memories/r-new.md', limit: 1 });
    expect(v.data[0]?.operation).toBe('renamed');
    expect(v.data[0]?.memoryId).toBe(localId);
    expect((await sync()).pushed).toEqual([]);
  });

  it('maps a prefix: local /memories/<prefix>/… is hosted /…; others are left alone', async () => {
    await h.put('/memories/team/a.md', 'a');
    await h.put('/memories/private.md', 'mine');
    remote.put('/b.md', 'b');
    await sync({ prefix: 'team' });
    expect(remote.snapshot()).toEqual(
      new Map([
        ['/a.md', 'a'],
        ['/b.md', 'b'],
      ]),
    );
    expect((await h.get('/memories/team/b.md'))?.content).toBe('b');
    expect(await h.get('/memories/b.md')).toBeNull();
  });

  it('skips what the hosted rules refuse, reported and never truncated', async () => {
    await h.put('/memories/big.md', 'x'.repeat(102_401));
    await h.put(`/memories/${Array.from({ length: 21 }, (_, i) => `s${i}`).join('/')}`, 'deep');
    await h.put('/memories/cafe\u0301.md', 'not NFC');
    await h.put('/memories/ok.md', 'fine');
    const r = await sync();
    expect(r.skipped.map((s) => s.reason).sort()).toEqual(['path-rules', 'path-rules', 'too-large']);
    expect(remote.snapshot()).toEqual(new Map([['/ok.md', 'fine']]));
  });

  it('answers 429 and 5xx with Retry-After and backoff; requests are counted', async () => {
    await h.put('/memories/a.md', 'a');
    remote.faults.push({ method: 'GET', kind: 429, retryAfter: '0' }, { method: 'POST', kind: 503 }, { method: 'POST', kind: 500 });
    const r = await sync();
    expect(r.pushed).toHaveLength(1);
    expect(r.requests).toBe(5); // list 429 + list + create 503 + create 500 + create
    expect(remote.byPath('/a.md')?.content).toBe('a');
  });

  it('a lost response to a push is not mistaken for a remote edit', async () => {
    await h.put('/memories/a.md', 'one');
    await sync();
    await h.put('/memories/a.md', 'two');
    // The update lands, its answer never arrives, and every retry is lost too: the sync gives up.
    remote.faults.push({ method: 'POST', url: '/memories/', kind: 'lost', times: 10 });
    await sync({ maxAttempts: 2 }).catch(() => undefined);
    expect(remote.byPath('/a.md')?.content).toBe('two');
    remote.faults.length = 0;
    // Edited again before the next sync: the remote holds our own 'two', not a remote edit.
    await h.put('/memories/a.md', 'three');
    const r = await sync();
    expect(r.conflicts).toEqual([]);
    expect(remote.byPath('/a.md')?.content).toBe('three');
  });

  it('a lost create is adopted, not duplicated', async () => {
    await h.put('/memories/n.md', 'new');
    remote.faults.push({ method: 'POST', kind: 'lost' });
    const r = await sync();
    expect(remote.memories.size).toBe(1);
    expect(r.conflicts).toEqual([]);
    const again = await sync();
    expect([again.pushed, again.pulled, again.skipped].flat()).toEqual([]);
  });

  it('a dry run reports and writes nothing', async () => {
    await h.put('/memories/a.md', 'a');
    remote.put('/b.md', 'b');
    const r = await sync({ dryRun: true });
    expect(r.pushed).toHaveLength(1);
    expect(r.pulled).toHaveLength(1);
    expect(remote.snapshot()).toEqual(new Map([['/b.md', 'b']]));
    expect(await localFiles()).toEqual(new Map([['/memories/a.md', 'a']]));
    expect((await sync()).firstSync).toBe(true);
  });

  it('syncEvery runs until stopped, and db.close() stops it', async () => {
    const reports: SyncReport[] = [];
    const runner = db.syncEvery(10, client, { memoryStoreId: remote.storeId, onReport: (r) => reports.push(r) });
    await h.put('/memories/a.md', 'a');
    await expect.poll(() => remote.byPath('/a.md')?.content, { timeout: 30_000 }).toBe('a');
    await runner.stop();
    const n = reports.length;
    await new Promise((r) => setTimeout(r, 100));
    expect(reports.length).toBe(n);
    db.syncEvery(10, client, { memoryStoreId: remote.storeId, onReport: (r) => reports.push(r) });
    await db.close(); // waits for the running sync and stops the loop
    const m = reports.length;
    await new Promise((r) => setTimeout(r, 100));
    expect(reports.length).toBe(m);
    await reopen();
  });
});
