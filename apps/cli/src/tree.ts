/**
 * A store scope ↔ a plain directory, the layout the SDK's filesystem memory tool uses:
 * `/memories/a/b.md` is the file `<root>/memories/a/b.md`, bytes = the content's UTF-8.
 */
import { randomBytes } from 'node:crypto';
import type { Stats } from 'node:fs';
import { lstat, mkdir, readdir, readFile, rename, rm, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { MemoryPath } from 'rabosh-memory';
import { CliError } from './exit.js';
import type { MemoryFile } from 'rabosh-memory';
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
      const ancestor = `/${segs.slice(0, i).join('/')}`;
      if (paths.has(ancestor)) conflicts.add(ancestor);
    }
  }
  return [...conflicts].sort();
}

/** What a failed file-system call means for the person at the shell, without the stack. */
export function fsReason(e: unknown): string {
  const err = e as NodeJS.ErrnoException;
  switch (err.code) {
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'ENOENT':
      return 'no such file or directory';
    case 'ENOSPC':
      return 'no space left on the device';
    case 'ENAMETOOLONG':
      return 'file name too long for this file system';
    default:
      return err.code ? `${err.code}: ${err.message}` : String(err.message ?? e);
  }
}

async function lstatOrNull(path: string) {
  try {
    return await lstat(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
}

/**
 * Writes the scope under `<to>/memories`, whole or not at all: every file goes into a fresh
 * sibling directory, which is renamed into place only once all are written, and removed on any
 * failure. `<to>` and `<to>/memories` must not be symbolic links: an export never writes where a
 * link points. (The directories above `<to>` are the caller's choice of path and are resolved as
 * usual: on macOS, /tmp and /var are themselves links.)
 */
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
  const final = join(to, 'memories');
  for (const p of [to, final]) {
    const st = await lstatOrNull(p);
    if (st?.isSymbolicLink()) throw new CliError(`cannot export: ${p} is a symbolic link (an export never writes through one)`, 1, 'CLI_TARGET_SYMLINK');
    if (st && !st.isDirectory()) throw new CliError(`cannot export: ${p} exists and is not a directory`, 1, 'CLI_TARGET_EXISTS');
  }
  if ((await lstatOrNull(final)) && (await readdir(final)).length > 0) {
    throw new CliError(`cannot export: ${final} already exists and is not empty`, 1, 'CLI_TARGET_EXISTS');
  }
  await mkdir(to, { recursive: true });
  const staging = join(to, `.memories.export-${process.pid}-${randomBytes(4).toString('hex')}`);
  await mkdir(staging);
  let bytes = 0;
  try {
    for (const f of files) {
      const segs = segments(f.path).slice(1);
      const target = join(staging, ...segs);
      const data = Buffer.from(f.content, 'utf8');
      try {
        await mkdir(join(staging, ...segs.slice(0, -1)), { recursive: true });
        // 'wx': never replace a file; two memory paths that one filesystem spells the same
        // (case-insensitive volumes) fail here instead of silently overwriting each other.
        await writeFile(target, data, { flag: 'wx' });
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        const why = code === 'EEXIST' ? 'another memory already wrote this file name (a case-insensitive filesystem?)' : fsReason(e);
        throw new CliError(`cannot export ${f.path}: ${why}; nothing was exported`, 1, code ?? 'CLI_FAILED');
      }
      bytes += data.length;
      progress.tick();
    }
    // An empty <to>/memories is replaced (rename cannot replace a directory on every OS).
    if (await lstatOrNull(final)) await rmdir(final);
    await rename(staging, final);
  } catch (e) {
    await rm(staging, { recursive: true, force: true });
    throw e;
  }
  return bytes;
}

interface SourceFile {
  abs: string;
  memoryPath: string;
}

/**
 * Every regular file under `<from>/memories`, as memory files; refuses anything it cannot import
 * exactly, saying why (not UTF-8, over `maxBytes`, unreadable). Files are listed first, checked
 * by size without reading them, then read with `progress` ticking once per file.
 */
export async function readTree(
  from: string,
  maxBytes: number,
  progress: (total: number) => Progress,
): Promise<{ root: string; files: MemoryFile[] }> {
  const root = join(from, 'memories');
  let st: Stats;
  try {
    st = await lstat(root);
  } catch {
    throw new CliError(`cannot import: ${root} does not exist (expected the layout <from>/memories/...)`, 1, 'CLI_NO_SOURCE');
  }
  if (!st.isDirectory()) throw new CliError(`cannot import: ${root} is not a directory`, 1, 'CLI_NO_SOURCE');
  const found: SourceFile[] = [];
  async function walk(dir: string, memoryDir: string): Promise<void> {
    let names: string[];
    try {
      names = (await readdir(dir)).sort();
    } catch (e) {
      throw new CliError(`cannot import ${dir}: ${fsReason(e)}`, 1, 'CLI_BAD_SOURCE');
    }
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
      if (s.size > maxBytes) {
        throw new CliError(`cannot import ${abs}: too large (${s.size} bytes; a memory holds at most ${maxBytes})`, 1, 'CLI_BAD_SOURCE');
      }
      found.push({ abs, memoryPath });
    }
  }
  await walk(root, '/memories');
  const bar = progress(found.length);
  const files: MemoryFile[] = [];
  try {
    for (const { abs, memoryPath } of found) {
      let data: Buffer;
      try {
        data = await readFile(abs);
      } catch (e) {
        throw new CliError(`cannot import ${abs}: ${fsReason(e)}`, 1, 'CLI_BAD_SOURCE');
      }
      // It may have grown since it was listed.
      if (data.length > maxBytes) {
        throw new CliError(`cannot import ${abs}: too large (${data.length} bytes; a memory holds at most ${maxBytes})`, 1, 'CLI_BAD_SOURCE');
      }
      let content: string;
      try {
        content = utf8.decode(data);
      } catch {
        throw new CliError(`cannot import ${abs}: not valid UTF-8 (memories are text)`, 1, 'CLI_BAD_SOURCE');
      }
      files.push({ path: memoryPath, content });
      bar.tick();
    }
  } finally {
    bar.stop();
  }
  return { root, files };
}
