// Encryption at rest through the JS API (issue 21): the option's checks, the typed refusals
// (from Rust's codes, never message parsing), every byte of the directory free of what was
// written, and everything else still working encrypted: export/import, history, at(),
// redaction, checkpoint, rotation, and shared mode with a second process.
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';

import {
  EncryptionKeyRequiredError,
  InvalidOptionError,
  NotEncryptedError,
  Rabosh,
  RaboshMemoryToolHandler,
  WrongKeyError,
} from '../index.js';
import { makeTempDir, removeDir } from './tmp-dir.js';

const run = promisify(execFile);
const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach(removeDir));

function tempDir(): string {
  const dir = makeTempDir('rabosh-encryption');
  dirs.push(dir);
  return dir;
}

const KEY = Buffer.alloc(32, 0x11);
const OTHER = Buffer.alloc(32, 0x22);

/** Every file under `dir`, recursively, as one list of buffers. */
function files(dir: string): Buffer[] {
  const out: Buffer[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...files(p));
    else out.push(readFileSync(p));
  }
  return out;
}

/** The needles found in any byte of any file under `dir`. */
function hits(dir: string, needles: string[]): string[] {
  const all = files(dir);
  return needles.filter((n) => all.some((b) => b.includes(Buffer.from(n))));
}

const SEGMENT = 'diagnosis-folder';
const CONTENT = 'the patient reported zebra-stripes';
const RENAMED = 'quarterly-secret-plan';

/** Writes, renames, history versions, a compaction and a checkpoint into `dir`. */
async function fill(dir: string, encryption: { key: Uint8Array } | undefined): Promise<string> {
  const db = await Rabosh.open(dir, { history: true, ...(encryption === undefined ? {} : { encryption }) });
  const h = new RaboshMemoryToolHandler(db);
  await h.create({ command: 'create', path: `/memories/${SEGMENT}/a.md`, file_text: `${CONTENT}\nline two` });
  await h.str_replace({ command: 'str_replace', path: `/memories/${SEGMENT}/a.md`, old_str: 'line two', new_str: 'line 2 edited' });
  await h.create({ command: 'create', path: '/memories/b.md', file_text: 'bravo' });
  await h.rename({ command: 'rename', old_path: '/memories/b.md', new_path: `/memories/${RENAMED}.md` });
  await db.compact();
  const checkpoint = join(dir, '..', `${dir.split('/').pop()}-checkpoint`);
  await db.checkpoint(checkpoint);
  await db.close();
  return checkpoint;
}

describe('the encryption option', () => {
  it('refuses anything but one 32-byte key or a provider, showing no byte of it', async () => {
    const dir = join(tempDir(), 's');
    const secretish = Buffer.alloc(31, 0x41); // "AAAA…"
    const bad: unknown[] = [
      { key: secretish },
      { key: Buffer.alloc(33) },
      { key: 'A'.repeat(32) },
      { key: Array.from(KEY) },
      {},
      { key: KEY, keyProvider: async () => KEY },
      { keyProvider: KEY },
      { kee: KEY },
      KEY,
      'key',
    ];
    for (const encryption of bad) {
      const e = await Rabosh.open(dir, { encryption } as never).catch((x: unknown) => x);
      expect(e, JSON.stringify(encryption)).toBeInstanceOf(InvalidOptionError);
      expect((e as Error).message).not.toMatch(/AAAA|65,65/);
    }
    const provided = await Rabosh.open(dir, { encryption: { keyProvider: async () => Buffer.alloc(16) } }).catch((x: unknown) => x);
    expect(provided).toBeInstanceOf(InvalidOptionError);
    const thrown = new Error('keychain locked');
    expect(await Rabosh.open(dir, { encryption: { keyProvider: () => Promise.reject(thrown) } }).catch((x: unknown) => x)).toBe(thrown);
    // Nothing above created a store.
    expect(() => readdirSync(dir)).toThrow();
  });

  it('opens with a key or a provider, and refuses the wrong key, no key, and a key on a plain store, typed', async () => {
    const root = tempDir();
    const dir = join(root, 'enc');
    const db = await Rabosh.open(dir, { encryption: { keyProvider: async () => new Uint8Array(KEY) } });
    expect(db.encrypted).toBe(true);
    const h = new RaboshMemoryToolHandler(db);
    await h.create({ command: 'create', path: '/memories/a.md', file_text: 'alpha' });
    await db.close();

    const before = files(dir);
    await expect(Rabosh.open(dir, { encryption: { key: OTHER } })).rejects.toBeInstanceOf(WrongKeyError);
    await expect(Rabosh.open(dir)).rejects.toBeInstanceOf(EncryptionKeyRequiredError);
    expect(files(dir)).toEqual(before); // refused opens write nothing

    const plain = join(root, 'plain');
    await (await Rabosh.open(plain)).close();
    await expect(Rabosh.open(plain, { encryption: { key: KEY } })).rejects.toBeInstanceOf(NotEncryptedError);

    const again = await RaboshMemoryToolHandler.open(dir, { encryption: { key: KEY } });
    expect(await again.view({ command: 'view', path: '/memories/a.md' })).toContain('alpha');
    await again.close();
  });
});

