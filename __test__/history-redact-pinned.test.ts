// Issue 33: a redaction beside what pins the old state. A snapshot of the same handle taken
// before redact() keeps the secret readable (and on disk) only until it is released; an at()
// view built before the redaction answers as after it.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';

import { Rabosh, RaboshMemoryToolHandler } from '../index.js';
import { makeTempDir, removeDir } from './tmp-dir.js';

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach(removeDir));

/** Files of the store directory that hold `needle`'s bytes. */
function filesHolding(dir: string, needle: string): string[] {
  const bytes = Buffer.from(needle);
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return filesHolding(p, needle);
    return readFileSync(p).includes(bytes) ? [name] : [];
  });
}

const secret = 'card 4111-1111-1111-1111';

async function secretVersion(h: RaboshMemoryToolHandler): Promise<string> {
  for (const v of (await h.versions()).data) {
    if ((await h.version(v.id))?.content?.includes(secret)) return v.id;
  }
  throw new Error('no version holds the secret');
}

it('a snapshot taken before redact() pins the secret only until it is released', async () => {
  const dir = makeTempDir('rabosh-redact-pinned');
  dirs.push(dir);
  const db = await Rabosh.open(dir, { history: true });
  const h = new RaboshMemoryToolHandler(db);
  await h.execute({ command: 'create', path: '/memories/n.md', file_text: `pay with ${secret}` });
  await h.execute({ command: 'str_replace', path: '/memories/n.md', old_str: secret, new_str: 'cash' });
  const id = await secretVersion(h);
  const snap = db.snapshot();
  await h.redact(id);
  // The snapshot still answers as it was taken: that is what it is for.
  expect((await h.viewAt(snap, { command: 'view', path: '/memories' })).isError).toBe(false);
  snap.release();
  expect(filesHolding(dir, secret)).toEqual([]);
  await db.close();
  expect(filesHolding(dir, secret)).toEqual([]);
});

it('an at() view built before a redaction answers as after it', async () => {
  const dir = makeTempDir('rabosh-redact-at');
  dirs.push(dir);
  const db = await Rabosh.open(dir, { history: true });
  const h = new RaboshMemoryToolHandler(db);
  await h.execute({ command: 'create', path: '/memories/n.md', file_text: `pay with ${secret}` });
  await new Promise((r) => setTimeout(r, 5));
  const then = new Date();
  await new Promise((r) => setTimeout(r, 5));
  await h.execute({ command: 'str_replace', path: '/memories/n.md', old_str: secret, new_str: 'cash' });
  const past = await h.at(then);
  expect(await past.view({ path: '/memories/n.md' })).toContain(secret);
  await h.redact(await secretVersion(h));
  const fresh = await h.at(then);
  for (const path of ['/memories/n.md', '/memories']) {
    const text = await past.view({ path });
    expect(text).not.toContain(secret);
    expect(text).toBe(await fresh.view({ path }));
  }
  expect(filesHolding(dir, secret)).toEqual([]);
  await db.close();
  expect(filesHolding(dir, secret)).toEqual([]);
});
