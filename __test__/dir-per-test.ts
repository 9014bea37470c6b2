// A fresh directory for each test of a file, removed after it: the suites that run commands
// against a store path inside it share this set-up rather than each writing it out.
import { join } from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import { makeTempDir, removeDir } from './tmp-dir.js';

/** Registers the hooks; read `dir` and `store` (a path inside `dir`, not created) inside a test. */
export function dirPerTest(label: string): { readonly dir: string; readonly store: string } {
  let dir = '';
  beforeEach(() => {
    dir = makeTempDir(label);
  });
  afterEach(() => removeDir(dir));
  return {
    get dir() {
      return dir;
    },
    get store() {
      return join(dir, 'store');
    },
  };
}
