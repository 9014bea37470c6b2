// The sync's records in the store (bases, conflict records, push records) carry a version tag
// (docs/sync.md, "Record format"): today's format is read (a store synced before the tag existed
// keeps working), and a version this build does not know is refused with UnsupportedFormatError,
// never read as "no base" and rewritten.
import { describe, expect, it } from 'vitest';
import { UnsupportedFormatError } from '../index.js';
import { decodeBase, encodeBase } from '../src/sync/base.js';
import { decodeConflict, encodeConflict } from '../src/sync/conflicts.js';
import { defaultMemories, h, remote, sha, sync, useSyncFixture } from './sync-harness.js';

useSyncFixture('rabosh-sync-records');

/** The sync's records of the default mapping, read and written as src/sync/engine.ts does. */
function records() {
  const m = defaultMemories();
  const prefix = `${remote.storeId}\0/memories\0`;
  return {
    prefix,
    read: async () => new Map((await m.syncBases(prefix)).map((r) => [r.tag.slice(prefix.length), r.value])),
    write: async (id: string, value: string, expect: string | undefined) => {
      const out = await m.syncApply([], [{ tag: prefix + id, value, expect }]);
      if (out.status !== 'applied') throw new Error(JSON.stringify(out));
    },
  };
}

/** a.md synced; its base's id and bytes. */
async function synced(): Promise<{ id: string; raw: string }> {
  await h.put('/memories/a.md', 'base');
  await sync();
  const id = remote.byPath('/a.md')?.id as string;
  const raw = (await records().read()).get(id) as string;
  return { id, raw };
}

describe('sync record format', () => {
  it('writes format 2: an object with a version tag and a kind', async () => {
    const { raw } = await synced();
    const v = JSON.parse(raw);
    expect(v).toMatchObject({ v: 2, kind: 'base', rp: '/a.md', lp: '/memories/a.md', sha: sha('base') });
    expect(decodeBase(raw)).toEqual({ id: v.id, rp: v.rp, lp: v.lp, sha: v.sha, lm: v.lm, rv: v.rv });
    const c = {
      kind: 'edit-edit',
      path: '/memories/a.md',
      remotePath: '/a.md',
      remoteId: 'mem_1',
      localSha256: 'l',
      remoteSha256: 'r',
      winner: 'remote',
      kept: null,
    } as const;
    const rec = decodeConflict('t', encodeConflict(c, null, true));
    expect(rec.conflict).toEqual(c);
    expect(rec.resolved).toBe(true);
    expect(JSON.parse(encodeBase({ id: 'mem_1', rp: '/a', lp: '/memories/a', sha: 's', lm: null, rv: 'v' }))).toMatchObject({
      v: 2,
      kind: 'base',
    });
  });

  it('reads a base written in format 1 (a store synced by an earlier build keeps working)', async () => {
    const { id, raw } = await synced();
    const b = JSON.parse(raw);
    // Format 1, byte for byte as the earlier build wrote it: [1, id, rp, lp, sha, lm, rv, at].
    await records().write(id, JSON.stringify([1, b.id, b.rp, b.lp, b.sha, b.lm, b.rv, Date.now()]), raw);
    await h.put('/memories/a.md', 'edited here');
    const r = await sync();
    // Read as the base: an update of that memory, not a create-create against it.
    expect(r.conflicts).toEqual([]);
    expect(r.pushed.map((c) => [c.path, c.remoteId, c.operation])).toEqual([['/memories/a.md', id, 'modified']]);
    expect(remote.byPath('/a.md')?.content).toBe('edited here');
  });

  it('reads a conflict record written in format 1 and reports it carried over', async () => {
    await synced();
    const conflict = ['edit-edit', '/memories/a.md', 'mem_x', '/a.md', sha('l'), sha('r'), 'remote', { side: 'local', versionId: null }];
    await records().write('!oldrun:0', JSON.stringify([1, ...conflict]), undefined);
    const r = await sync();
    expect(r.conflicts).toEqual([
      {
        kind: 'edit-edit',
        path: '/memories/a.md',
        remoteId: 'mem_x',
        remotePath: '/a.md',
        localSha256: sha('l'),
        remoteSha256: sha('r'),
        winner: 'remote',
        kept: { side: 'local', versionId: null },
        carriedOver: true,
      },
    ]);
    expect((await records().read()).has('!oldrun:0')).toBe(false);
  });

  it.each([
    ['a base of an unknown version', 'base', (b: Record<string, unknown>) => JSON.stringify({ ...b, v: 3 })],
    ['a base in an array format this build never wrote', 'base', (b: Record<string, unknown>) => JSON.stringify([7, b.id])],
    ['a conflict record of an unknown version', '!newer:0', () => JSON.stringify({ v: 3, kind: 'conflict' })],
    ['a push record of an unknown version', '>newer:0', () => JSON.stringify({ v: 3, kind: 'push' })],
  ])('refuses %s with UnsupportedFormatError, writing nothing on either side', async (_, which, bytes) => {
    const { id, raw } = await synced();
    const tag = which === 'base' ? id : which;
    await records().write(tag, bytes(JSON.parse(raw)), which === 'base' ? raw : undefined);
    const before = await records().read();
    await h.put('/memories/a.md', 'edited here');
    remote.put('/b.md', 'there');
    const requests = () => (remote.counts.get('create') ?? 0) + (remote.counts.get('update') ?? 0) + (remote.counts.get('delete') ?? 0);
    const writes = requests();
    const err = await sync().catch((e: unknown) => e);
    expect((err as { code?: string }).code).toBe('RABOSH_UNSUPPORTED_FORMAT');
    expect(err).toBeInstanceOf(UnsupportedFormatError);
    expect((err as Error).message).toMatch(/newer rabosh-memory/);
    expect(requests()).toBe(writes);
    expect(await records().read()).toEqual(before);
    expect(await h.get('/memories/b.md')).toBeNull();
    expect(remote.byPath('/a.md')?.content).toBe('base');
  });
});
