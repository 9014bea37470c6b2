// A sync that resolves a conflict and then fails before it returns (here: a push the hosted store
// keeps refusing with 500, one attempt allowed) never delivered its report: the next sync that
// completes reports that conflict once, marked carriedOver, and the one after reports nothing.
// The conflict records live in the base's reserved key space: no listing, export or history sees
// them. (A SIGKILL in the same place is sync-crash.test.ts.)
import { describe, expect, it } from 'vitest';
import { Rabosh } from '../index.js';
import { client, dir, h, remote, sha, sync, useSyncFixture } from './sync-harness.js';

useSyncFixture('rabosh-sync-interrupted', { actor: { type: 'app', id: 'test' } });

/** A base of a.md and b.md, then a.md edited on both sides and b.md only here. */
async function conflictThenPush(): Promise<string | null> {
  await h.put('/memories/a.md', 'base a');
  await h.put('/memories/b.md', 'base b');
  await sync();
  const mine = await h.put('/memories/a.md', 'local a');
  remote.put('/a.md', 'remote a');
  await h.put('/memories/b.md', 'local b');
  return mine.versionId;
}

/** A sync that commits a.md's pull (and its conflict), then fails on b.md's push, unreported. */
async function failBeforeReturning(): Promise<void> {
  remote.faults.push({ method: 'POST', url: '/memories/', kind: 500, times: 5 });
  await expect(sync({ maxAttempts: 1 })).rejects.toThrow();
  remote.faults.length = 0;
}

/** The report of a.md's edit-edit conflict ('local a' here, 'remote a' there), carried over. */
function carriedA(winner: 'local' | 'remote', kept: Record<string, unknown>) {
  return {
    kind: 'edit-edit',
    path: '/memories/a.md',
    remotePath: '/a.md',
    remoteId: remote.byPath('/a.md')?.id,
    localSha256: sha('local a'),
    remoteSha256: sha('remote a'),
    winner,
    kept,
    carriedOver: true,
  };
}

describe('a conflict resolved by a sync that never returned', () => {
  it('is reported once by the next sync, carried over', async () => {
    const mine = await conflictThenPush();
    await failBeforeReturning();
    expect((await h.get('/memories/a.md'))?.content).toBe('remote a');

    const next = await sync();
    expect(next.conflicts).toEqual([carriedA('remote', { side: 'local', versionId: mine })]);
    expect(next.pushed.map((c) => c.path)).toEqual(['/memories/b.md']);
    expect((await h.version(mine as string))?.content).toBe('local a');
    const last = await sync();
    expect(last.conflicts).toEqual([]);
  });

  it('a conflict of the completed sync itself carries no flag, and its record is cleared', async () => {
    await conflictThenPush();
    const r = await sync();
    expect(r.conflicts).toHaveLength(1);
    expect(r.conflicts[0]).not.toHaveProperty('carriedOver');
    expect((await sync()).conflicts).toEqual([]);
  });

  it('records are not memories: listings, usage, export and history never see them', async () => {
    await conflictThenPush();
    await failBeforeReturning();
    const paths = (await h.exportMemories()).map((m) => m.path).sort();
    expect(paths).toEqual(['/memories/a.md', '/memories/b.md']);
    expect(await h.view({ command: 'view', path: '/memories' })).not.toMatch(/!|#|memstore/);
    const usage = await h.usage();
    expect(usage.memories).toBe(2);
    expect(usage.bytes).toBe(Buffer.byteLength('remote a') + Buffer.byteLength('local b'));
    const history = await h.versions({ limit: 1000 });
    expect(history.data.every((v) => v.path === null || v.path.startsWith('/memories/'))).toBe(true);
  });

  it('a dry run shows a carried conflict and leaves it for the real sync', async () => {
    await conflictThenPush();
    await failBeforeReturning();
    const dry = await sync({ dryRun: true });
    expect(dry.conflicts.map((c) => [c.path, c.carriedOver])).toEqual([['/memories/a.md', true]]);
    const real = await sync();
    expect(real.conflicts.map((c) => [c.path, c.carriedOver])).toEqual([['/memories/a.md', true]]);
    expect((await sync()).conflicts).toEqual([]);
  });

  it('two stores syncing the same directory at once report each carried conflict once', async () => {
    await conflictThenPush();
    await failBeforeReturning();
    // A second handle on the same directory: a different store key, so the two syncs run at once.
    const other = await Rabosh.open(dir, { history: true });
    try {
      const [x, y] = await Promise.all([sync(), other.sync(client, { memoryStoreId: remote.storeId })]);
      const carried = [...x.conflicts, ...y.conflicts].filter((c) => c.carriedOver);
      expect(carried.map((c) => c.path)).toEqual(['/memories/a.md']);
    } finally {
      await other.close();
    }
    expect((await sync()).conflicts).toEqual([]);
  });
  it("a pushed resolution (onConflict 'local') whose answer never came is reported by the next sync", async () => {
    await h.put('/memories/a.md', 'base a');
    await sync();
    await h.put('/memories/a.md', 'local a');
    remote.put('/a.md', 'remote a');
    const lost = remote.byPath('/a.md')?.versionId;
    // The update lands; its answer and every retry's are lost: the sync gives up unreported.
    remote.faults.push({ method: 'POST', url: '/memories/', kind: 'lost', times: 10 });
    await expect(sync({ onConflict: 'local', maxAttempts: 2 })).rejects.toThrow();
    expect(remote.byPath('/a.md')?.content).toBe('local a');
    remote.faults.length = 0;
    const next = await sync();
    expect(next.conflicts).toEqual([carriedA('local', { side: 'remote', memoryVersionId: lost })]);
    expect(remote.versions.find((v) => v.id === lost)?.content).toBe('remote a');
    expect((await sync()).conflicts).toEqual([]);
  });

  it('a pushed resolution whose first answer was lost (the retry fails its precondition) is still reported', async () => {
    await h.put('/memories/a.md', 'base a');
    await sync();
    await h.put('/memories/a.md', 'local a');
    remote.put('/a.md', 'remote a');
    remote.faults.push({ method: 'POST', url: '/memories/', kind: 'lost', times: 1 });
    const r = await sync({ onConflict: 'local' });
    expect(r.conflicts.map((c) => [c.kind, c.path, c.winner, c.carriedOver])).toEqual([
      ['edit-edit', '/memories/a.md', 'local', undefined],
    ]);
    expect(r.skipped).toEqual([]);
    expect(remote.byPath('/a.md')?.content).toBe('local a');
    expect((await sync()).conflicts).toEqual([]);
  });

  it('an edit-delete re-created there, its answer lost, is reported (the retry finds the path taken)', async () => {
    await h.put('/memories/a.md', 'base a');
    await sync();
    await h.put('/memories/a.md', 'local a');
    remote.remove('/a.md');
    remote.faults.push({ method: 'POST', kind: 'lost', times: 1 });
    const r = await sync();
    expect(remote.byPath('/a.md')?.content).toBe('local a');
    expect(r.conflicts.map((c) => [c.kind, c.path, c.remoteId, c.carriedOver])).toEqual([
      ['edit-delete', '/memories/a.md', remote.byPath('/a.md')?.id, undefined],
    ]);
    expect((await sync()).conflicts).toEqual([]);
  });
});
