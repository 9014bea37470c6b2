/**
 * Conflict records: every conflict a sync resolves is written to the store in the same commit as
 * its resolution, and deleted in that sync's last commit, so that a sync killed (or failed) in
 * between leaves it for the next sync to report (docs/guide/sync.md, "A report that outlives a kill").
 * They sit in the base's key space under `{store}\0{dir}\0!{run}:{n}`: `!` starts no hosted id
 * (`mem_…`) and is not the done mark `#`, so they are neither bases nor memories.
 *
 * A resolution that is a hosted write (the local side won) cannot share a commit with it, so its
 * record is written first as an intent (what the hosted side holds once the write lands, and the
 * base it was planned on) and turned into a resolved record in the commit that records the
 * write's answer. A later sync that finds an intent tells whether the write landed from the
 * hosted listing.
 */

import { isString, isStringOrNull, parseRecord, writeRecord } from './record-format.js';
import type { RemoteMemory } from './remote.js';
import type { SyncConflict } from './types.js';

export const CONFLICT_MARK = '!';

export function conflictTag(prefix: string, run: string, n: number): string {
  return `${prefix}${CONFLICT_MARK}${run}:${n}`;
}

/** A hosted write that resolves a conflict, before it is known to have landed. */
export interface Intent {
  /** The base record (hosted id) the write's answer replaces, and its bytes when planned (null: none). */
  baseId: string;
  baseRaw: string | null;
  /** The hosted memory updated; null for a create at the conflict's `remotePath`. */
  hostedId: string | null;
  /** The content hash the hosted memory holds once the write landed. */
  sha: string;
}

/**
 * A record in the store: its tag, its bytes, and what it says (conflict null: unreadable,
 * cleared unreported). `intent`: the push that resolves it (null for a pull); `resolved`: false
 * while that push is not known to have landed.
 */
export interface ConflictRecord {
  tag: string;
  raw: string;
  conflict: SyncConflict | null;
  intent: Intent | null;
  resolved: boolean;
}

/**
 * The record's bytes (record-format.ts): the conflict as reported, the intent of the push that
 * resolves it (null: resolved by a local commit) and whether that push is known to have landed.
 */
export function encodeConflict(c: SyncConflict, intent: Intent | null, resolved: boolean): string {
  const conflict = {
    kind: c.kind,
    path: c.path,
    remoteId: c.remoteId,
    remotePath: c.remotePath,
    localSha256: c.localSha256,
    remoteSha256: c.remoteSha256,
    winner: c.winner,
    kept: c.kept,
  };
  return writeRecord('conflict', { resolved: intent === null || resolved, conflict, intent });
}

/**
 * Reads a record (format 1: `[1, …8 conflict fields]` resolved locally, `[2 | 3, …8 conflict
 * fields, baseId, baseRaw, hostedId, sha]` a push announced | resolved). Unreadable: conflict
 * null (cleared unreported); a version this build does not know throws `UnsupportedFormatError`.
 */
export function decodeConflict(tag: string, raw: string): ConflictRecord {
  const none = { tag, raw, conflict: null, intent: null, resolved: false };
  const p = parseRecord(tag, raw, 'conflict', [1, 2, 3]);
  if (p === null) return none;
  if (p.version === 1) {
    const v = p.fields;
    if (!((v[0] === 1 && v.length === 9) || ((v[0] === 2 || v[0] === 3) && v.length === 13))) return none;
    const [, kind, path, remoteId, remotePath, localSha256, remoteSha256, winner, kept, baseId, baseRaw, hostedId, sha] = v;
    const conflict = { kind, path, remotePath, remoteId, localSha256, remoteSha256, winner, kept } as SyncConflict;
    const intent = v[0] === 1 ? null : ({ baseId, baseRaw, hostedId, sha } as Intent);
    return { tag, raw, conflict, intent, resolved: v[0] !== 2 };
  }
  const { conflict, intent, resolved } = p.body as { conflict?: SyncConflict; intent?: Intent | null; resolved?: unknown };
  if (typeof conflict !== 'object' || conflict === null || typeof resolved !== 'boolean' || intent === undefined) return none;
  if (
    intent !== null &&
    (typeof intent !== 'object' ||
      !isString(intent.baseId) ||
      !isString(intent.sha) ||
      !isStringOrNull(intent.baseRaw) ||
      !isStringOrNull(intent.hostedId))
  )
    return none;
  const c = {
    kind: conflict.kind,
    path: conflict.path,
    remotePath: conflict.remotePath,
    remoteId: conflict.remoteId,
    localSha256: conflict.localSha256,
    remoteSha256: conflict.remoteSha256,
    winner: conflict.winner,
    kept: conflict.kept,
  };
  return {
    tag,
    raw,
    conflict: c,
    intent: intent === null ? null : { baseId: intent.baseId, baseRaw: intent.baseRaw, hostedId: intent.hostedId, sha: intent.sha },
    resolved: intent === null || resolved,
  };
}

/**
 * What a sync does with the records other runs left, read as it started (`baseRaw`: the base
 * records it read with them). A resolved record is claimed (reported once, then deleted). An
 * intent whose base is still the one it was planned on and whose hosted memory holds what the
 * write would leave has landed: claimed, and of several intents for one base (syncs killed one
 * after another, each re-planning the same conflict: only one write with that precondition can
 * land) one is reported, none when a resolved record of that push is among them. An intent whose
 * base has moved on is stale (that memory was synced since): dropped unreported. Any other
 * intent is left alone: its sync may still be running.
 */
export function judge(
  records: ConflictRecord[],
  baseRaw: (id: string) => string | null,
  remote: RemoteMemory[],
): { claim: ConflictRecord[]; drop: ConflictRecord[] } {
  const claim: ConflictRecord[] = [];
  const drop: ConflictRecord[] = [];
  const byId = new Map(remote.map((r) => [r.id, r]));
  const byPath = new Map(remote.map((r) => [r.path, r]));
  const once = (i: Intent) => `${i.baseId}\0${i.baseRaw ?? ''}`;
  const landedOn = new Set(records.flatMap((r) => (r.resolved && r.intent !== null && r.conflict !== null ? [once(r.intent)] : [])));
  for (const rec of records) {
    const { conflict: c, intent: i } = rec;
    if (c === null) {
      drop.push(rec);
      continue;
    }
    if (rec.resolved || i === null) {
      claim.push(rec);
      continue;
    }
    if (baseRaw(i.baseId) !== i.baseRaw) {
      drop.push(rec);
      continue;
    }
    const there = i.hostedId === null ? byPath.get(c.remotePath) : byId.get(i.hostedId);
    if (there === undefined || there.sha !== i.sha || there.path !== c.remotePath) continue;
    if (landedOn.has(once(i))) drop.push(rec);
    else {
      landedOn.add(once(i));
      claim.push({ ...rec, conflict: { ...c, remoteId: there.id } });
    }
  }
  return { claim, drop };
}
