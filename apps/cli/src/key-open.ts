// Opening a store with `--key-file`: apart from keyfile.ts (which reads the file) so that the key
// read here goes through that module's export, the one a test can watch.
import type { RaboshOptions } from 'rabosh-memory';
import { readKeyFile } from './keyfile.js';

/**
 * Runs `open` with the `encryption` store option of `--key-file` (none when the flag is absent)
 * and zeroes the key once `open` settles, opened or refused: the store validated its own copy,
 * and the one read from the file must not stay in the process's memory for the command's life.
 */
export async function withKeyFile<T>(
  keyFile: string | undefined,
  open: (encryption: Pick<RaboshOptions, 'encryption'>) => Promise<T>,
): Promise<T> {
  const key = keyFile === undefined ? undefined : readKeyFile(keyFile);
  try {
    return await open(key === undefined ? {} : { encryption: { key } });
  } finally {
    key?.fill(0);
  }
}
