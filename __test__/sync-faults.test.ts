// Hosted faults the sync must survive without turning the user's edit into a conflict's loser
// or running without end (issue 33): a lost answer is recognised by what was pushed (not by a
// clock), a listing whose cursor cycles, a hosted hash that is not its content's, and an answer
// that is not JSON each end in a bounded, typed outcome.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { HostedAnswerError } from '../index.js';
import { MAX_LIST_PAGES, RemoteStore } from '../src/sync/remote.js';
import { defaultMemories, h, remote, sha, sync, useSyncFixture } from './sync-harness.js';

useSyncFixture('rabosh-sync-faults');

afterEach(() => {
  vi.useRealTimers();
});

/** The next POST lands but its answer is lost, and every retry after it is a 500: the sync fails. */
async function landThenFail(): Promise<void> {
  remote.faults.push({ method: 'POST', kind: 'lost', times: 1 }, { method: 'POST', kind: 500, times: 20 });
  await expect(sync({ maxAttempts: 3 })).rejects.toThrow();
  remote.faults.length = 0;
}

/** The push records the store holds for the default mapping (pushes.ts). */
async function pushRecords(): Promise<number> {
  const m = defaultMemories();
  return (await m.syncBases(`${remote.storeId}\0/memories\0>`)).length;
}

describe('a push whose answer was lost is recognised by what it pushed', () => {
  it('a lost create, then a local edit: the edit is pushed, no create-create', async () => {
    await h.put('/memories/a.md', 'first');
    await landThenFail();
    expect(remote.byPath('/a.md')?.content).toBe('first');
    expect(await pushRecords()).toBe(1);
    await h.put('/memories/a.md', 'second');
    const r = await sync();
    expect(r.conflicts).toEqual([]);
    expect(r.pushed.map((c) => [c.path, c.contentSha256])).toEqual([['/memories/a.md', sha('second')]]);
    expect(remote.byPath('/a.md')?.content).toBe('second');
    expect((await h.get('/memories/a.md'))?.content).toBe('second');
    expect((await sync()).pushed).toEqual([]);
    // Each record is gone once it has served: they do not pile up.
    expect(await pushRecords()).toBe(0);
  });

  it.each([
    ['a day ahead when the base was written', 24 * 3600_000],
    ['set back 2 h after the base was written', 2 * 3600_000],
  ])('with the clock %s, a lost update then a local edit: no edit-edit', async (_, ahead) => {
    await h.put('/memories/a.md', 'base');
    // Only the JavaScript clock is moved (the store's own timestamps are not): the base is
    // written `ahead` of the local edits that follow it, as when the clock is set back after.
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + ahead);
    await sync();
    vi.useRealTimers();
    await h.put('/memories/a.md', 'edit 1');
    await landThenFail();
    expect(remote.byPath('/a.md')?.content).toBe('edit 1');
    await h.put('/memories/a.md', 'edit 2');
    const r = await sync();
    expect(r.conflicts).toEqual([]);
    expect(remote.byPath('/a.md')?.content).toBe('edit 2');
    expect((await h.get('/memories/a.md'))?.content).toBe('edit 2');
  });

  it('a real hosted edit is still a conflict (the local edit kept as a version)', async () => {
    await h.put('/memories/a.md', 'base');
    await sync();
    await h.put('/memories/a.md', 'edit 1');
    await landThenFail();
    remote.put('/a.md', 'theirs');
    const mine = await h.put('/memories/a.md', 'edit 2');
    const r = await sync();
    expect(r.conflicts.map((c) => [c.kind, c.winner, c.kept])).toEqual([
      ['edit-edit', 'remote', { side: 'local', versionId: mine.versionId }],
    ]);
    expect((await h.get('/memories/a.md'))?.content).toBe('theirs');
  });
});

describe('a sync is bounded whatever the hosted store answers', () => {
  it('a listing whose next_page repeats is a typed error, not followed for ever', async () => {
    await h.put('/memories/a.md', 'x');
    // Enough for the old code to be visibly looping (it ends once these run out).
    remote.faults.push({ method: 'GET', kind: 'repeat-page', times: 500 });
    const err = await sync().catch((e: unknown) => e);
    expect((err as { code?: string } | undefined)?.code).toBe('RABOSH_HOSTED_ANSWER');
    expect(err).toBeInstanceOf(HostedAnswerError);
    expect((err as Error).message).toMatch(/repeats its page cursor/);
    expect(remote.counts.get('list')).toBeLessThanOrEqual(3);
  });

  it('a listing whose cursors never repeat and never end stops at the page cap', async () => {
    let n = 0;
    const memories = {
      // Each page a macrotask later, so that a loop without end still lets the test time out.
      list: () => new Promise((resolve) => setImmediate(() => resolve({ data: [], next_page: `p${n++}` }))),
      update: async () => ({}),
    };
    const store = new RemoteStore({ beta: { memoryStores: { memories } } }, 'memstore_x', 1, 1);
    await expect(store.list()).rejects.toThrow(HostedAnswerError);
    expect(n).toBe(MAX_LIST_PAGES + 1);
  });

  it('a hosted hash that is not its content is reported, not pushed or pulled on every sync', async () => {
    await h.put('/memories/mine.md', 'mine');
    remote.put('/theirs.md', 'theirs');
    remote.badHash.add('/mine.md').add('/theirs.md');
    const first = await sync();
    expect(first.skipped.map((s) => [s.path, s.reason]).sort()).toEqual([
      ['/memories/mine.md', 'hash-mismatch'],
      ['/memories/theirs.md', 'hash-mismatch'],
    ]);
    const writes = () => (remote.counts.get('create') ?? 0) + (remote.counts.get('update') ?? 0);
    const after = writes();
    for (let i = 0; i < 3; i++) {
      const r = await sync();
      expect(r.pushed).toEqual([]);
      expect(r.pulled).toEqual([]);
      expect(r.skipped.map((s) => [s.path, s.reason]).sort()).toEqual([
        ['/memories/mine.md', 'hash-mismatch'],
        ['/memories/theirs.md', 'hash-mismatch'],
      ]);
    }
    expect(writes()).toBe(after);
    expect(await h.get('/memories/theirs.md')).toBeNull();
    // Fixed on the server: the next sync settles both, with no conflict.
    remote.badHash.clear();
    const healed = await sync();
    expect(healed.skipped).toEqual([]);
    expect(healed.conflicts).toEqual([]);
    expect((await h.get('/memories/theirs.md'))?.content).toBe('theirs');
    expect(remote.byPath('/mine.md')?.content).toBe('mine');
  });

  it('an answer that is not JSON is a typed error, not a raw SyntaxError', async () => {
    await h.put('/memories/a.md', 'x');
    remote.faults.push({ method: 'GET', kind: 'garbage', times: 10 });
    const err = await sync().catch((e: unknown) => e);
    expect(err).not.toBeInstanceOf(SyntaxError);
    expect((err as { code?: string }).code).toBe('RABOSH_HOSTED_ANSWER');
    expect(err).toBeInstanceOf(HostedAnswerError);
    remote.faults.length = 0;
    // A write answered with garbage fails the sync too (not retried); the next sync carries it.
    remote.faults.push({ method: 'POST', kind: 'garbage', times: 1 });
    await expect(sync()).rejects.toThrow(HostedAnswerError);
    remote.faults.length = 0;
    const r = await sync();
    expect(r.conflicts).toEqual([]);
    expect(remote.byPath('/a.md')?.content).toBe('x');
  });
});
