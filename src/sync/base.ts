/**
 * The durable base: per hosted memory, what both sides held when they last agreed. One record per
 * hosted memory id under the store's reserved `s:{scope}:` key space (see
 * crates/rabosh-memory/src/sync_base.rs), written in the same commit as the local change it
 * describes. The tag is `{memoryStoreId}\0{local dir}\0{remote id}`; NUL can be in neither a
 * store id nor a normalised memory path, so one mapping's records never match another's prefix.
 * The record `{store}\0{dir}\0#` says a sync of this mapping completed once. The bytes are in
 * record-format.ts's versioned format.
 */

import { isString, isStringOrNull, parseRecord, writeRecord } from './record-format.js';

export interface Base {
  /** Hosted memory id (`mem_…`). */
  id: string;
  /** Hosted path when last synced. */
  rp: string;
  /** Local path when last synced. */
  lp: string;
  /** Content hash both sides held. */
  sha: string;
  /** The local memory's id (history's `memoryId`), null until known. */
  lm: string | null;
  /** The hosted version holding that content. */
  rv: string;
}

export const DONE_TAG = '#';

export function tagPrefix(storeId: string, dir: string): string {
  return `${storeId}\0${dir}\0`;
}

export function encodeBase(b: Base): string {
  return writeRecord('base', { id: b.id, rp: b.rp, lp: b.lp, sha: b.sha, lm: b.lm, rv: b.rv });
}

export function encodeDone(): string {
  return writeRecord('done', {});
}

/**
 * The base a record holds; null when it holds none this format can read (rewritten from both
 * sides). Format 1 is `[1, id, rp, lp, sha, lm, rv, writtenAtMs]` (the time is not read). A
 * version this build does not know throws `UnsupportedFormatError`.
 */
export function decodeBase(raw: string, tag = ''): Base | null {
  const p = parseRecord(tag, raw, 'base', [1]);
  if (p === null) return null;
  let id: unknown, rp: unknown, lp: unknown, sha: unknown, lm: unknown, rv: unknown;
  if (p.version === 1) {
    if (p.fields.length !== 8) return null;
    [, id, rp, lp, sha, lm, rv] = p.fields;
  } else ({ id, rp, lp, sha, lm, rv } = p.body);
  if (!isString(id) || !isString(rp) || !isString(lp) || !isString(sha) || !isStringOrNull(lm) || !isString(rv)) return null;
  return { id, rp, lp, sha, lm, rv };
}
