/**
 * A store scope ↔ a plain directory, the layout the SDK's filesystem memory tool uses:
 * `/memories/a/b.md` is the file `<root>/memories/a/b.md`, bytes = the content's UTF-8.
 */
import { randomBytes } from 'node:crypto';
import { constants, type Stats } from 'node:fs';
import { lstat, mkdir, open, readdir, rename, rm, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { MemoryPath } from 'rabosh-memory';
import { CliError } from './exit.js';
import type { MemoryFile } from 'rabosh-memory';
import type { Progress } from './progress.js';

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function segments(memoryPath: string): string[] {
  return memoryPath.split('/').filter((s) => s !== '');
}

/** The memory paths above `memoryPath` (`/memories/a/b/c` → `/memories/a`, `/memories/a/b`). */
function ancestors(memoryPath: string): string[] {
  const segs = segments(memoryPath);
  const out: string[] = [];
  for (let i = 2; i < segs.length; i++) out.push(`/${segs.slice(0, i).join('/')}`);
  return out;
}

/** A memory at P and memories under P/ can coexist in the store but not as files and folders. */
function conflictError(conflicts: string[]): CliError {
  return new CliError(
    `cannot export: ${conflicts.join(', ')} ${conflicts.length === 1 ? 'is' : 'are'} both a memory and a directory, which a plain directory cannot hold; rename one of them first`,
    1,
    'CLI_EXPORT_CONFLICT',
    { conflicts },
  );
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
    case 'EROFS':
      return 'read-only file system';
    case 'ENOTDIR':
      return 'a part of the path is not a directory';
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
export async function writeTree(
  to: string,
  files: AsyncIterable<MemoryFile> | Iterable<MemoryFile>,
  progress: Progress,
): Promise<{ memories: number; bytes: number }> {
  const final = join(to, 'memories');
  for (const p of [to, final]) {
    const st = await lstatOrNull(p);
    if (st?.isSymbolicLink())
      throw new CliError(`cannot export: ${p} is a symbolic link (an export never writes through one)`, 1, 'CLI_TARGET_SYMLINK');
    if (st && !st.isDirectory()) throw new CliError(`cannot export: ${p} exists and is not a directory`, 1, 'CLI_TARGET_EXISTS');
  }
  if ((await lstatOrNull(final)) && (await readdir(final)).length > 0) {
    throw new CliError(`cannot export: ${final} already exists and is not empty`, 1, 'CLI_TARGET_EXISTS');
  }
  const staging = join(to, `.memories.export-${process.pid}-${randomBytes(4).toString('hex')}`);
  try {
    await mkdir(to, { recursive: true });
    await mkdir(staging);
  } catch (e) {
    // A read-only or unwritable target, a path through a file: said with the target named.
    throw new CliError(
      `cannot export to ${to}: ${fsReason(e)}; nothing was exported`,
      1,
      (e as NodeJS.ErrnoException).code ?? 'CLI_FAILED',
    );
  }
  let bytes = 0;
  let memories = 0;
  // Files arrive one at a time (an export streams them), in path order, so a memory at P comes
  // before the memories under P/: its path is known when theirs need P to be a directory.
  const written = new Set<string>();
  const conflicts = new Set<string>();
  try {
    for await (const f of files) {
      const segs = segments(f.path).slice(1);
      written.add(f.path);
      const clash = ancestors(f.path).find((a) => written.has(a));
      if (clash !== undefined || conflicts.size > 0) {
        // Nothing will be exported: the rest is only read to name every conflict.
        if (clash !== undefined) conflicts.add(clash);
        continue;
      }
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
      memories++;
      progress.tick();
    }
    if (conflicts.size > 0) throw conflictError([...conflicts].sort());
    try {
      // An empty <to>/memories is replaced (rename cannot replace a directory on every OS).
      if (await lstatOrNull(final)) await rmdir(final);
      await rename(staging, final);
    } catch (e) {
      throw new CliError(
        `cannot export to ${final}: ${fsReason(e)}; nothing was exported`,
        1,
        (e as NodeJS.ErrnoException).code ?? 'CLI_FAILED',
      );
    }
  } catch (e) {
    await rm(staging, { recursive: true, force: true });
    throw e;
  }
  return { memories, bytes };
}

interface SourceFile {
  abs: string;
  memoryPath: string;
  /** What the walk saw at `abs`: the file read must be this very file. */
  listed: Stats;
}

/**
 * Never follow a link and never wait on a FIFO or device at open (the flags are 0 where the OS
 * has none: on Windows a name is not swapped for a FIFO, and the identity check below still holds).
 */
const OPEN_SOURCE = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);
const CHUNK = 64 * 1024;

/**
 * Reads the file the walk listed at `abs`, judging what was opened rather than the name checked
 * earlier: between the walk and the read the name may have been replaced by a link to a file
 * outside the tree, a FIFO or another file. Opened without following a link or blocking, then
 * refused unless the descriptor is a regular file and the very file (device and inode) listed.
 * Reads at most `maxBytes + 1` bytes, so a file that grew is told too large without reading it.
 */
async function readListed({ abs, listed }: SourceFile, maxBytes: number): Promise<Buffer> {
  const bad = (why: string) => new CliError(`cannot import ${abs}: ${why}`, 1, 'CLI_BAD_SOURCE');
  let fh: Awaited<ReturnType<typeof open>>;
  try {
    fh = await open(abs, OPEN_SOURCE);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ELOOP')
      throw bad(`it was replaced by a symbolic link after it was listed (links are not followed)`);
    throw bad(fsReason(e));
  }
  try {
    const st = await fh.stat();
    if (!st.isFile()) throw bad('it was replaced by something that is not a regular file after it was listed');
    if (st.dev !== listed.dev || st.ino !== listed.ino) throw bad('it was replaced by another file after it was listed');
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const chunk = Buffer.alloc(CHUNK);
      const { bytesRead } = await fh.read(chunk, 0, CHUNK, null);
      if (bytesRead === 0) break;
      chunks.push(chunk.subarray(0, bytesRead));
      total += bytesRead;
      // It may have grown since it was listed.
      if (total > maxBytes) throw bad(`too large (over ${maxBytes} bytes; a memory holds at most ${maxBytes})`);
    }
    return Buffer.concat(chunks, total);
  } catch (e) {
    throw e instanceof CliError ? e : bad(fsReason(e));
  } finally {
    await fh.close();
  }
}

