// An incremental sync carrying k changes reads the bases those changes name through their lookup
// rows (src/sync/base-index.ts), not every base of the mapping (issue 36 §3); a store whose bases
// lack the rows (an older build synced it last) is read whole once and gets them. Counted in
// base records read, not in time.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { NativeMemories } from '../src/native.js';
import { decodeCursor, encodeCursor } from '../src/sync/cursor.js';
import { defaultMemories, h, remote, sync, useSyncFixture } from './sync-harness.js';

useSyncFixture('rabosh-sync-base-index');

afterEach(() => {
  vi.restoreAllMocks();
});

const SIZE = 2000;
const PREFIX = () => `${remote.storeId}\0/memories\0`;

const moved = (r: Awaited<ReturnType<typeof sync>>) => [r.mode, r.pushed.length, r.pulled.length, r.skipped];

/** Runs `f`; how many base records (rows of any kind) the sync read meanwhile. */
async function rowsRead<T>(f: () => Promise<T>): Promise<[T, number]> {
  const spy = vi.spyOn(NativeMemories.prototype, 'syncBases');
  const out = await f();
  const read = await Promise.all(spy.mock.results.map((r) => r.value as ReturnType<NativeMemories['syncBases']>));
  spy.mockRestore();
  return [out, read.reduce((n, rows) => n + rows.length, 0)];
}

/** SIZE memories on both sides, synced, the next sync (which reads the first one's writes) and an idle one done. */
async function synced(): Promise<void> {
  const hourAgo = Date.now() - 3600_000;
  remote.now = () => hourAgo;
  for (let i = 0; i < SIZE; i++) remote.put(`/d${i % 20}/m${i}.md`, `memory ${i}`);
  remote.now = () => Date.now();
  expect((await sync()).pulled).toHaveLength(SIZE);
  expect((await sync()).mode).toBe('incremental');
  // One with nothing to do (it reads no base): the next still finds the lookup rows vouched for.
  expect(moved(await sync())).toEqual(['incremental', 0, 0, []]);
}

/** Five local edits and five hosted ones. */
async function tenChanges(round: number): Promise<void> {
  for (let i = 0; i < 5; i++) await h.put(`/memories/d${i}/m${i}.md`, `local ${round}`);
  for (let i = 5; i < 10; i++) remote.put(`/d${i}/m${i}.md`, `remote ${round}`);
}

/** What an older build leaves: no lookup rows, and a cursor that does not say every base has them. */
async function forgetIndex(): Promise<void> {
  const m = defaultMemories();
  const rows = await m.syncBases(`${PREFIX()}%`);
  expect(rows.length).toBeGreaterThanOrEqual(SIZE * 2);
  const tag = `${PREFIX()}@`;
  const [cursor] = await m.syncBases(tag);
  const c = decodeCursor(cursor?.value ?? '', tag);
  expect(c?.ix).toBe(true);
  const writes = rows.map((r) => ({ tag: r.tag, expect: r.value }));
  const out = await m.syncApply(
    [],
    [...writes, { tag, value: encodeCursor({ ...(c as NonNullable<typeof c>), ix: false }), expect: cursor?.value }],
  );
  expect(out.status).toBe('applied');
}

describe('the bases an incremental sync reads', () => {
  it('caps deletions on the count of every base, not of the ones selected', async () => {
    for (let i = 0; i < 60; i++) await h.put(`/memories/m${i}.md`, `memory ${i}`);
    await sync();
    await sync();
    for (let i = 0; i < 20; i++) await h.execute({ command: 'delete', path: `/memories/m${i}.md` });
    const r = await sync();
    // The default cap is max(10, 60 / 4): 15 go, 5 wait for the next sync.
    expect([r.mode, r.deleted.length, r.skipped.filter((k) => k.reason === 'delete-cap').length]).toEqual(['incremental', 15, 5]);
  });

  it('reads a side emptied as a full sync does, when the selection is every base', async () => {
    for (const p of ['a', 'b']) await h.put(`/memories/${p}.md`, p);
    await sync();
    await sync();
    for (const p of ['a', 'b']) await h.execute({ command: 'delete', path: `/memories/${p}.md` });
    const r = await sync();
    expect([r.mode, r.deleted, r.skipped.map((k) => k.reason)]).toEqual(['incremental', [], ['empty-side', 'empty-side']]);
  });

  it('pulls most of a small store with one listing, as a full sync would price it', async () => {
    for (let i = 0; i < 40; i++) remote.put(`/m${i}.md`, `memory ${i}`);
    await sync();
    await sync();
    for (let i = 0; i < 30; i++) remote.put(`/m${i}.md`, `edited ${i}`);
    const r = await sync();
    expect([r.mode, r.pulled.length]).toEqual(['incremental', 30]);
    // The versions listing (one page), then the store with content (two pages of 20), not 30 retrieves.
    expect(r.requests).toBe(3);
  });

  it('a sync carrying 10 changes reads the bases they name, not every base', async () => {
    await synced();
    await tenChanges(1);
    const [r, read] = await rowsRead(() => sync());
    expect(moved(r)).toEqual(['incremental', 5, 5, []]);
    // Per change: its base, its lookup rows and the records that decide the mode; never the mapping.
    expect(read).toBeLessThan(100);
    const [after, again] = await rowsRead(() => sync());
    expect(moved(after)).toEqual(['incremental', 0, 0, []]);
    expect(again).toBeLessThan(100);
  }, 120_000);

  it('a store whose bases lack their lookup rows is read whole once, then gets them', async () => {
    await synced();
    await forgetIndex();
    await tenChanges(1);
    const [r, read] = await rowsRead(() => sync());
    expect(moved(r)).toEqual(['incremental', 5, 5, []]);
    expect(read).toBeGreaterThanOrEqual(SIZE);
    // Every base has its rows again (local path, hosted path, local memory id), and the cursor says so.
    expect((await defaultMemories().syncBases(`${PREFIX()}%`)).length).toBe(SIZE * 3);
    await sync();
    await tenChanges(2);
    const [next, fewer] = await rowsRead(() => sync());
    expect(moved(next)).toEqual(['incremental', 5, 5, []]);
    expect(fewer).toBeLessThan(100);
  }, 120_000);
});
