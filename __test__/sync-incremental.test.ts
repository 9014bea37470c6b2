// Incremental sync (issue 36 §3): after a clean sync, the next reads only what changed since, the
// local change feed from its cursor and the hosted versions written since the remote cursor, and
// decides on it as a full sync would; and it falls back to a full sync whenever the cursors
// cannot be trusted. See docs/guide/sync.md, "Requests".
import { afterEach, describe, expect, it, vi } from 'vitest';
import Anthropic from '@anthropic-ai/sdk';
import { InvalidOptionError } from '../index.js';
import { NativeMemories } from '../src/native.js';
import { encodePush } from '../src/sync/pushes.js';
import { db, defaultMemories, h, remote, sync, useSyncFixture } from './sync-harness.js';

useSyncFixture('rabosh-sync-incremental');

afterEach(() => {
  vi.restoreAllMocks();
});

const PREFIX = () => `${remote.storeId}\0/memories\0`;

async function local(): Promise<Record<string, string>> {
  return Object.fromEntries((await h.exportMemories()).map((m) => [m.path, m.content]));
}

describe('incremental sync', () => {
  it('a sync with nothing to do sends one request at 10,000 memories and reads no local memory', async () => {
    // Written an hour ago on the hosted clock: outside the margin of the next version listing.
    const hourAgo = Date.now() - 3600_000;
    remote.now = () => hourAgo;
    for (let i = 0; i < 10_000; i++) remote.put(`/d${i % 100}/m${i}.md`, `memory ${i}`);
    remote.now = () => Date.now();
    const first = await sync();
    expect(first.mode).toBe('full');
    expect(first.pulled).toHaveLength(10_000);
    // The next sync reads its own pulls from the feed once (and plans them: nothing to do).
    const second = await sync();
    expect([second.mode, second.requests, second.pulled.length, second.pushed.length]).toEqual(['incremental', 1, 0, 0]);
    const entries = vi.spyOn(NativeMemories.prototype, 'syncEntries');
    const bases = vi.spyOn(NativeMemories.prototype, 'syncBases');
    const get = vi.spyOn(NativeMemories.prototype, 'hostGet');
    const third = await sync();
    expect([third.mode, third.requests, third.rounds]).toEqual(['incremental', 1, 1]);
    expect(entries).not.toHaveBeenCalled();
    expect(get).not.toHaveBeenCalled();
    // Only the records that decide the mode (cursor, done mark, push and conflict records).
    expect(bases.mock.calls.map(([tag]) => tag.slice(PREFIX().length)).sort()).toEqual(['!', '#', '>', '@']);
    vi.restoreAllMocks();
    // A full sync of the same store lists it: ceil(n / 100) requests.
    const full = await sync({ incremental: false });
    expect([full.mode, full.requests]).toEqual(['full', 100]);
  }, 120_000);

  it('carries hosted edits, creates, renames and deletes, and local ones, as a full sync would', async () => {
    for (const p of ['a', 'b', 'c', 'd', 'e', 'f']) await h.put(`/memories/${p}.md`, `${p}0`);
    await sync();
    expect((await sync()).mode).toBe('incremental');
    remote.put('/a.md', 'a remote');
    remote.rename('/b.md', '/sub/b2.md');
    remote.remove('/c.md');
    remote.put('/new.md', 'new remote');
    await h.put('/memories/d.md', 'd local');
    await h.execute({ command: 'rename', old_path: '/memories/e.md', new_path: '/memories/sub/e2.md' });
    await h.execute({ command: 'delete', path: '/memories/f.md' });
    await h.put('/memories/g.md', 'g local');
    const idsBefore = new Map([...remote.memories.values()].map((m) => [m.path, m.id]));
    const r = await sync();
    expect(r.mode).toBe('incremental');
    expect(r.skipped).toEqual([]);
    expect(await local()).toEqual({
      '/memories/a.md': 'a remote',
      '/memories/sub/b2.md': 'b0',
      '/memories/d.md': 'd local',
      '/memories/new.md': 'new remote',
      '/memories/sub/e2.md': 'e0',
      '/memories/g.md': 'g local',
    });
    expect(Object.fromEntries(remote.snapshot())).toEqual({
      '/a.md': 'a remote',
      '/sub/b2.md': 'b0',
      '/d.md': 'd local',
      '/new.md': 'new remote',
      '/sub/e2.md': 'e0',
      '/g.md': 'g local',
    });
    // The local rename is carried as a rename (the hosted memory keeps its id).
    expect(remote.byPath('/sub/e2.md')?.id).toBe(idsBefore.get('/e.md'));
    expect(r.pushed.map((c) => [c.path, c.operation]).sort()).toEqual([
      ['/memories/d.md', 'modified'],
      ['/memories/g.md', 'created'],
      ['/memories/sub/e2.md', 'renamed'],
    ]);
    expect(r.pulled.map((c) => [c.path, c.operation]).sort()).toEqual([
      ['/memories/a.md', 'modified'],
      ['/memories/new.md', 'created'],
      ['/memories/sub/b2.md', 'renamed'],
    ]);
    expect(r.deleted.map((d) => [d.side, d.path]).sort()).toEqual([
      ['local', '/memories/c.md'],
      ['remote', '/memories/f.md'],
    ]);
    // And nothing more to do after it.
    const after = await sync();
    expect([after.mode, after.pushed, after.pulled, after.deleted]).toEqual(['incremental', [], [], []]);
  });

  it('learns the local id of a pulled memory, so a local rename of it is carried as a rename', async () => {
    await h.put('/memories/a.md', 'a');
    await sync();
    remote.put('/pulled.md', 'from the hosted side');
    expect((await sync()).pulled.map((c) => c.operation)).toEqual(['created']);
    const id = remote.byPath('/pulled.md')?.id as string;
    const [row] = await defaultMemories().syncBases(`${PREFIX()}${id}`);
    expect(JSON.parse(row?.value ?? '{}').lm).toMatch(/./);
    await h.execute({ command: 'rename', old_path: '/memories/pulled.md', new_path: '/memories/moved.md' });
    const r = await sync();
    expect([r.mode, r.pushed.map((c) => [c.operation, c.remoteId])]).toEqual(['incremental', [['renamed', id]]]);
    expect(remote.byPath('/moved.md')?.id).toBe(id);
  });

  it('meets conflicts incrementally as a full sync does', async () => {
    await h.put('/memories/x.md', 'x0');
    await h.put('/memories/y.md', 'y0');
    await sync();
    await h.put('/memories/x.md', 'x local');
    remote.put('/x.md', 'x remote');
    await h.execute({ command: 'delete', path: '/memories/y.md' });
    remote.put('/y.md', 'y remote');
    await h.put('/memories/z.md', 'z local');
    remote.put('/z.md', 'z remote');
    const r = await sync();
    expect(r.mode).toBe('incremental');
    expect(r.conflicts.map((c) => [c.kind, c.path, c.winner]).sort()).toEqual([
      ['create-create', '/memories/z.md', 'remote'],
      ['delete-edit', '/memories/y.md', 'remote'],
      ['edit-edit', '/memories/x.md', 'remote'],
    ]);
    expect(await local()).toEqual({ '/memories/x.md': 'x remote', '/memories/y.md': 'y remote', '/memories/z.md': 'z remote' });
  });

  it('sees a version that became visible late, within the margin', async () => {
    await h.put('/memories/late.md', 'v0');
    await sync();
    await sync();
    // Stamped a minute before the last sync listed the versions, visible only now: an edit
    // (older than the version that sync saw, so the memory is retrieved) and a new memory.
    remote.now = () => Date.now() - 60_000;
    remote.put('/late.md', 'late remote');
    remote.put('/late-new.md', 'late new');
    remote.now = () => Date.now();
    const r = await sync();
    expect(r.mode).toBe('incremental');
    expect(r.pulled.map((c) => c.path).sort()).toEqual(['/memories/late-new.md', '/memories/late.md']);
    expect(await local()).toEqual({ '/memories/late.md': 'late remote', '/memories/late-new.md': 'late new' });
  });
});

