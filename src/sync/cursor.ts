/**
 * The sync cursor: where the last clean sync of a mapping left off on both sides, so that the
 * next one reads only what changed since (docs/guide/sync.md, "Requests"). One record per
 * mapping, tagged `{store}\0{dir}\0@` (`@` starts no hosted id and is neither `!`, `>` nor `#`),
 * written in the store's reserved key space like the bases, conditional on what the sync read
 * as it began:
 *
 * - `feed`: the local change feed's cursor taken before the sync read the local side;
 * - `since`: a time on the hosted clock (ms) at or before every version the sync did not see:
 *   the `date` of the answer its hosted read began with, minus MARGIN_MS (for versions stamped
 *   before they became visible, and for clocks that disagree); never earlier than the last one;
 * - `seen`: the ids of the versions it saw written at or after `since` (read again next time
 *   because of the margin, and not planned again);
 * - `n`, `full`: incremental syncs since the last full one, and when that was (local clock);
 * - `ix`: every base had its lookup rows (base-index.ts) when the sync ended; absent (an older
 *   build wrote the record, one that keeps no rows) reads as false.
 *
 * The record exists only after a sync that ended clean (nothing skipped or left unsure): only
 * then does every memory no change since the cursors names agree with its base on both sides.
 */

import { isString, parseRecord, writeRecord } from './record-format.js';

export const CURSOR_MARK = '@';

/**
 * How far before the hosted clock's "now" the next version listing starts. A version is stamped
 * when written and may become visible a little later (a commit in flight); hosted servers' clocks
 * differ by far less. Five minutes is far beyond both, and costs only the versions written in
 * that window being listed again (deduplicated by id).
 */
export const MARGIN_MS = 5 * 60_000;

/** Most version ids a cursor record keeps (see `seen`). */
export const MAX_SEEN = 10_000;

/** A full round after this many incremental syncs in a row (option `incremental.maxSyncs`). */
export const DEFAULT_MAX_SYNCS = 1000;
/** A full round when the last one is older than this (option `incremental.maxAgeMs`). */
export const DEFAULT_MAX_AGE_MS = 24 * 3600_000;

export interface Cursor {
  feed: string;
  since: number;
  seen: string[];
  n: number;
  full: number;
  ix: boolean;
}

export function encodeCursor(c: Cursor): string {
  return writeRecord('cursor', { feed: c.feed, since: c.since, seen: c.seen, n: c.n, full: c.full, ix: c.ix });
}

/** The cursor a record holds; null when unreadable (the next sync is a full one). */
export function decodeCursor(raw: string, tag: string): Cursor | null {
  const p = parseRecord(tag, raw, 'cursor', []);
  if (p === null || p.version !== 2) return null;
  const { feed, since, seen, n, full, ix } = p.body;
  const num = (x: unknown): x is number => typeof x === 'number' && Number.isSafeInteger(x) && x >= 0;
  if (!isString(feed) || !num(since) || !num(n) || !num(full) || !Array.isArray(seen) || !seen.every(isString)) return null;
  return { feed, since, seen, n, full, ix: ix === true };
}

/** Why an incremental sync cannot be trusted now, or null when it can. */
export function staleness(c: Cursor | null, limits: { maxSyncs: number; maxAgeMs: number }, now: number): string | null {
  if (c === null) return 'no cursor (first sync, or the last one did not end clean)';
  if (c.n >= limits.maxSyncs) return `${c.n} incremental syncs since the last full one`;
  // A clock set back is no proof of a recent full sync.
  if (now < c.full || now - c.full > limits.maxAgeMs) return 'the last full sync is too old';
  return null;
}
