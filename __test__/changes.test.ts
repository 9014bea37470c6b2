// The change feed through the library (docs/guide/changes.md): `handler.changes()` answers the
// changed paths in commit order with a cursor that resumes across reopen and across processes
// sharing a store, on a store directory and on PostgreSQL; a reader starting now sees only what
// comes after; bad arguments are refused; a redaction erasing a path resets older cursors.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

import { InvalidArgumentError, Rabosh, RaboshMemoryToolHandler, type ChangesPage } from '../index.js';
import { freshPgUrl } from './pg-url.js';
import { makeTempDir, removeDir } from './tmp-dir.js';

const dirs: string[] = [];
const open: Rabosh[] = [];
afterEach(async () => {
  for (const db of open.splice(0)) await db.close();
  dirs.splice(0).forEach(removeDir);
});

async function openStore(where?: string, options?: object): Promise<{ db: Rabosh; where: string }> {
  const target =
    where ??
    (() => {
      const dir = makeTempDir('rabosh-changes');
      dirs.push(dir);
      return dir;
    })();
  const db = await Rabosh.open(target, options as never);
  open.push(db);
  return { db, where: target };
}

/** Every change after `since`, in pages of `limit`, and the cursor to go on from. */
async function drain(h: RaboshMemoryToolHandler, since: string | undefined, limit = 2) {
  const out: [string, string][] = [];
  let cursor = since;
  for (;;) {
    const page: ChangesPage = await h.changes({ since: cursor, limit });
    expect(page.reset).toBe(false);
    out.push(...page.changes.map((c): [string, string] => [c.kind, c.path]));
    cursor = page.cursor;
    if (page.changes.length < limit) return { changes: out, cursor };
  }
}

const commands = async (h: RaboshMemoryToolHandler) => {
  await h.execute({ command: 'create', path: '/memories/a/x.md', file_text: 'one' });
  await h.execute({ command: 'create', path: '/memories/a/y.md', file_text: 'one' });
  await h.execute({ command: 'str_replace', path: '/memories/a/x.md', old_str: 'one', new_str: 'two' });
  await h.execute({ command: 'rename', old_path: '/memories/a', new_path: '/memories/b' });
  await h.execute({ command: 'delete', path: '/memories/b/y.md' });
};

const after: [string, string][] = [
  ['renamedFrom', '/memories/a/x.md'],
  ['renamedFrom', '/memories/a/y.md'],
  ['renamedTo', '/memories/b/x.md'],
  ['deleted', '/memories/b/y.md'],
];

describe('handler.changes()', () => {
  it('answers each changed path once, latest change, in commit order, resumable after reopen', async () => {
    const { db, where } = await openStore();
    const h = new RaboshMemoryToolHandler(db);
    const start = await h.changes({ limit: 0 });
    expect(start).toMatchObject({ changes: [], reset: false });
    await commands(h);
    const { changes, cursor } = await drain(h, start.cursor);
    expect(changes).toEqual(after);
    await h.execute({ command: 'create', path: '/memories/later.md', file_text: 'l' });
    await db.close();
    open.splice(open.indexOf(db), 1);
    const reopened = new RaboshMemoryToolHandler((await openStore(where)).db);
    expect((await drain(reopened, cursor)).changes).toEqual([['created', '/memories/later.md']]);
  });

  it('reads what another process commits to a shared store', async () => {
    const { db, where } = await openStore();
    const h = new RaboshMemoryToolHandler(db);
    const { cursor } = await h.changes({ limit: 0 });
    const script = `
      const { Rabosh, RaboshMemoryToolHandler } = await import(${JSON.stringify(fileURLToPath(new URL('../dist/esm/index.js', import.meta.url)))});
      const db = await Rabosh.open(${JSON.stringify(where)});
      const h = new RaboshMemoryToolHandler(db);
      await h.execute({ command: 'create', path: '/memories/elsewhere.md', file_text: 'e' });
      await db.close();`;
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(child.stderr).toBe('');
    expect(child.status).toBe(0);
    expect((await drain(h, cursor)).changes).toEqual([['created', '/memories/elsewhere.md']]);
  });

  it('refuses a limit out of range and a cursor it did not hand out', async () => {
    const h = new RaboshMemoryToolHandler((await openStore()).db);
    await expect(h.changes({ limit: 10_001 })).rejects.toThrow(TypeError);
    await expect(h.changes({ limit: 1.5 })).rejects.toThrow(TypeError);
    await expect(h.changes({ since: 'not a cursor' })).rejects.toThrow(InvalidArgumentError);
  });

  it('answers reset to a cursor from before a redaction erased a path, then reads on', async () => {
    const { db } = await openStore(undefined, { history: true });
    const h = new RaboshMemoryToolHandler(db);
    await h.execute({ command: 'create', path: '/memories/secret.md', file_text: 's' });
    const { cursor } = await h.changes({ limit: 0 });
    await h.execute({ command: 'delete', path: '/memories/secret.md' });
    for (const v of (await h.versions({ path: '/memories/secret.md' })).data) await h.redact(v.id);
    const page = await h.changes({ since: cursor });
    expect(page).toMatchObject({ changes: [], reset: true });
    await h.execute({ command: 'create', path: '/memories/next.md', file_text: 'n' });
    expect((await drain(h, page.cursor)).changes).toEqual([['created', '/memories/next.md']]);
  });

  it('answers the same on PostgreSQL', async () => {
    const h = new RaboshMemoryToolHandler((await openStore(freshPgUrl('changes'))).db);
    const start = await h.changes({ limit: 0 });
    await commands(h);
    // A page reads below every transaction in flight on the server (other test files' too):
    // read on until all are in, for as long as a busy server may hold one open.
    let got: [string, string][] = [];
    let cursor = start.cursor;
    for (const until = Date.now() + 120_000; Date.now() < until && got.length < after.length; ) {
      const page = await drain(h, cursor);
      got = got.concat(page.changes);
      cursor = page.cursor;
      if (got.length < after.length) await new Promise((r) => setTimeout(r, 10));
    }
    expect(got).toEqual(after);
  });
});