describe('incremental sync falls back to a full one', () => {
  it('on the first sync, and after a sync that skipped something', async () => {
    await h.put('/memories/a.md', 'a');
    await h.put('/memories/b.md', 'b');
    expect((await sync()).mode).toBe('full');
    remote.remove('/a.md');
    const kept = await sync({ deletes: false });
    expect(kept.skipped.map((s) => s.reason)).toEqual(['deletes-off']);
    // The skip must be judged again against the whole store.
    const next = await sync();
    expect([next.mode, next.deleted.map((d) => d.path)]).toEqual(['full', ['/memories/a.md']]);
    expect((await sync()).mode).toBe('incremental');
  });

  it('when the client has no memoryVersions, or listing the versions fails', async () => {
    await h.put('/memories/a.md', 'a');
    await sync();
    const bare = new Anthropic({ baseURL: remote.baseURL, apiKey: 'test' });
    Object.defineProperty(bare.beta.memoryStores, 'memoryVersions', { value: undefined });
    remote.put('/b.md', 'b');
    const r = await db.sync(bare, { memoryStoreId: remote.storeId });
    expect([r.mode, r.pulled.map((c) => c.path)]).toEqual(['full', ['/memories/b.md']]);
    remote.put('/c.md', 'c');
    remote.faults.push({ url: 'memory_versions', kind: 500, times: 10 });
    const f = await sync({ maxAttempts: 2 });
    expect([f.mode, f.pulled.map((c) => c.path)]).toEqual(['full', ['/memories/c.md']]);
  });

  it('when the feed cursor is stale', async () => {
    await h.put('/memories/a.md', 'a');
    await sync();
    const m = defaultMemories();
    const tag = `${PREFIX()}@`;
    const [row] = await m.syncBases(tag);
    const cursor = JSON.parse(row?.value ?? '{}') as Record<string, unknown>;
    // A cursor from another store (ahead of this one) is one the feed cannot answer for.
    await m.syncApply([], [{ tag, value: JSON.stringify({ ...cursor, feed: '99999' }), expect: row?.value }]);
    remote.put('/b.md', 'b');
    const r = await sync();
    expect([r.mode, r.pulled.map((c) => c.path)]).toEqual(['full', ['/memories/b.md']]);
  });

  it('when an interrupted sync left a push or conflict record', async () => {
    await h.put('/memories/a.md', 'a');
    await sync();
    // Nothing changed since this one: only the record can make the next one full.
    expect((await sync()).mode).toBe('incremental');
    const m = defaultMemories();
    const tag = `${PREFIX()}>run:0`;
    await m.syncApply([], [{ tag, value: encodePush({ id: null, rp: '/gone.md', sha: 'f'.repeat(64) }) }]);
    const r = await sync();
    expect(r.mode).toBe('full');
    // The full sync swept the record (nothing holds it), so the next one is incremental again.
    expect((await m.syncBases(tag)).length).toBe(0);
    expect((await sync()).mode).toBe('incremental');
  });

  it('after maxSyncs incremental syncs or when the last full one is older than maxAgeMs', async () => {
    await h.put('/memories/a.md', 'a');
    const modes: string[] = [];
    for (let i = 0; i < 5; i++) modes.push((await sync({ incremental: { maxSyncs: 2 } })).mode);
    expect(modes).toEqual(['full', 'incremental', 'incremental', 'full', 'incremental']);
    const now = Date.now();
    vi.spyOn(Date, 'now').mockReturnValue(now + 3 * 3600_000);
    expect((await sync({ incremental: { maxAgeMs: 3600_000 } })).mode).toBe('full');
    // A clock set back is no proof of a recent full sync either.
    vi.spyOn(Date, 'now').mockReturnValue(now - 3600_000);
    expect((await sync()).mode).toBe('full');
  });

  it('refuses unknown incremental options', async () => {
    await expect(sync({ incremental: { maxSync: 3 } })).rejects.toThrow(InvalidOptionError);
    await expect(sync({ incremental: 'yes' })).rejects.toThrow(/invalid option incremental/);
    await expect(sync({ incremental: { maxAgeMs: -1 } })).rejects.toThrow(/maxAgeMs/);
  });
});
