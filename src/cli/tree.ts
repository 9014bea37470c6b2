/**
 * A store scope ↔ a plain directory, the layout the SDK's filesystem memory tool uses:
 * `/memories/a/b.md` is the file `<root>/memories/a/b.md`, bytes = the content's UTF-8.
 */
import { lstat, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { MemoryPath } from '../../index.js';
import { CliError } from './exit.js';
import type { MemoryFile } from '../../index.js';
import type { Progress } from './progress.js';

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function segments(memoryPath: string): string[] {
  return memoryPath.split('/').filter((s) => s !== '');
}

/** A memory at P and memories under P/ can coexist in the store but not as files and folders. */
export function fileDirConflicts(files: readonly MemoryFile[]): string[] {
  const paths = new Set(files.map((f) => f.path));
  const conflicts = new Set<string>();
  for (const f of files) {
    const segs = segments(f.path);
    for (let i = 2; i < segs.length; i++) {
      const ancestor = '/' + segs.slice(0, i).join('/');
      if (paths.has(ancestor)) conflicts.add(ancestor);
    }
  }
  return [...conflicts].sort();
}

async function isNonEmptyDir(path: string): Promise<boolean> {
  try {
    return (await readdir(path)).length > 0;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw e;
  }
}

export async function writeTree(to: string, files: readonly MemoryFile[], progress: Progress): Promise<number> {
  const conflicts = fileDirConflicts(files);
  if (conflicts.length > 0) {
    throw new CliError(
      `cannot export: ${conflicts.join(', ')} ${conflicts.length === 1 ? 'is' : 'are'} both a memory and a directory, which a plain directory cannot hold; rename one of them first`,
      1,
      'CLI_EXPORT_CONFLICT',
      { conflicts },
    );
  }
  if (await isNonEmptyDir(join(to, 'memories'))) {
    throw new CliError(`cannot export: ${join(to, 'memories')} already exists and is not empty`, 1, 'CLI_TARGET_EXISTS');
  }
  let bytes = 0;
  for (const f of files) {
    const segs = segments(f.path);
    const target = join(to, ...segs);
    const data = Buffer.from(f.content, 'utf8');
    try {
      await mkdir(join(to, ...segs.slice(0, -1)), { recursive: true });
      // 'wx': never replace a file; two memory paths that one filesystem spells the same
      // (case-insensitive volumes) fail here instead of silently overwriting each other.
      await writeFile(target, data, { flag: 'wx' });
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      const why = code === 'EEXIST' ? 'another memory already wrote this file name (a case-insensitive filesystem?)' : (e as Error).message;
      throw new CliError(`cannot export ${f.path} to ${target}: ${why}`, 1, code ?? 'CLI_FAILED');
    }
    bytes += data.length;
    progress.tick();
  }
  return bytes;
}

/** Every regular file under `<from>/memories`, as memory files; refuses anything it cannot import exactly. */
export async function readTree(from: string): Promise<{ root: string; files: MemoryFile[] }> {
  const root = join(from, 'memories');
  let st;
  try {
    st = await lstat(root);
  } catch {
    throw new CliError(`cannot import: ${root} does not exist (expected the layout <from>/memories/...)`, 1, 'CLI_NO_SOURCE');
  }
  if (!st.isDirectory()) throw new CliError(`cannot import: ${root} is not a directory`, 1, 'CLI_NO_SOURCE');
  const files: MemoryFile[] = [];
  async function walk(dir: string, memoryDir: string): Promise<void> {
    const names = (await readdir(dir)).sort();
    for (const name of names) {
      const abs = join(dir, name);
      const memoryPath = `${memoryDir}/${name}`;
      const s = await lstat(abs);
      if (s.isSymbolicLink()) {
        throw new CliError(`cannot import ${abs}: symbolic links are not followed (they could point outside ${root})`, 1, 'CLI_BAD_SOURCE');
      }
      if (s.isDirectory()) {
        await walk(abs, memoryPath);
        continue;
      }
      if (!s.isFile()) throw new CliError(`cannot import ${abs}: not a regular file`, 1, 'CLI_BAD_SOURCE');
      if (MemoryPath.normalise(memoryPath) !== memoryPath) {
        throw new CliError(`cannot import ${abs}: ${JSON.stringify(memoryPath)} is not a valid memory path`, 1, 'CLI_BAD_SOURCE');
      }
      let content: string;
      try {
        content = utf8.decode(await readFile(abs));
      } catch {
        throw new CliError(`cannot import ${abs}: not valid UTF-8 (memories are text)`, 1, 'CLI_BAD_SOURCE');
      }
      files.push({ path: memoryPath, content });
    }
  }
  await walk(root, '/memories');
  return { root, files };
}
