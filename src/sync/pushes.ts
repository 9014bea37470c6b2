/**
 * Push records: before a hosted create or update is sent, the sync commits what the hosted memory
 * holds once it lands (its id, or null for a create; its path; the hash of the bytes sent). A
 * later round or sync that finds the hosted memory holding exactly that recognises its own push,
 * whatever became of the answer (lost, or the sync failed or was killed after sending), by what
 * was pushed, never by when: a clock set back or ahead changes nothing. Tags are
 * `{store}\0{dir}\0>{run}:{n}`: `>` starts no hosted id, and is neither `!` (conflict records)
 * nor `#` (the done mark).
 */

import type { Base } from './base.js';
import { isString, isStringOrNull, parseRecord, writeRecord } from './record-format.js';
import type { RemoteMemory } from './remote.js';

export const PUSH_MARK = '>';

export function pushTag(prefix: string, run: string, n: number): string {
  return `${prefix}${PUSH_MARK}${run}:${n}`;
}

/** What the hosted memory holds once a push landed. */
export interface Pushed {
  /** The hosted memory updated; null for a create. */
  id: string | null;
  /** Its hosted path after the push. */
  rp: string;
  /** The hash of the content it then holds. */
  sha: string;
}

export interface PushRecord extends Pushed {
  tag: string;
  raw: string;
}

export function encodePush(p: Pushed): string {
  return writeRecord('push', { id: p.id, rp: p.rp, sha: p.sha });
}

/** The push a record names; null when unreadable (swept). Unknown versions throw. */
export function decodePush(tag: string, raw: string): PushRecord | null {
  const p = parseRecord(tag, raw, 'push', []);
  if (p === null || p.version !== 2) return null;
  const { id, rp, sha } = p.body;
  if (!isStringOrNull(id) || !isString(rp) || !isString(sha)) return null;
  return { tag, raw, id, rp, sha };
}

/** Whether `r` holds what `p` pushed (so a hosted change to `r` may be that push). */
export function holds(r: RemoteMemory, p: Pushed): boolean {
  return r.sha === p.sha && r.path === p.rp && (p.id === null || p.id === r.id);
}

/**
 * Whether a record has no more to tell: the hosted memory does not hold what it pushed (never
 * landed, or changed since), or its base already records that content (the answer was
 * recorded, or a sync adopted it).
 */
export function settled(p: Pushed, remote: RemoteMemory[], baseOf: (id: string) => Base | null): boolean {
  const r = remote.find((x) => holds(x, p));
  if (r === undefined) return true;
  return baseOf(r.id)?.sha === p.sha;
}
