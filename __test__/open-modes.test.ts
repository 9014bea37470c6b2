// Opening without creating, and how the facade types the faults a store open or an expiry raises.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { InvalidArgumentError, IoError, NotAStoreError, Rabosh, RaboshMemoryToolHandler } from '../index.js';
import { fromNative } from '../src/errors.js';
import { makeTempDir, removeDir } from './tmp-dir.js';

let tmp: string;
beforeEach(() => {
  tmp = makeTempDir('rabosh-open-modes');
});
afterEach(() => removeDir(tmp));

describe('create: false', () => {
  it('refuses an absent, an empty and a non-store directory with NotAStoreError, writing nothing', async () => {
    const absent = join(tmp, 'absent');
    const empty = join(tmp, 'empty');
    const other = join(tmp, 'other');
    mkdirSync(empty);
    mkdirSync(other);
    writeFileSync(join(other, 'notes.txt'), 'not a store');
    for (const dir of [absent, empty, other]) {
      const err = await Rabosh.open(dir, { create: false }).catch((e: unknown) => e);
      expect(err, dir).toBeInstanceOf(NotAStoreError);
      expect((err as NotAStoreError).code).toBe('RABOSH_NOT_A_STORE');
    }
    expect(readdirSync(tmp).sort()).toEqual(['empty', 'other']);
    expect(readdirSync(empty)).toEqual([]);
    expect(readdirSync(other)).toEqual(['notes.txt']);
  });

  it('opens an existing store and answers from it', async () => {
    const dir = join(tmp, 'store');
    const h = await RaboshMemoryToolHandler.open(dir);
    await h.execute({ command: 'create', path: '/memories/a.md', file_text: 'x' });
    await h.close();
    const again = await RaboshMemoryToolHandler.open(dir, { create: false });
    expect((await again.execute({ command: 'view', path: '/memories/a.md' })).text).toContain('1\tx');
    await again.close();
  });
});

describe('a file is not a store', () => {
  it('is refused with InvalidArgumentError naming it, not the OS text about its MANIFEST', async () => {
    const file = join(tmp, 'notes.txt');
    writeFileSync(file, 'not a store');
    for (const dir of [file, join(file, 'below')]) {
      for (const create of [false, true]) {
        const err = await Rabosh.open(dir, { create }).catch((e: unknown) => e);
        expect(err, `${dir} create ${create}`).toBeInstanceOf(InvalidArgumentError);
        expect((err as InvalidArgumentError).code).toBe('RABOSH_INVALID_ARGUMENT');
        expect((err as Error).message).toBe(`${dir} is not a directory: a store is a directory`);
      }
    }
    expect(readdirSync(tmp)).toEqual(['notes.txt']);
  });
});

describe('typed faults', () => {
  it('an expiry whose reclaim failed keeps its count on the IoError', () => {
    const e = fromNative({ code: 'RABOSH_IO', message: 'expired 3 memories …', expired: 3 });
    expect(e).toBeInstanceOf(IoError);
    expect((e as IoError).expired).toBe(3);
    expect((fromNative({ code: 'RABOSH_IO', message: 'x' }) as IoError).expired).toBeUndefined();
  });
});
