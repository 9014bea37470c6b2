// Shared is the default: several handles share one store (here two in one process: they hold
// separate OS locks and separate in-memory state, just as two processes would); `exclusive: true`
// keeps everyone else out. The multi-process proofs are crates/rabosh/tests/multiproc.rs and
// __test__/multi-process.test.ts.
import { afterEach, describe, expect, it } from 'vitest';

import { InvalidOptionError, Rabosh, RaboshMemoryToolHandler, StoreLockedError } from '../index.ts';
import { makeTempDir, removeDir } from './tmp-dir.ts';

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach(removeDir));

describe('a shared store (the default)', () => {
  it('lets two handles edit one store without losing an update, and keeps exclusive openers out', async () => {
    const dir = makeTempDir();
    dirs.push(dir);
    const a = await RaboshMemoryToolHandler.open(dir);
    const b = await RaboshMemoryToolHandler.open(dir, { exclusive: false });
    await a.execute({ command: 'create', path: '/memories/n', file_text: 'n' });
    await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        (i % 2 ? a : b).execute({ command: 'str_replace', path: '/memories/n', old_str: 'n', new_str: `${i % 10}n` }),
      ),
    );
    const view = (await b.execute({ command: 'view', path: '/memories/n' })).text;
    const content = view.split('\t').at(-1)!.trim();
    expect(content).toHaveLength(41);
    expect((await b.execute({ command: 'view', path: '/memories' })).text).toContain('/memories/n');
    await expect(Rabosh.open(dir, { exclusive: true })).rejects.toBeInstanceOf(StoreLockedError);
    await a.close();
    await b.close();
  });

  it('shares with buffered durability too: a buffered handle and a sync one see each other', async () => {
    const dir = makeTempDir();
    dirs.push(dir);
    const a = await RaboshMemoryToolHandler.open(dir, { durability: 'buffered' });
    const b = await RaboshMemoryToolHandler.open(dir);
    await a.execute({ command: 'create', path: '/memories/b', file_text: 'from a' });
    expect((await b.execute({ command: 'view', path: '/memories/b' })).text).toContain('from a');
    await b.execute({ command: 'str_replace', path: '/memories/b', old_str: 'from a', new_str: 'from b' });
    expect((await a.execute({ command: 'view', path: '/memories/b' })).text).toContain('from b');
    await a.close();
    await b.close();
    await expect(Rabosh.open(dir, { exclusive: 'no' as unknown as boolean })).rejects.toBeInstanceOf(InvalidOptionError);
  });
});
