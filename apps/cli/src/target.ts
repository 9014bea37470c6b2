/**
 * A command's `<dir>` may be a store directory or a PostgreSQL URL. A URL can carry a host name
 * and a password, so messages never quote it: they name the store by its schema.
 */
import { readdirSync, statSync } from 'node:fs';
import { NotAStoreError } from 'rabosh-memory';
import { CliError, EXIT } from './exit.js';

export function isUrl(target: string): boolean {
  return target.startsWith('postgres://') || target.startsWith('postgresql://');
}

/** How a message names the store: a directory by its path, a URL by its schema only. */
export function storeName(target: string): string {
  if (!isUrl(target)) return target;
  const query = target.includes('?') ? target.slice(target.indexOf('?') + 1) : '';
  let schema: string | null = null;
  try {
    schema = new URLSearchParams(query).get('schema');
  } catch {
    // A malformed query names the default schema; opening it reports the fault itself.
  }
  return `the PostgreSQL store (schema ${schema ?? 'rabosh'})`;
}

/** The CLI's answer for an open without `create` that found no store at `target`. */
export function noStore(target: string): CliError {
  return new CliError(`no store at ${storeName(target)}`, EXIT.failed, 'CLI_NO_STORE');
}

export function isNotAStore(e: unknown): boolean {
  return e instanceof NotAStoreError;
}

/**
 * A store is a directory (or a URL): a file, or a path through one, is refused here with words,
 * before the engine answers with an OS error such as "Not a directory (os error 20)".
 */
export function refuseNonDirectory(target: string): void {
  if (isUrl(target)) return;
  let isDirectory: boolean;
  try {
    isDirectory = statSync(target).isDirectory();
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return;
    if (code !== 'ENOTDIR') throw e;
    isDirectory = false;
  }
  if (!isDirectory) {
    throw new CliError(`${target} is not a directory: a store is a directory (or a postgres:// URL)`, EXIT.failed, 'CLI_NOT_A_DIRECTORY');
  }
}

/** A missing or empty directory holds no store, whatever the engine would make of it. */
export function holdsNothing(dir: string): boolean {
  try {
    return statSync(dir).isDirectory() && readdirSync(dir).length === 0;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return true;
    throw e;
  }
}
