// Issue 33: a checkpoint's MANIFEST copied back over its store (a backup tool restoring one file,
// a file-sync client) must not drop, without a word, the memories written after the checkpoint.
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';

import { Rabosh, RaboshMemoryToolHandler } from '../index.js';
import { makeTempDir, removeDir } from './tmp-dir.js';

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach(removeDir));

it('an older MANIFEST put back keeps the memories written after it', async () => {
  const dir = makeTempDir('rabosh-put-back');
  const cp = join(makeTempDir('rabosh-put-back-cp'), 'cp');
  dirs.push(dir, join(cp, '..'));
  const db = await Rabosh.open(dir);
  const h = new RaboshMemoryToolHandler(db);
  await h.execute({ command: 'create', path: '/memories/before.md', file_text: 'before' });
  await db.checkpoint(cp);
  await h.execute({ command: 'create', path: '/memories/after.md', file_text: 'acknowledged after' });
  await db.close();
  copyFileSync(join(cp, 'MANIFEST'), join(dir, 'MANIFEST'));

  const again = await Rabosh.open(dir);
  const h2 = new RaboshMemoryToolHandler(again);
  expect((await h2.execute({ command: 'view', path: '/memories/after.md' })).text).toContain('acknowledged after');
  expect((await h2.execute({ command: 'view', path: '/memories/before.md' })).text).toContain('before');
  expect((await again.verify()).keys).toBeGreaterThanOrEqual(2);
  await again.close();
});
