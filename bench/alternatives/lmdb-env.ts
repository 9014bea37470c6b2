// What both LMDB alternatives do the same way: one environment without compression, key ranges
// over paths, and the transaction seam (reads in place, every write one `transaction()` answered
// after `flushed`, so a command is as durable as ours). They differ only in what they keep.

import { open, type Database, type RootDatabase } from 'lmdb';
import type { Tx, TxStore } from './memory-commands.js';

export function openEnv(dir: string): RootDatabase {
  return open({ path: dir, compression: false });
}

/** The keys that start with `prefix`: '0' is the character after the '/' a prefix ends in. */
export function under(prefix: string): { start: string; end: string } {
  return { start: prefix, end: `${prefix.slice(0, -1)}0` };
}

/** The key `path` itself when `db` holds it, then every key under `path/`. */
export function keysAt(db: Database<unknown, string>, path: string): string[] {
  return [...(db.get(path) !== undefined ? [path] : []), ...db.getKeys(under(`${path}/`))];
}

export function anyKeyUnder(db: Database<unknown, string>, prefix: string): boolean {
  for (const _ of db.getKeys({ ...under(prefix), limit: 1 })) return true;
  return false;
}

/** Removes `keys` from every one of `dbs`; returns how many keys. */
export function removeKeys(keys: readonly string[], ...dbs: Database<unknown, string>[]): number {
  for (const key of keys) for (const db of dbs) db.removeSync(key);
  return keys.length;
}

/** Runs `fn` in one transaction and resolves once it is flushed to disk. */
export async function durably<T>(env: RootDatabase, fn: () => T): Promise<T> {
  const result = await env.transaction(fn);
  await env.flushed;
  return result;
}

/** The shared handler's seam over `tx`'s databases in `env`. */
export function txStoreOver(env: RootDatabase, tx: Tx): TxStore {
  return {
    read: (fn) => fn(tx),
    write: (fn) => durably(env, () => fn(tx)),
    close: () => env.close(),
  };
}