const nameUtf8 = new TextDecoder('utf-8', { fatal: true });

/** A directory's entry names, refusing one that is not UTF-8: it can name no memory. */
async function entryNames(dir: string): Promise<string[]> {
  let raw: Buffer[];
  try {
    raw = await readdir(dir, { encoding: 'buffer' });
  } catch (e) {
    throw new CliError(`cannot import ${dir}: ${fsReason(e)}`, 1, 'CLI_BAD_SOURCE');
  }
  const names = raw.map((name) => {
    try {
      return nameUtf8.decode(name);
    } catch {
      const shown = join(dir, name.toString('utf8'));
      throw new CliError(
        `cannot import ${shown}: its file name is not valid UTF-8 (memory paths are text); rename it`,
        1,
        'CLI_BAD_SOURCE',
      );
    }
  });
  return names.sort();
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
    for (const name of await entryNames(dir)) {
      const abs = join(dir, name);
      const memoryPath = `${memoryDir}/${name}`;
      let s: Stats;
      try {
        s = await lstat(abs);
      } catch (e) {
        throw new CliError(`cannot import ${abs}: ${fsReason(e)}`, 1, 'CLI_BAD_SOURCE');
      }
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
      found.push({ abs, memoryPath, listed: s });
    }
  }
  await walk(root, '/memories');
  const bar = progress(found.length);
  const files: MemoryFile[] = [];
  try {
    for (const source of found) {
      const { abs, memoryPath } = source;
      const data = await readListed(source, maxBytes);
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
