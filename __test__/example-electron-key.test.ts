// The Electron key pattern (examples/electron/key.cjs) driven under Node. Electron cannot be
// downloaded on this machine, so `safeStorage` here is a stand-in written from the published
// TypeScript shape of Electron's `SafeStorage` (electron.d.ts: isAsyncEncryptionAvailable():
// Promise<boolean>, encryptStringAsync(plainText: string): Promise<Buffer>,
// decryptStringAsync(encrypted: Buffer): Promise<{ shouldReEncrypt: boolean; result: string }>),
// sealing with AES-256-GCM under an "OS key" it can replace, as the OS does when it rotates the
// key safeStorage uses. It proves the pattern's logic (generate once, re-save on
// shouldReEncrypt, never a new key over an unreadable file), not Electron itself.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

import { RaboshMemoryToolHandler, WrongKeyError } from '../index.js';
import { makeTempDir, removeDir } from './tmp-dir.js';

/** The part of Electron's `SafeStorage` the pattern uses, as electron.d.ts declares it. */
interface SafeStorage {
  isAsyncEncryptionAvailable(): Promise<boolean>;
  encryptStringAsync(plainText: string): Promise<Buffer>;
  decryptStringAsync(encrypted: Buffer): Promise<{ shouldReEncrypt: boolean; result: string }>;
}

const { loadKey } = createRequire(import.meta.url)('../examples/electron/key.cjs') as {
  loadKey(safeStorage: SafeStorage, file: string): Promise<Buffer>;
};

/** A stand-in OS keychain: versioned AES-GCM keys; `rotate` adds a newer one. */
class StandInSafeStorage implements SafeStorage {
  keys: Buffer[] = [randomBytes(32)];
  available = true;
  encryptions = 0;
  rotate(): void {
    this.keys.push(randomBytes(32));
  }
  async isAsyncEncryptionAvailable(): Promise<boolean> {
    return this.available;
  }
  async encryptStringAsync(plainText: string): Promise<Buffer> {
    this.encryptions++;
    const version = this.keys.length - 1;
    const iv = randomBytes(12);
    const c = createCipheriv('aes-256-gcm', this.keys[version]!, iv);
    const body = Buffer.concat([c.update(plainText, 'utf8'), c.final()]);
    return Buffer.concat([Buffer.from([version]), iv, c.getAuthTag(), body]);
  }
  async decryptStringAsync(encrypted: Buffer): Promise<{ shouldReEncrypt: boolean; result: string }> {
    const version = encrypted[0]!;
    const d = createDecipheriv('aes-256-gcm', this.keys[version]!, encrypted.subarray(1, 13));
    d.setAuthTag(encrypted.subarray(13, 29));
    const result = Buffer.concat([d.update(encrypted.subarray(29)), d.final()]).toString('utf8');
    return { shouldReEncrypt: version !== this.keys.length - 1, result };
  }
}

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach(removeDir));

describe('examples/electron key pattern', () => {
  it('generates the key once, keeps only ciphertext on disk, and re-saves on shouldReEncrypt', async () => {
    const dir = makeTempDir('rabosh-electron-key');
    dirs.push(dir);
    const file = join(dir, 'memory.key');
    const safe = new StandInSafeStorage();

    const key = await loadKey(safe, file);
    expect(key.length).toBe(32);
    const onDisk = readFileSync(file);
    for (const form of [key, Buffer.from(key.toString('base64')), Buffer.from(key.toString('hex'))]) {
      expect(onDisk.includes(form)).toBe(false);
    }
    if (process.platform !== 'win32') expect(statSync(file).mode & 0o077).toBe(0);

    // Second launch: the same key, nothing rewritten.
    expect((await loadKey(safe, file)).equals(key)).toBe(true);
    expect(readFileSync(file).equals(onDisk)).toBe(true);
    expect(safe.encryptions).toBe(1);

    // The OS replaced its key: the same store key, saved again under the new OS key.
    safe.rotate();
    expect((await loadKey(safe, file)).equals(key)).toBe(true);
    expect(safe.encryptions).toBe(2);
    expect(readFileSync(file)[0]).toBe(1);
    expect((await loadKey(safe, file)).equals(key)).toBe(true);
    expect(safe.encryptions).toBe(2);

    // It opens a real store through keyProvider, and the next launch's key reopens it.
    const store = join(dir, 'store');
    const h = await RaboshMemoryToolHandler.open(store, { encryption: { keyProvider: () => loadKey(safe, file) } });
    await h.create({ command: 'create', path: '/memories/e.md', file_text: 'electron secret' });
    await h.close();
    const again = await RaboshMemoryToolHandler.open(store, { encryption: { keyProvider: () => loadKey(safe, file) } });
    expect(await again.view({ command: 'view', path: '/memories/e.md' })).toContain('electron secret');
    await again.close();
    // A stand-in that generated a fresh key instead would be refused by the store.
    await expect(RaboshMemoryToolHandler.open(store, { encryption: { key: randomBytes(32) } })).rejects.toBeInstanceOf(WrongKeyError);
  });

  it('refuses, never replaces the key, when safeStorage cannot encrypt or the file does not decrypt', async () => {
    const dir = makeTempDir('rabosh-electron-key');
    dirs.push(dir);
    const file = join(dir, 'memory.key');
    const safe = new StandInSafeStorage();
    safe.available = false;
    await expect(loadKey(safe, file)).rejects.toThrow(/cannot encrypt/);
    safe.available = true;
    await loadKey(safe, file);
    const damaged = readFileSync(file);
    damaged[damaged.length - 1]! ^= 1;
    writeFileSync(file, damaged);
    await expect(loadKey(safe, file)).rejects.toThrow();
    expect(readFileSync(file).equals(damaged)).toBe(true);
    expect(safe.encryptions).toBe(1);
  });
});
