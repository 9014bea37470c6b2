/**
 * The change feed (docs/guide/changes.md): which paths of a scope changed since a cursor, in
 * commit order, from the store itself (rabosh-memory's `feed.rs`), so a watcher polls a cursor
 * instead of reading every memory. Decided in Rust; this file checks the arguments and shapes
 * the answer.
 */
import { native } from './errors.js';
import type { NativeMemories } from './native.js';

/**
 * What happened to a path, as of its latest change: a memory `created` where there was none,
 * `modified` in place, `deleted`, or moved by a rename: `renamedFrom` at the path it left and
 * `renamedTo` at the path it arrived at (both in the same commit).
 */
export type ChangeKind = 'created' | 'modified' | 'deleted' | 'renamedFrom' | 'renamedTo';

/** One changed path. */
export interface MemoryChange {
  /** The memory's path (`/memories/…`). */
  path: string;
  /** What its latest change did. */
  kind: ChangeKind;
}

/** Options of {@link RaboshMemoryToolHandler.changes}. */
export interface ChangesOptions {
  /** A `cursor` from an earlier answer; omitted: from the start of the feed. */
  since?: string;
  /**
   * The most changes in one answer, 0–10,000. Default 1,000. 0 answers no changes and the
   * cursor of the store as it is now: where a reader that starts now (rather than from the
   * feed's start) reads on from.
   */
  limit?: number;
}

/** One answer of {@link RaboshMemoryToolHandler.changes}. */
export interface ChangesPage {
  /**
   * Oldest first. Each path appears once, with its latest change: a path written twice since the
   * cursor is one entry. Fewer than `limit`: the reader has caught up.
   */
  changes: MemoryChange[];
  /** Where to read on from (opaque; keep it across restarts to resume). */
  cursor: string;
  /**
   * The cursor was older than what the feed can answer for (the store was written before it
   * kept a feed, or a redaction erased a path from it): `changes` is empty; re-read what you
   * need (a listing, an export), then read on from `cursor`.
   */
  reset: boolean;
}

/** The most changes one answer holds. */
export const MAX_CHANGES_PAGE = 10_000;

export async function changes(m: NativeMemories, options: ChangesOptions = {}): Promise<ChangesPage> {
  const { since, limit } = options;
  if (since !== undefined && typeof since !== 'string') {
    throw new TypeError(`changes: since must be a cursor string, got ${typeof since}`);
  }
  if (limit !== undefined && (!Number.isInteger(limit) || limit < 0 || limit > MAX_CHANGES_PAGE)) {
    throw new TypeError(`changes: limit must be an integer from 0 to ${MAX_CHANGES_PAGE}, got ${String(limit)}`);
  }
  const page = await native(() => m.changes(since, limit));
  return {
    changes: page.changes.map((c) => ({ path: c.path, kind: c.kind as ChangeKind })),
    cursor: page.cursor,
    reset: page.reset,
  };
}
