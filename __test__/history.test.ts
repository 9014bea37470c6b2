// Version history end to end through the facade: recording by every handler over a store, the
// query API, revert, redact reaching the disk, at() answering with the model's strings, host
// edits with preconditions (and their race), the CLI-free pieces of issue 13.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

import { PreconditionFailedError, Rabosh, RaboshMemoryToolHandler } from '../index.js';
import { makeTempDir, removeDir } from './tmp-dir.js';

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach(removeDir));

async function store(history: unknown = true): Promise<{ db: Rabosh; dir: string }> {
  const dir = makeTempDir('rabosh-history');
  dirs.push(dir);
  return { db: await Rabosh.open(dir, { history } as never), dir };
}

function containsOnDisk(dir: string, needle: string): boolean {
  const bytes = Buffer.from(needle);
  return readdirSync(dir).some((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? containsOnDisk(p, needle) : readFileSync(p).includes(bytes);
  });
}

describe('version history', () => {
  it('records every command with its actor, newest first, paginated', async () => {
    const { db } = await store();
    const h = new RaboshMemoryToolHandler(db, { actor: { type: 'session', id: 's-1' } });
    await h.execute({ command: 'create', path: '/memories/a/x.md', file_text: 'one' });
    await h.execute({ command: 'str_replace', path: '/memories/a/x.md', old_str: 'one', new_str: 'two' });
    await h.execute({ command: 'rename', old_path: '/memories/a', new_path: '/memories/b' });
    await h.execute({ command: 'delete', path: '/memories/b/x.md' });
    const all = await h.versions();
    expect(all.data.map((v) => [v.operation, v.path])).toEqual([
      ['deleted', '/memories/b/x.md'],
      ['renamed', '/memories/b/x.md'],
      ['modified', '/memories/a/x.md'],
      ['created', '/memories/a/x.md'],
    ]);
    expect(new Set(all.data.map((v) => v.memoryId)).size).toBe(1);
    expect(all.data.every((v) => v.actor?.id === 's-1' && v.createdAt instanceof Date)).toBe(true);
    expect(all.data[0]).toMatchObject({ contentSha256: null, sizeBytes: null, redactedAt: null });
    expect(all.data[2]!.contentSha256).toBe('3fc4ccfe745870e2c0d99f71f30ff0656c8dedd41cc1d7d3d376b0dbe685e2f3');
    const first = await h.versions({ limit: 3 });
    expect(first.data).toHaveLength(3);
    const rest = await h.versions({ limit: 3, cursor: first.nextCursor! });
    expect(rest.data.map((v) => v.operation)).toEqual(['created']);
    expect(rest.nextCursor).toBeUndefined();
    expect((await h.versions({ operation: 'renamed' })).data).toHaveLength(1);
    expect((await h.version(all.data[1]!.id))?.content).toBe('two');
    await db.close();
  });

  it('a store opened without history records nothing; history is a store option, not a handler one', async () => {
    const { db } = await store(false);
    const h = new RaboshMemoryToolHandler(db);
    await h.execute({ command: 'create', path: '/memories/a.md', file_text: 'x' });
    expect((await h.versions()).data).toEqual([]);
    expect(db.stats().history).toBeUndefined();
    expect(db.historySince).toBeNull();
    expect((await h.usage()).history).toBeUndefined();
    expect(() => new RaboshMemoryToolHandler(db, { history: true } as never)).toThrow(/store option/);
    await db.close();
  });

  it('revert writes old content back as a new version; redact removes it from every file', async () => {
    const { db, dir } = await store();
    const h = new RaboshMemoryToolHandler(db);
    const secret = 'card 4111-1111-1111-1111';
    await h.execute({ command: 'create', path: '/memories/n.md', file_text: `pay with ${secret}` });
    await h.execute({ command: 'str_replace', path: '/memories/n.md', old_str: secret, new_str: 'cash' });
    const [, created] = (await h.versions()).data;
    const { versionId } = await h.revert('/memories/n.md', created!.id);
    expect((await h.version(versionId!))?.operation).toBe('modified');
    expect(await h.view({ command: 'view', path: '/memories/n.md' })).toContain(secret);
    await h.put('/memories/n.md', 'pay with cash');
    for (const v of (await h.versions()).data.filter((v) => v.contentSha256 !== null)) {
      const full = await h.version(v.id);
      if (full?.content?.includes(secret)) await h.redact(v.id);
    }
    expect(containsOnDisk(dir, secret)).toBe(false);
    const redacted = await h.version(created!.id);
    expect(redacted).toMatchObject({ path: null, content: null, contentSha256: null, sizeBytes: null });
    expect(redacted?.redactedAt).toBeInstanceOf(Date);
    await db.close();
  });

  it('at() answers with the strings the model saw then, and refuses writes', async () => {
    const { db } = await store();
    const h = new RaboshMemoryToolHandler(db);
    await h.execute({ command: 'create', path: '/memories/a.md', file_text: 'first\nline' });
    const before = await h.execute({ command: 'view', path: '/memories' });
    const file = await h.execute({ command: 'view', path: '/memories/a.md', view_range: [2, 2] });
    await new Promise((r) => setTimeout(r, 5));
    const then = new Date();
    await new Promise((r) => setTimeout(r, 5));
    await h.execute({ command: 'str_replace', path: '/memories/a.md', old_str: 'first', new_str: 'second' });
    await h.execute({ command: 'create', path: '/memories/b.md', file_text: 'b' });
    const past = await h.at(then);
    expect(await past.execute({ command: 'view', path: '/memories' })).toEqual(before);
    expect(await past.execute({ command: 'view', path: '/memories/a.md', view_range: [2, 2] })).toEqual(file);
    expect(await past.view({ path: '/memories/b.md' })).toBe('The path /memories/b.md does not exist. Please provide a valid path.');
    const write = await past.execute({ command: 'create', path: '/memories/c.md', file_text: 'c' });
    expect(write.isError).toBe(true);
    expect(await h.view({ command: 'view', path: '/memories/c.md' })).toMatch(/does not exist/);
    await db.close();
  });

  it('host edits: preconditions against the model, idempotent repeats, one winner of sixteen', async () => {
    const { db } = await store();
    const h = new RaboshMemoryToolHandler(db);
    const made = await h.put('/memories/h.md', 'v1', { ifNoneMatch: '*' });
    expect(made.written).toBe(true);
    expect(await h.put('/memories/h.md', 'v1', { ifNoneMatch: '*' })).toMatchObject({ written: false });
    await h.execute({ command: 'str_replace', path: '/memories/h.md', old_str: 'v1', new_str: 'model' });
    const stale = await h.put('/memories/h.md', 'host', { ifMatch: made.contentSha256 }).catch((e: unknown) => e);
    expect(stale).toBeInstanceOf(PreconditionFailedError);
    expect((stale as PreconditionFailedError).code).toBe('RABOSH_PRECONDITION_FAILED');
    const current = await h.get('/memories/h.md');
    expect((stale as PreconditionFailedError).currentSha256).toBe(current!.contentSha256);
    expect(current!.content).toBe('model');
    expect(current!.versionId).toBe((await h.versions({ limit: 1 })).data[0]!.id);

    const puts = await Promise.allSettled(
      Array.from({ length: 16 }, (_, i) => h.put('/memories/h.md', `writer ${i}`, { ifMatch: current!.contentSha256 })),
    );
    expect(puts.filter((p) => p.status === 'fulfilled')).toHaveLength(1);
    expect(puts.filter((p) => p.status === 'rejected' && p.reason instanceof PreconditionFailedError)).toHaveLength(15);
    const winner = await h.view({ command: 'view', path: '/memories/h.md' });
    expect(winner).toMatch(/writer \d+/);
    await expect(h.remove('/memories/h.md', { ifMatch: made.contentSha256 })).rejects.toBeInstanceOf(PreconditionFailedError);
    expect(await h.remove('/memories/h.md')).toMatchObject({ removed: true });
    expect(await h.remove('/memories/h.md')).toMatchObject({ removed: false });
    await db.close();
  });

  it('retention and history usage', async () => {
    const { db } = await store({ maxVersionsPerMemory: 2 });
    const h = new RaboshMemoryToolHandler(db);
    for (let i = 0; i < 5; i++) await h.put('/memories/r.md', `v${i}`);
    expect((await h.historyUsage()).versions).toBe(5);
    expect(await h.pruneHistory()).toBe(3);
    expect(await h.historyUsage()).toEqual({ versions: 2, bytes: 4 });
    expect(await h.usage()).toEqual({ memories: 1, bytes: 2, history: { versions: 2, bytes: 4 } });
    expect(db.stats().history).toEqual({ versions: 2, bytes: 4, since: expect.any(Date) });
    expect(db.historySince).toEqual(db.stats().history?.since);
    const other = makeTempDir('rabosh-history');
    dirs.push(other);
    await expect(Rabosh.open(other, { history: { retainDays: -1 } })).rejects.toThrow(/retainDays/);
    await db.close();
  });
});
