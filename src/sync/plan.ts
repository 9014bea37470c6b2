/**
 * The three-way plan: local memories, hosted memories and the durable base in; one action per
 * memory out. Pure (no IO), so it is tested against a longhand model on its own. Memories are
 * paired by hosted id (the base's), local memoryId (stable across local renames) and then path;
 * content is compared by `content_sha256`, paths as mapped. An action writes one side only: a
 * change needing both (a remote rename with a local edit) writes the side that wins first and
 * leaves the base so that the next round carries the rest.
 */

import type { Base } from './base.js';
import { HOSTED_MAX_CONTENT_BYTES, hostedPathProblem, type PathMap } from './mapping.js';
import { holds, type Pushed } from './pushes.js';
import type { RemoteMemory } from './remote.js';
import type { ConflictKind, SkipReason, SyncChange, SyncSide } from './types.js';

/** A local memory as the plan sees it. */
export interface LocalEntry {
  path: string;
  sha: string;
  size: number;
  memoryId: string | null;
  versionId: string | null;
}

/** The base that a local action leaves (content pulled or not, path pulled or not). */
export interface NextBase {
  lp: string;
  rp: string;
  sha: string;
  rv: string;
}

export type LocalOp =
  | { kind: 'move'; from: string; to: string; ifMatch: string }
  | { kind: 'put'; path: string; ifMatch: string | null }
  | { kind: 'remove'; path: string; ifMatch: string };

export type RemoteOp =
  | { kind: 'create'; remotePath: string; localPath: string }
  | { kind: 'update'; content: boolean; remotePath: string | null; ifSha: string; localPath: string }
  | { kind: 'delete'; ifSha: string };

/** A conflict before it is resolved (the engine asks the policy for `winner`). */
export interface PendingConflict {
  kind: ConflictKind;
  localSha: string | null;
  remoteSha: string | null;
  baseSha: string | null;
}

interface Common {
  base: Base | null;
  local: LocalEntry | null;
  remote: RemoteMemory | null;
  /** The local path the report names. */
  path: string;
  remotePath: string;
  change: SyncChange['operation'];
  conflict: (PendingConflict & { winner: SyncSide }) | null;
  /** Another round must follow to carry the rest. */
  partial: boolean;
}

export type Action =
  /** Local ops (a put takes the hosted content), then the base is `next` (null: dropped). */
  | (Common & { side: 'local'; ops: LocalOp[]; next: NextBase | null })
  /** One hosted request; the base is then what it answered (delete: dropped). */
  | (Common & { side: 'remote'; op: RemoteOp })
  /** Nothing to write on either side; only the base record changes. */
  | (Common & { side: 'base'; next: NextBase | null });

export interface Skip {
  path: string;
  remotePath: string | null;
  side: SyncSide;
  reason: SkipReason;
  detail: string;
}

export interface PlanInput {
  map: PathMap;
  local: LocalEntry[];
  remote: RemoteMemory[];
  bases: Base[];
  /** What this mapping's syncs pushed and have not yet recorded as a base (pushes.ts). */
  pushed: Pushed[];
  /** Resolves a conflict: which side's content becomes current. */
  choose: (c: PendingConflict, path: string) => SyncSide;
  deletes: { enabled: boolean; max: number; allowEmptySide: boolean };
  /** The local `maxMemoryBytes`. */
  localMax: number;
  /**
   * Whether each side holds no memory at all, when `local` and `remote` are only the memories
   * that changed (an incremental sync); by default read from them.
   */
  empty?: { local: boolean; remote: boolean };
}

export interface Plan {
  actions: Action[];
  skipped: Skip[];
}

