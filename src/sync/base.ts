/**
 * The durable base: per hosted memory, what both sides held when they last agreed. One record per
 * hosted memory id under the store's reserved `s:{scope}:` key space (see
 * crates/rabosh-memory/src/sync_base.rs), written in the same commit as the local change it
 * describes. The tag is `{memoryStoreId}\0{local dir}\0{remote id}`; NUL can be in neither a
 * store id nor a normalised memory path, so one mapping's records never match another's prefix.
 * The record `{store}\0{dir}\0#` says a sync of this mapping completed once.
 */

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
  /** When this base was written (epoch ms): local versions after it may be this sync's own pushes. */
  at: number;
}

export const DONE_TAG = '#';

export function tagPrefix(storeId: string, dir: string): string {
  return `${storeId}\0${dir}\0`;
}

export function encodeBase(b: Base): string {
  return JSON.stringify([1, b.id, b.rp, b.lp, b.sha, b.lm, b.rv, b.at]);
}

/** A record this version wrote; anything else reads as no base (and is rewritten). */
export function decodeBase(raw: string): Base | null {
  try {
    const v: unknown = JSON.parse(raw);
    if (!Array.isArray(v) || v[0] !== 1 || v.length !== 8) return null;
    const [, id, rp, lp, sha, lm, rv, at] = v as [number, string, string, string, string, string | null, string, number];
    return { id, rp, lp, sha, lm, rv, at };
  } catch {
    return null;
  }
}
