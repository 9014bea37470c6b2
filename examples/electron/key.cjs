// The documented pattern for an Electron app's store key (docs/guide/encryption.md, "Electron"):
// generated once with crypto.randomBytes, kept on disk only as safeStorage's ciphertext (the OS
// keychain / DPAPI / libsecret protects it), read back with the asynchronous API, and written
// again when safeStorage reports `shouldReEncrypt` (the OS key it used has been replaced).
//
// Use: Rabosh.open(dir, { encryption: { keyProvider: () => loadKey(safeStorage, keyFile) } })
// with keyFile = path.join(app.getPath('userData'), 'memory.key').
//
// safeStorage encrypts strings, so the key passes through one base64 string here; that is the
// API's shape. The key is never logged and never leaves the main process.
'use strict';
const { randomBytes } = require('node:crypto');
const fs = require('node:fs/promises');

const KEY_BYTES = 32;

/** Writes `bytes` to `file` whole or not at all (a crash mid-write must not lose the key). */
async function writeAtomically(file, bytes) {
  const tmp = `${file}.${process.pid}.tmp`;
  const handle = await fs.open(tmp, 'w', 0o600);
  try {
    await handle.writeFile(bytes);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await fs.rename(tmp, file);
}

/**
 * The store's key: from `file` when it exists, else a new one, sealed and saved first.
 * `safeStorage` is Electron's (or anything of its published shape). Refuses, rather than making
 * a new key, when the file exists but does not decrypt: a new key would orphan the store.
 */
async function loadKey(safeStorage, file) {
  if (!(await safeStorage.isAsyncEncryptionAvailable())) {
    throw new Error('safeStorage cannot encrypt on this system (no keychain / secret service): refusing to keep the key in plain text');
  }
  let sealed;
  try {
    sealed = await fs.readFile(file);
  } catch (e) {
    if (e.code !== 'ENOENT') throw e;
    const key = randomBytes(KEY_BYTES);
    await writeAtomically(file, await safeStorage.encryptStringAsync(key.toString('base64')));
    return key;
  }
  const { result, shouldReEncrypt } = await safeStorage.decryptStringAsync(sealed);
  const key = Buffer.from(result, 'base64');
  if (key.length !== KEY_BYTES) throw new Error(`${file} does not hold a ${KEY_BYTES}-byte key`);
  if (shouldReEncrypt) await writeAtomically(file, await safeStorage.encryptStringAsync(result));
  return key;
}

module.exports = { loadKey, KEY_BYTES };
