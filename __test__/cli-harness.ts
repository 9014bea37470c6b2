// What the CLI suites share: the built bin run as a real process, and ways to fill a store or a
// plain directory before running it.
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { RaboshMemoryToolHandler } from '../index.js';

const bin = resolve(import.meta.dirname, '..', 'apps', 'cli', 'dist', 'main.js');

export interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

export function cli(...args: string[]): Run {
  const r = spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8' });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

export function json(r: Run): any {
  return JSON.parse(r.stdout);
}

/** Creates each memory through the model's own command, in the given scope. */
export async function seed(store: string, files: Record<string, string>, scope?: string): Promise<void> {
  const h = await RaboshMemoryToolHandler.open(store, scope === undefined ? {} : { scope });
  try {
    for (const [path, file_text] of Object.entries(files)) {
      const r = await h.execute({ command: 'create', path, file_text });
      if (r.isError) throw new Error(r.text);
    }
  } finally {
    await h.close();
  }
}

export function writeTree(dir: string, files: Record<string, string | Buffer>): void {
  for (const [rel, data] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, rel)), { recursive: true });
    writeFileSync(join(dir, rel), data);
  }
}
