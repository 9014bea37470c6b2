/**
 * The `encryption` store option: a 32-byte key from the host, given as bytes or fetched by an
 * async provider at open. The key goes to the native store as a fresh byte copy that is zeroed
 * once the call returns; it is never turned into a string here (strings cannot be wiped, and a
 * string could end up in a log line or an error message).
 */

import { InvalidOptionError } from './errors.js';
import { optionRecord } from './options.js';

/** Bytes of a key: XChaCha20-Poly1305 takes 256-bit keys. */
export const KEY_BYTES = 32;

/**
 * Encryption at rest (docs/guide/encryption.md): every key, value and piece of metadata the store
 * writes is sealed with a data key the host's key wraps. Give exactly one of the two.
 */
export interface EncryptionOptions {
  /** The host's key: exactly 32 bytes (a `Uint8Array` or `Buffer`). */
  key?: Uint8Array;
  /**
   * Called once per open for the key (say, from the OS keychain); resolves to 32 bytes.
   * A rejection rejects the open with that error, touching nothing.
   */
  keyProvider?: () => Promise<Uint8Array> | Uint8Array;
}

const ENCRYPTION_KEYS = ['key', 'keyProvider'] as const;

/** What a refusal may say of a key: its type and length, never its bytes. */
function describe(value: unknown): string {
  if (value instanceof Uint8Array) return `a ${value.constructor.name} of ${value.length} bytes`;
  if (typeof value === 'string') return `a string of ${value.length} characters`;
  if (value === null) return 'null';
  return `a value of type ${typeof value}`;
}

/** A copy of `value` when it is a 32-byte key; else `InvalidOptionError` naming `option`. */
export function keyBytes(value: unknown, option: string): Uint8Array {
  if (!(value instanceof Uint8Array) || value.length !== KEY_BYTES) {
    throw new InvalidOptionError(
      `invalid option ${option}: ${describe(value)} (expected a Uint8Array or Buffer of exactly ${KEY_BYTES} bytes)`,
    );
  }
  // A copy the host cannot change under the open, and one this module may zero afterwards.
  return Buffer.from(value);
}

/** The validated option: how to get the key, checked before anything is opened. */
export type KeySource = { key: Uint8Array } | { keyProvider: () => Promise<Uint8Array> | Uint8Array };

/** Checks the option's shape (undefined: no encryption). */
export function encryptionOption(value: unknown): KeySource | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'object' || value === null || value instanceof Uint8Array) {
    throw new InvalidOptionError(`invalid option encryption: ${describe(value)} (expected { key } or { keyProvider })`);
  }
  const o = optionRecord(value);
  for (const k of Object.keys(o)) {
    if (!(ENCRYPTION_KEYS as readonly string[]).includes(k)) {
      // The value is not shown: a misspelt `key` holds the key.
      throw new InvalidOptionError(`invalid option encryption.${k}: unknown option`);
    }
  }
  const key = o['key'];
  const provider = o['keyProvider'];
  if ((key === undefined) === (provider === undefined)) {
    throw new InvalidOptionError('invalid option encryption: give exactly one of key and keyProvider');
  }
  if (provider !== undefined) {
    if (typeof provider !== 'function') {
      throw new InvalidOptionError(`invalid option encryption.keyProvider: ${describe(provider)} (expected a function)`);
    }
    return { keyProvider: provider as () => Promise<Uint8Array> | Uint8Array };
  }
  return { key: keyBytes(key, 'encryption.key') };
}

/** The key bytes of a source: the copy, or the provider's answer checked and copied. */
export async function resolveKey(source: KeySource): Promise<Uint8Array> {
  if ('key' in source) return source.key;
  return keyBytes(await source.keyProvider(), 'encryption.keyProvider (its result)');
}

/** Runs `call` with the key's bytes, zeroing them when it settles. */
export async function withKey<T>(key: Uint8Array | undefined, call: (key: Uint8Array | undefined) => Promise<T>): Promise<T> {
  try {
    return await call(key);
  } finally {
    key?.fill(0);
  }
}

/** The options of `Rabosh.rekey`: the store's current key, and the key to wrap the new data key. */
export interface RekeyOptions {
  /** The store's current key, as at open: `{ key }` or `{ keyProvider }`. */
  encryption: EncryptionOptions;
  /** The host key that wraps the fresh data key: 32 bytes (it may be the current key). */
  newKey: Uint8Array;
}

const REKEY_KEYS = ['encryption', 'newKey'] as const;

/** Checks `Rabosh.rekey`'s options: the current key's source and a copy of the new key. */
export function rekeyOptions(value: unknown): { source: KeySource; newKey: Uint8Array } {
  if (typeof value !== 'object' || value === null || value instanceof Uint8Array) {
    throw new InvalidOptionError(`invalid options: ${describe(value)} (expected { encryption, newKey })`);
  }
  const o = optionRecord(value);
  for (const k of Object.keys(o)) {
    // The value is not shown: a misspelt `newKey` holds a key.
    if (!(REKEY_KEYS as readonly string[]).includes(k)) throw new InvalidOptionError(`invalid option ${k}: unknown option`);
  }
  const source = encryptionOption(o['encryption']);
  if (source === undefined) {
    throw new InvalidOptionError('invalid option encryption: the current key is needed ({ key } or { keyProvider })');
  }
  return { source, newKey: keyBytes(o['newKey'], 'newKey') };
}
