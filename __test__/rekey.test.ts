// Re-keying (issue 33): `db.rotateKey` only rewraps the data key, so a copy of the old KEY file
// and the old key still open the store, even what is written after the rotation;
// `Rabosh.rekey` rewrites the store under a fresh data key, after which that pair opens nothing.
import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

import {
  CorruptionError,
  InvalidOptionError,
  NotEncryptedError,
  Rabosh,
  RaboshMemoryToolHandler,
  StoreLockedError,
  UnsupportedError,
  WrongKeyError,
} from '../index.js';
import { makeTempDir, removeDir } from './tmp-dir.js';

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach(removeDir));

const OLD = Buffer.alloc(32, 0x31);
const NEW = Buffer.alloc(32, 0x32);

function tempDir(): string {
  const dir = makeTempDir('rabosh-rekey');
  dirs.push(dir);
  return dir;
}

async function write(dir: string, key: Buffer, path: string, text: string): Promise<void> {
  const h = await RaboshMemoryToolHandler.open(dir, { encryption: { key } });
  await h.create({ command: 'create', path, file_text: text });
  await h.close();
}

/** What the old key reads through the old KEY file in a copy of `dir`: the texts, or the error. */
async function attack(dir: string, leakedKeyFile: Buffer): Promise<string[] | Error> {
  const stolen = `${dir}-stolen`;
  mkdirSync(stolen);
  for (const name of readdirSync(dir)) copyFileSync(join(dir, name), join(stolen, name));
  writeFileSync(join(stolen, 'KEY'), leakedKeyFile);
  try {
    const h = await RaboshMemoryToolHandler.open(stolen, { create: false, encryption: { key: OLD } });
    try {
      return [
        await h.view({ command: 'view', path: '/memories/before.md' }),
        await h.view({ command: 'view', path: '/memories/after.md' }),
      ];
    } finally {
      await h.close();
    }
  } catch (e) {
    return e as Error;
  }
}

describe('a leaked KEY file copy and the old key', () => {
  for (const how of ['rewrap', 'rekey'] as const) {
    it(`${how === 'rewrap' ? 'open everything after a rewrap (rotateKey)' : 'open nothing after a re-key (Rabosh.rekey)'}`, async () => {
      const dir = join(tempDir(), how);
      await write(dir, OLD, '/memories/before.md', 'secret from before');
      const leaked = readFileSync(join(dir, 'KEY'));
      if (how === 'rewrap') {
        const db = await Rabosh.open(dir, { encryption: { key: OLD } });
        await db.rotateKey(NEW);
        await db.close();
      } else {
        await Rabosh.rekey(dir, { encryption: { key: OLD }, newKey: NEW });
      }
      await write(dir, NEW, '/memories/after.md', 'secret from after');
      await expect(Rabosh.open(dir, { encryption: { key: OLD } })).rejects.toBeInstanceOf(WrongKeyError);

      const got = await attack(dir, leaked);
      if (how === 'rewrap') {
        expect(got).toEqual([expect.stringContaining('secret from before'), expect.stringContaining('secret from after')]);
      } else {
        expect(got).toBeInstanceOf(CorruptionError);
      }
      // The store itself holds both memories under the new key.
      const h = await RaboshMemoryToolHandler.open(dir, { create: false, encryption: { key: NEW } });
      expect(await h.view({ command: 'view', path: '/memories/before.md' })).toContain('secret from before');
      expect(await h.view({ command: 'view', path: '/memories/after.md' })).toContain('secret from after');
      await h.close();
    });
  }
});

describe('Rabosh.rekey', () => {
  it('keeps every memory and its history, and may keep the same host key', async () => {
    const dir = join(tempDir(), 's');
    const db = await Rabosh.open(dir, { history: true, encryption: { key: OLD } });
    const h = new RaboshMemoryToolHandler(db);
    await h.create({ command: 'create', path: '/memories/a.md', file_text: 'one' });
    await h.str_replace({ command: 'str_replace', path: '/memories/a.md', old_str: 'one', new_str: 'two' });
    await db.close();
    const leaked = readFileSync(join(dir, 'KEY'));
    await Rabosh.rekey(dir, { encryption: { keyProvider: async () => OLD }, newKey: OLD });
    expect(readFileSync(join(dir, 'KEY')).equals(leaked)).toBe(false);
    const again = await RaboshMemoryToolHandler.open(dir, { create: false, encryption: { key: OLD } });
    expect(await again.view({ command: 'view', path: '/memories/a.md' })).toContain('two');
    expect((await again.usage()).memories).toBe(1);
    await again.close();
  });

  it('refuses bad options, showing no key byte, and a store it cannot re-key, writing nothing', async () => {
    const root = tempDir();
    const dir = join(root, 's');
    await write(dir, OLD, '/memories/a.md', 'kept');
    const before = readFileSync(join(dir, 'KEY'));
    const refusals: [unknown, RegExp][] = [
      [undefined, /expected \{ encryption, newKey \}/],
      [{ newKey: NEW }, /the current key is needed/],
      [{ encryption: { key: OLD }, newKey: Buffer.alloc(31) }, /newKey: a Buffer of 31 bytes/],
      [{ encryption: { key: OLD }, newKey: NEW, newkey: NEW }, /invalid option newkey: unknown option/],
      [{ encryption: { key: OLD }, newKey: NEW, reencrypt: true }, /invalid option reencrypt: unknown option/],
    ];
    for (const [options, message] of refusals) {
      const e = await Rabosh.rekey(dir, options as never).catch((x: Error) => x);
      expect(e).toBeInstanceOf(InvalidOptionError);
      expect((e as Error).message).toMatch(message);
      expect((e as Error).message).not.toContain('49,49');
    }
    await expect(Rabosh.rekey(dir, { encryption: { key: NEW }, newKey: NEW })).rejects.toBeInstanceOf(WrongKeyError);
    const open = await Rabosh.open(dir, { encryption: { key: OLD } });
    await expect(Rabosh.rekey(dir, { encryption: { key: OLD }, newKey: NEW })).rejects.toBeInstanceOf(StoreLockedError);
    await open.close();
    expect(readFileSync(join(dir, 'KEY')).equals(before)).toBe(true);

    const plain = join(root, 'plain');
    await (await Rabosh.open(plain)).close();
    await expect(Rabosh.rekey(plain, { encryption: { key: OLD }, newKey: NEW })).rejects.toBeInstanceOf(NotEncryptedError);
    await expect(Rabosh.rekey('postgres://localhost/x', { encryption: { key: OLD }, newKey: NEW })).rejects.toBeInstanceOf(
      UnsupportedError,
    );
  });
});
