/**
 * A scope read a page at a time, for tools that show it or copy it out: one directory's children
 * with their sizes, and an export that streams. Like an export (and unlike a view), each sees
 * hidden memories too. Children read metadata only. (A search over paths is a listing with
 * `contains`: listing-page.ts.)
 */

import type { ExportedMemory } from './bulk.js';
import { InvalidArgumentError, UnsupportedError, native } from './errors.js';
import { MAX_PAGE } from './listing-page.js';
import type { NativeExportPage, NativeMemories } from './native.js';
import { MemoryPath } from './path.js';
import { type Rabosh, snapshotNative } from './store.js';

/** One name directly under a directory. */
export interface DirectoryEntry {
  /** Its name in the directory. */
  name: string;
  /** Its full path. */
  path: string;
  /** The size in UTF-8 bytes of the memory at exactly this path; null when none is there. */
  memoryBytes: number | null;
  /** Memories below this path, hidden ones included: more than zero for a directory. */
  memories: number;
  /** Their content in UTF-8 bytes. */
  bytes: number;
}

/** One page of a directory's names, in byte order (see {@link RaboshMemoryToolHandler.children}). */
export interface DirectoryPage {
  /** The directory, normalised. */
  path: string;
  /** Memories below it, hidden ones included. */
  memories: number;
  /** Their content in UTF-8 bytes. */
  bytes: number;
  /** How many names the directory holds, over all pages. */
  total: number;
  /** This page's names, in byte order. */
  entries: DirectoryEntry[];
  /** Pass as `after` for the next page; null on the last. */
  next: string | null;
}

/** Where a page starts and how long it is. */
export interface PageOptions {
  /** The `next` of the previous page. */
  after?: string;
  /** At most this many results, 1 to 10,000; default 500. */
  limit?: number;
}

const DEFAULT_LIMIT = 500;

function pageOptions(options: PageOptions | undefined): { after: string | undefined; limit: number } {
  const limit = options?.limit ?? DEFAULT_LIMIT;
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_PAGE) {
    throw new InvalidArgumentError(`limit must be an integer from 1 to ${MAX_PAGE}, got ${String(limit)}`);
  }
  const after = options?.after;
  if (after !== undefined && typeof after !== 'string') throw new InvalidArgumentError('after must be a string');
  return { after, limit };
}

function directory(dir: string): string {
  const path = typeof dir === 'string' ? MemoryPath.normalise(dir) : null;
  if (path === null) throw new InvalidArgumentError(`${JSON.stringify(dir)} is not a memory path`);
  return path;
}

export async function childrenOf(m: NativeMemories, dir: string, options?: PageOptions): Promise<DirectoryPage> {
  const path = directory(dir);
  const { after, limit } = pageOptions(options);
  const page = await native(() => m.children(path, after ?? null, limit));
  return {
    path,
    memories: page.memories,
    bytes: page.bytes,
    total: page.total,
    entries: page.entries.map((c) => ({
      name: c.name,
      path: `${path}/${c.name}`,
      memoryBytes: c.memory ?? null,
      memories: c.memories,
      bytes: c.bytes,
    })),
    next: page.next ?? null,
  };
}

/** Options of {@link RaboshMemoryToolHandler.exportStream}. */
export interface ExportStreamOptions {
  /** Memories read from the store at a time, 1 to 10,000; default 500. */
  pageSize?: number;
}

/**
 * The scope's memories a page at a time. A directory store pins one snapshot for the whole
 * stream (released when it ends or the loop breaks), so it sees one state like exportMemories;
 * a backend without snapshots (PostgreSQL) reads each page from the newest state.
 */
export async function* streamExport(db: Rabosh, m: NativeMemories, options?: ExportStreamOptions): AsyncGenerator<ExportedMemory> {
  const { limit } = pageOptions({ limit: options?.pageSize ?? DEFAULT_LIMIT });
  let snapshot: ReturnType<Rabosh['snapshot']> | null = null;
  try {
    snapshot = db.snapshot();
  } catch (e) {
    if (!(e instanceof UnsupportedError)) throw e;
  }
  try {
    const pinned = snapshot === null ? null : snapshotNative(db, snapshot);
    let after: string | null = null;
    do {
      const from: string | null = after;
      const page: NativeExportPage = await native(() =>
        pinned === null ? m.exportPage(from, limit) : m.exportPageAt(pinned, from, limit),
      );
      for (const f of page.memories) {
        yield { path: f.path, content: f.content, createdAt: new Date(f.createdAt), updatedAt: new Date(f.updatedAt) };
      }
      after = page.next ?? null;
    } while (after !== null);
  } finally {
    snapshot?.release();
  }
}