describe('an encrypted store on disk', () => {
  it('holds no path segment and no content fragment in any byte, its checkpoint neither (a plain store does)', async () => {
    const root = tempDir();
    const needles = [SEGMENT, CONTENT.slice(12, 24), 'zebra', 'edited', 'bravo', RENAMED];
    const plainCheckpoint = await fill(join(root, 'plain'), undefined);
    // The control: the same work on a plain store leaves every needle readable.
    expect(hits(join(root, 'plain'), needles)).toEqual(needles);
    expect(hits(plainCheckpoint, needles).length).toBeGreaterThan(0);

    const checkpoint = await fill(join(root, 'enc'), { key: KEY });
    expect(hits(join(root, 'enc'), needles)).toEqual([]);
    expect(hits(checkpoint, needles)).toEqual([]);
    // The checkpoint opens with the same key, and only with it.
    await expect(Rabosh.open(checkpoint, { create: false })).rejects.toBeInstanceOf(EncryptionKeyRequiredError);
    const h = await RaboshMemoryToolHandler.open(checkpoint, { create: false, encryption: { key: KEY } });
    expect(await h.view({ command: 'view', path: `/memories/${RENAMED}.md` })).toContain('bravo');
    await h.close();
  });
});

describe('everything works encrypted', () => {
  it("exports plain by the host's choice and imports into an encrypted store", async () => {
    const root = tempDir();
    await fill(join(root, 'enc'), { key: KEY });
    const from = await RaboshMemoryToolHandler.open(join(root, 'enc'), { encryption: { key: KEY } });
    const exported = await from.exportMemories();
    await from.close();
    expect(exported.map((m) => m.path).sort()).toEqual([`/memories/${RENAMED}.md`, `/memories/${SEGMENT}/a.md`].sort());
    expect(exported.find((m) => m.path.endsWith('a.md'))?.content).toContain('zebra');

    const to = await RaboshMemoryToolHandler.open(join(root, 'copy'), { encryption: { key: OTHER } });
    await to.importMemories(exported.map((m) => ({ path: m.path, content: m.content })));
    expect(await to.view({ command: 'view', path: `/memories/${SEGMENT}/a.md` })).toContain('zebra');
    await to.close();
    expect(hits(join(root, 'copy'), ['zebra', SEGMENT, 'bravo'])).toEqual([]);
  });

  it('keeps history, at() and redaction; the redacted bytes are gone after compaction', async () => {
    const dir = join(tempDir(), 'hist');
    const db = await Rabosh.open(dir, { history: true, encryption: { key: KEY } });
    expect(db.encrypted).toBe(true);
    const h = new RaboshMemoryToolHandler(db);
    await h.create({ command: 'create', path: '/memories/n.md', file_text: 'first words' });
    const mid = new Date();
    await new Promise((r) => setTimeout(r, 20));
    await h.str_replace({ command: 'str_replace', path: '/memories/n.md', old_str: 'first', new_str: 'second' });
    const past = await h.at(mid);
    expect(await past.view({ path: '/memories/n.md' })).toContain('first words');
    const versions = (await h.versions({ path: '/memories/n.md' })).data;
    expect(versions.length).toBe(2);
    const oldest = versions[versions.length - 1]!;
    expect((await h.version(oldest.id))?.content).toBe('first words');
    await h.redact(oldest.id);
    expect((await h.version(oldest.id))?.content).toBeNull();
    await db.compact();
    await db.close();
    expect(hits(dir, ['first words', 'second words', 'n.md'])).toEqual([]);
    const again = await RaboshMemoryToolHandler.open(dir, { encryption: { key: KEY } });
    expect(await again.view({ command: 'view', path: '/memories/n.md' })).toContain('second words');
    await again.close();
  });

  it('rotates the key: the new key opens, the old one is refused, data unchanged', async () => {
    const root = tempDir();
    const dir = join(root, 'rot');
    const db = await Rabosh.open(dir, { encryption: { key: KEY } });
    await new RaboshMemoryToolHandler(db).create({ command: 'create', path: '/memories/r.md', file_text: 'kept' });
    await expect(db.rotateKey(Buffer.alloc(8))).rejects.toBeInstanceOf(InvalidOptionError);
    await db.rotateKey(OTHER);
    // This handle keeps working after its rotation.
    await new RaboshMemoryToolHandler(db).create({ command: 'create', path: '/memories/s.md', file_text: 'after' });
    await db.close();
    await expect(Rabosh.open(dir, { encryption: { key: KEY } })).rejects.toBeInstanceOf(WrongKeyError);
    const h = await RaboshMemoryToolHandler.open(dir, { encryption: { key: OTHER } });
    expect(await h.view({ command: 'view', path: '/memories/r.md' })).toContain('kept');
    expect(await h.view({ command: 'view', path: '/memories/s.md' })).toContain('after');
    await h.close();

    const plain = await Rabosh.open(join(root, 'plain'));
    await expect(plain.rotateKey(KEY)).rejects.toBeInstanceOf(NotEncryptedError);
    await plain.close();
  });

  it('is shared with another process that has the key; one with the wrong key is refused', async () => {
    const dir = join(tempDir(), 'shared');
    const db = await Rabosh.open(dir, { encryption: { key: KEY } });
    const h = new RaboshMemoryToolHandler(db);
    await h.create({ command: 'create', path: '/memories/p.md', file_text: 'from parent' });
    const child = (key: Buffer) => `
      const { RaboshMemoryToolHandler } = require(${JSON.stringify(join(process.cwd(), 'dist/cjs/index.js'))});
      (async () => {
        try {
          const h = await RaboshMemoryToolHandler.open(${JSON.stringify(dir)}, { encryption: { key: Buffer.from(${JSON.stringify(key.toString('hex'))}, 'hex') } });
          const seen = await h.view({ command: 'view', path: '/memories/p.md' });
          await h.create({ command: 'create', path: '/memories/c.md', file_text: 'from child' });
          await h.close();
          console.log(JSON.stringify({ seen }));
        } catch (e) { console.log(JSON.stringify({ error: e.name })); }
      })();`;
    const good = JSON.parse((await run(process.execPath, ['-e', child(KEY)])).stdout);
    expect(good.seen).toContain('from parent');
    expect(await h.view({ command: 'view', path: '/memories/c.md' })).toContain('from child');
    const bad = JSON.parse((await run(process.execPath, ['-e', child(OTHER)])).stdout);
    expect(bad).toEqual({ error: 'WrongKeyError' });
    await db.close();
  });
});