export function plan(input: PlanInput): Plan {
  const { map, deletes } = input;
  const actions: Action[] = [];
  const skipped: Skip[] = [];
  const localByPath = new Map(input.local.map((l) => [l.path, l]));
  const localById = new Map(input.local.filter((l) => l.memoryId !== null).map((l) => [l.memoryId as string, l]));
  const remoteById = new Map(input.remote.map((r) => [r.id, r]));
  const claimedLocal = new Set<string>();
  const claimedRemote = new Set<string>();
  const localEmpty = (input.empty?.local ?? input.local.length === 0) && input.bases.length >= 2;
  const remoteEmpty = (input.empty?.remote ?? input.remote.length === 0) && input.bases.length >= 2;
  const deleteBudget = { local: deletes.max, remote: deletes.max };

  const skip = (path: string, remotePath: string | null, side: SyncSide, reason: SkipReason, detail: string) =>
    skipped.push({ path, remotePath, side, reason, detail });

  /** Whether a deletion on `where` may go ahead; reports it when not. */
  const mayDelete = (where: SyncSide, path: string, remotePath: string): boolean => {
    const deletedOn = where === 'local' ? 'remote' : 'local';
    if (!deletes.enabled) {
      skip(path, remotePath, where, 'deletes-off', `deleted on the ${deletedOn} side; deletes: false keeps it here`);
      return false;
    }
    if (!deletes.allowEmptySide && (deletedOn === 'remote' ? remoteEmpty : localEmpty)) {
      skip(path, remotePath, where, 'empty-side', `the ${deletedOn} side holds no memory at all; not read as a mass delete`);
      return false;
    }
    if (deleteBudget[where] <= 0) {
      skip(path, remotePath, where, 'delete-cap', `more than ${deletes.max} deletions in one sync; held for the next`);
      return false;
    }
    deleteBudget[where]--;
    return true;
  };

  /** Why a local memory cannot be pushed, or null. */
  const unpushable = (l: LocalEntry): string | null => {
    if (l.size > HOSTED_MAX_CONTENT_BYTES) return `too-large:${l.size} bytes (the hosted limit is ${HOSTED_MAX_CONTENT_BYTES})`;
    const problem = hostedPathProblem(map.toRemote(l.path));
    return problem === null ? null : `path-rules:the hosted path ${problem}`;
  };
  const skipUnpushable = (l: LocalEntry, why: string) => {
    const [reason, detail] = [why.slice(0, why.indexOf(':')) as SkipReason, why.slice(why.indexOf(':') + 1)];
    skip(l.path, map.toRemote(l.path), 'local', reason, detail);
  };
  const fromRemote = (r: RemoteMemory, lp: string): NextBase => ({ lp, rp: r.path, sha: r.sha, rv: r.versionId });
  const ownPush = (r: RemoteMemory) => input.pushed.some((p) => holds(r, p));

  // A memory deleted and created again at the same path (new id) on one side is still the memory
  // the base describes there: pair by path when the id finds nothing and no other base owns it.
  const basedRemote = new Set(input.bases.map((b) => b.id));
  const basedLocal = new Set(input.bases.flatMap((b) => (b.lm === null ? [] : [b.lm])));
  const remoteByPath = new Map(input.remote.filter((r) => !basedRemote.has(r.id)).map((r) => [r.path, r]));

  // Pair every base with its two sides.
  for (const b of input.bases) {
    let r = remoteById.get(b.id) ?? null;
    if (r === null) {
      const byPath = remoteByPath.get(b.rp) ?? null;
      if (byPath !== null && !claimedRemote.has(byPath.id)) r = byPath;
    }
    if (r !== null) claimedRemote.add(r.id);
    let l = b.lm !== null ? (localById.get(b.lm) ?? null) : null;
    if (l === null) {
      const byPath = localByPath.get(b.lp) ?? null;
      if (byPath !== null && (byPath.memoryId === null || byPath.memoryId === b.lm || !basedLocal.has(byPath.memoryId))) l = byPath;
    }
    if (l !== null && claimedLocal.has(l.path)) l = null;
    if (l !== null) claimedLocal.add(l.path);
    const common = { base: b, local: l, remote: r, conflict: null, partial: false };

    if (l === null && r === null) {
      actions.push({ ...common, side: 'base', next: null, path: b.lp, remotePath: b.rp, change: 'deleted' });
      continue;
    }
    if (l !== null && r === null) {
      const touched = l.sha !== b.sha || l.path !== b.lp;
      if (!touched) {
        if (mayDelete('local', l.path, b.rp)) {
          actions.push({
            ...common,
            side: 'local',
            ops: [{ kind: 'remove', path: l.path, ifMatch: l.sha }],
            next: null,
            path: l.path,
            remotePath: b.rp,
            change: 'deleted',
          });
        }
        continue;
      }
      const why = unpushable(l);
      if (why !== null) {
        skipUnpushable(l, why);
        continue;
      }
      const conflict = { kind: 'edit-delete' as const, localSha: l.sha, remoteSha: null, baseSha: b.sha, winner: 'local' as const };
      actions.push({
        ...common,
        conflict,
        side: 'remote',
        op: { kind: 'create', remotePath: map.toRemote(l.path), localPath: l.path },
        path: l.path,
        remotePath: map.toRemote(l.path),
        change: 'created',
      });
      continue;
    }
    const rem = r as RemoteMemory;
    const rl = map.toLocal(rem.path);
    if (rl === null) {
      skip(`${map.dir}${rem.path}`, rem.path, 'remote', 'path-rules', 'the hosted path has no normalised local form');
      continue;
    }
    if (l === null) {
      const touched = rem.sha !== b.sha || rem.path !== b.rp;
      if (!touched) {
        if (mayDelete('remote', b.lp, rem.path)) {
          actions.push({
            ...common,
            side: 'remote',
            op: { kind: 'delete', ifSha: rem.sha },
            path: b.lp,
            remotePath: rem.path,
            change: 'deleted',
          });
        }
        continue;
      }
      const conflict = { kind: 'delete-edit' as const, localSha: null, remoteSha: rem.sha, baseSha: b.sha, winner: 'remote' as const };
      actions.push({
        ...common,
        conflict,
        side: 'local',
        ops: [{ kind: 'put', path: rl, ifMatch: null }],
        next: fromRemote(rem, rl),
        path: rl,
        remotePath: rem.path,
        change: 'created',
      });
      continue;
    }
    pairAction(b, l, rem, rl);
  }

  function pairAction(b: Base, l: LocalEntry, r: RemoteMemory, rl: string): void {
    const common = { base: b, local: l, remote: r, partial: false };
    const contentL = l.sha !== b.sha;
    const pathL = l.path !== b.lp;
    // The hosted memory holding what a sync pushed (its answer lost, or the sync failed before
    // recording it) has not been edited there: the local side, edited since, goes over it.
    const mine = ownPush(r);
    const contentR = r.sha !== b.sha && !(contentL && mine);
    const pathR = r.path !== b.rp && !(pathL && mine);
    if (l.sha === r.sha && rl === l.path) {
      const next = { lp: l.path, rp: r.path, sha: r.sha, rv: r.versionId };
      if (b.lp !== next.lp || b.rp !== next.rp || b.sha !== next.sha || b.rv !== next.rv || b.lm !== l.memoryId) {
        actions.push({ ...common, conflict: null, side: 'base', next, path: l.path, remotePath: r.path, change: 'modified' });
      }
      return;
    }
    let conflict: (PendingConflict & { winner: SyncSide }) | null = null;
    let cw: SyncSide | null = contentL && !contentR ? 'local' : contentR && !contentL ? 'remote' : null;
    if (contentL && contentR && l.sha !== r.sha) {
      const c = { kind: 'edit-edit' as const, localSha: l.sha, remoteSha: r.sha, baseSha: b.sha };
      cw = input.choose(c, l.path);
      conflict = { ...c, winner: cw };
    }
    let pw: SyncSide | null = pathL && !pathR ? 'local' : pathR && !pathL ? 'remote' : null;
    if (pathL && pathR && rl !== l.path) {
      pw = cw ?? 'remote';
      conflict ??= { kind: 'edit-edit', localSha: l.sha, remoteSha: r.sha, baseSha: b.sha, winner: pw };
    }
    if (cw === 'remote' || pw === 'remote') {
      const ops: LocalOp[] = [];
      let at = l.path;
      if (pw === 'remote' && rl !== l.path) {
        ops.push({ kind: 'move', from: l.path, to: rl, ifMatch: l.sha });
        at = rl;
      }
      if (cw === 'remote') ops.push({ kind: 'put', path: at, ifMatch: l.sha });
      const partial = cw === 'local' || pw === 'local';
      const next = {
        lp: pw === 'local' ? b.lp : at,
        rp: pw === 'local' ? b.rp : r.path,
        sha: cw === 'local' ? b.sha : r.sha,
        rv: cw === 'local' ? b.rv : r.versionId,
      };
      actions.push({
        ...common,
        conflict,
        partial,
        side: 'local',
        ops,
        next,
        path: at,
        remotePath: r.path,
        change: cw === 'remote' ? 'modified' : 'renamed',
      });
      return;
    }
    // Only local changes win: one update carries content and path.
    const why = unpushable(l);
    if (why !== null) {
      skipUnpushable(l, why);
      return;
    }
    const remotePath = pw === 'local' ? map.toRemote(l.path) : null;
    actions.push({
      ...common,
      conflict,
      side: 'remote',
      op: { kind: 'update', content: cw === 'local', remotePath, ifSha: r.sha, localPath: l.path },
      path: l.path,
      remotePath: remotePath ?? r.path,
      change: cw === 'local' ? 'modified' : 'renamed',
    });
  }

  // Hosted memories with no base: new there (or both sides created the same path).
  for (const r of input.remote) {
    if (claimedRemote.has(r.id)) continue;
    const rl = map.toLocal(r.path);
    if (rl === null) {
      skip(`${map.dir}${r.path}`, r.path, 'remote', 'path-rules', 'the hosted path has no normalised local form');
      continue;
    }
    if (r.size > input.localMax) {
      skip(rl, r.path, 'remote', 'too-large', `${r.size} bytes is over the local maxMemoryBytes (${input.localMax})`);
      continue;
    }
    const l = claimedLocal.has(rl) ? null : (localByPath.get(rl) ?? null);
    const common = { base: null, local: l, remote: r, partial: false };
    if (l === null) {
      actions.push({
        ...common,
        conflict: null,
        side: 'local',
        ops: [{ kind: 'put', path: rl, ifMatch: null }],
        next: fromRemote(r, rl),
        path: rl,
        remotePath: r.path,
        change: 'created',
      });
      continue;
    }
    claimedLocal.add(l.path);
    if (l.sha === r.sha) {
      actions.push({ ...common, conflict: null, side: 'base', next: fromRemote(r, rl), path: rl, remotePath: r.path, change: 'modified' });
      continue;
    }
    if (ownPush(r)) {
      // A sync's own create whose answer never came, the local memory edited since: no conflict.
      const why = unpushable(l);
      if (why !== null) skipUnpushable(l, why);
      else
        actions.push({
          ...common,
          conflict: null,
          side: 'remote',
          op: { kind: 'update', content: true, remotePath: null, ifSha: r.sha, localPath: rl },
          path: rl,
          remotePath: r.path,
          change: 'modified',
        });
      continue;
    }
    const c = { kind: 'create-create' as const, localSha: l.sha, remoteSha: r.sha, baseSha: null };
    const winner = input.choose(c, rl);
    const conflict = { ...c, winner };
    if (winner === 'remote') {
      actions.push({
        ...common,
        conflict,
        side: 'local',
        ops: [{ kind: 'put', path: rl, ifMatch: l.sha }],
        next: fromRemote(r, rl),
        path: rl,
        remotePath: r.path,
        change: 'modified',
      });
    } else if (l.size > HOSTED_MAX_CONTENT_BYTES) {
      skipUnpushable(l, `too-large:${l.size} bytes (the hosted limit is ${HOSTED_MAX_CONTENT_BYTES})`);
    } else {
      actions.push({
        ...common,
        conflict,
        side: 'remote',
        op: { kind: 'update', content: true, remotePath: null, ifSha: r.sha, localPath: rl },
        path: rl,
        remotePath: r.path,
        change: 'modified',
      });
    }
  }

  // Local memories with no base and no hosted memory at their path: new here.
  for (const l of input.local) {
    if (claimedLocal.has(l.path)) continue;
    const why = unpushable(l);
    if (why !== null) {
      skipUnpushable(l, why);
      continue;
    }
    const remotePath = map.toRemote(l.path);
    actions.push({
      base: null,
      local: l,
      remote: null,
      conflict: null,
      partial: false,
      side: 'remote',
      op: { kind: 'create', remotePath, localPath: l.path },
      path: l.path,
      remotePath,
      change: 'created',
    });
  }
  return { actions, skipped };
}
