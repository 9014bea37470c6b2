// The SDK's own reference handler, one file per memory under `{dir}/memories`. It throws for
// failure outcomes; the benchmark only measures and compares its success answers, so a thrown
// message is passed through with the SDK runner's `Error: ` prefix to stay visible in a mismatch.

import { BetaLocalFilesystemMemoryTool } from '@anthropic-ai/sdk/tools/memory/node';
import { spawnSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Backend, BenchHandler } from './types.js';

type Tool = BetaLocalFilesystemMemoryTool;

async function answer(run: () => Promise<string>): Promise<string> {
  try {
    return await run();
  } catch (err) {
    return `Error: ${err instanceof Error ? err.message : String(err)}`;
  }
}

function wrap(tool: Tool): BenchHandler {
  return {
    view: (i) => answer(() => tool.view(i)),
    create: (i) => answer(() => tool.create(i)),
    str_replace: (i) => answer(() => tool.str_replace(i)),
    insert: (i) => answer(() => tool.insert(i)),
    delete: (i) => answer(() => tool.delete(i)),
    rename: (i) => answer(() => tool.rename(i)),
    close: async () => {},
  };
}

/** One flush of the file system holding `dir` (syncfs via `sync -f`; whole-system sync elsewhere). */
export function syncFileSystem(dir: string): void {
  const scoped = spawnSync('sync', ['-f', dir], { stdio: 'ignore' });
  if (scoped.status === 0) return;
  const all = spawnSync('sync', [], { stdio: 'ignore' });
  if (all.status !== 0) throw new Error('could not flush the file system: `sync` failed or is missing');
}

export const sdkFsBackend: Backend = {
  family: 'sdk-fs',
  async open(dir) {
    return wrap(await BetaLocalFilesystemMemoryTool.init(dir));
  },
  async seed(dir, entries) {
    const root = join(dir, 'memories');
    await mkdir(root, { recursive: true, mode: 0o700 });
    const made = new Set<string>();
    for (const [path, content] of entries) {
      const file = join(root, path.slice('/memories/'.length));
      const parent = dirname(file);
      if (!made.has(parent)) {
        await mkdir(parent, { recursive: true, mode: 0o700 });
        made.add(parent);
      }
      await writeFile(file, content, { mode: 0o600 });
    }
    syncFileSystem(root);
  },
};
