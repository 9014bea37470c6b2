// Temporary store directories for tests: each test gets its own, removed afterwards, so tests never
// share state and leave nothing behind.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export function makeTempDir(label = 'rabosh-test'): string {
  return mkdtempSync(join(tmpdir(), `${label}-`));
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}
