/**
 * A scope's memories one page at a time, from their metadata alone (no content is read), for
 * hosts that list a scope too large to list at once (an MCP server's `resources/list`, a file
 * picker) or search it by path (the inspector's filter). Pages follow the order of the paths'
 * UTF-8 bytes; each resumes after the last path of the one before, so a memory written or
 * removed between two pages moves no other memory to another page.
 */

import { InvalidArgumentError, native } from './errors.js';
import type { NativeMemories } from './native.js';
import { optionRecord, refuseUnknownKeys, show } from './options.js';
import { MemoryPath } from './path.js';

/** A memory as a listing shows it. */
export interface ListedMemory {
  /** Its normalised path, e.g. `/memories/notes/a.md`. */
  path: string;
  /** Its content in UTF-8 bytes. */
  bytes: number;
  /** When it last changed. */
  updatedAt: Date;
}

/** Which page {@link RaboshMemoryToolHandler.listMemories} answers. */
export interface ListOptions {
  /** Start after this path (the previous page's `next`); absent: from the first memory. */
  after?: string;
  /** At most this many memories, 1 to 10,000. Default 1,000. */
  limit?: number;
  /**
   * Only memories whose path contains this text, both compared in lower case; absent or empty:
   * every memory. Paths are read in order either way, so a search that matches little reads
   * the scope's metadata (never content) up to its last match.
   */
  contains?: string;
}

const LIST_OPTION_KEYS = ['after', 'limit', 'contains'] as const satisfies readonly (keyof ListOptions)[];

/** One page of memories. */
export interface MemoryPage {
  /** Up to `limit` memories, in the UTF-8 byte order of their paths. */
  memories: ListedMemory[];
  /** Pass as `after` for the next page; null when this page holds the last memory. */
  next: string | null;
}

/** The largest page: its memories cross from the store in one array. */
export const MAX_PAGE = 10_000;
const DEFAULT_PAGE = 1_000;

export async function pageFrom(m: NativeMemories, options?: ListOptions): Promise<MemoryPage> {
  const o = optionRecord(options);
  refuseUnknownKeys(o, LIST_OPTION_KEYS);
  const { after, limit = DEFAULT_PAGE, contains = '' } = o as ListOptions;
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_PAGE) {
    throw new InvalidArgumentError(`limit must be an integer from 1 to ${MAX_PAGE}, got ${String(limit)}`);
  }
  if (after !== undefined && (typeof after !== 'string' || MemoryPath.normalise(after) !== after)) {
    throw new InvalidArgumentError(`after must be a normalised memory path (a page's next), got ${JSON.stringify(after)}`);
  }
  if (typeof contains !== 'string') throw new InvalidArgumentError(`contains must be a string, got ${show(contains)}`);
  const page = await native(() => m.listPage(after, limit, contains));
  const memories = page.memories.map((x) => ({ path: x.path, bytes: x.size, updatedAt: new Date(x.updatedAt) }));
  return { memories, next: page.more && memories.length > 0 ? memories[memories.length - 1]!.path : null };
}
