/**
 * What an incremental sync plans: only the memories the two feeds name (the local change feed
 * since the cursor, the hosted versions written since it), with every base and memory the
 * planner could pair with them, so that plan.ts decides on them exactly as it would on the whole
 * store. What no change names agrees with its base on both sides (cursor.ts says why), so its
 * hosted side is its base.
 */

import { native } from '../errors.js';
import type { NativeMemories } from '../native.js';
import type { Base } from './base.js';
import type { IndexField } from './base-index.js';
import type { PathMap } from './mapping.js';
import type { LocalEntry } from './plan.js';
import type { RemoteMemory, RemoteVersion } from './remote.js';

const FEED_PAGE = 10_000;
/** Above this many paths, one read of the whole mapping costs less than a read per path. */
const READ_EACH_MAX = 256;

/** The paths below `dir` changed since `since` and the feed's cursor after them; null when the feed cannot say (reset). */
export async function readFeed(m: NativeMemories, since: string, dir: string): Promise<{ paths: Set<string>; cursor: string } | null> {
  const paths = new Set<string>();
  let cursor = since;
  for (;;) {
    let page: Awaited<ReturnType<NativeMemories['changes']>>;
    try {
      page = await native(() => m.changes(cursor, FEED_PAGE));
    } catch {
      // A cursor the feed cannot read (a record another build wrote): as stale as a reset.
      return null;
    }
    if (page.reset) return null;
    for (const c of page.changes) if (c.path.startsWith(`${dir}/`)) paths.add(c.path);
    cursor = page.cursor;
    if (page.changes.length < FEED_PAGE) return { paths, cursor };
  }
}

/**
 * Per hosted memory with a version no earlier sync saw: its newest listed version, or null when
 * that one is not current for sure (an earlier sync saw the newest, so the unseen one became
 * visible late: the memory is retrieved). A memory whose versions were all seen was planned then.
 */
export function newestVersions(versions: RemoteVersion[], seen: ReadonlySet<string>): Map<string, RemoteVersion | null> {
  const newest = new Map<string, RemoteVersion>();
  const unseen = new Set<string>();
  // Newest first as listed; a later equal time does not displace the first.
  for (const v of versions) {
    const had = newest.get(v.memoryId);
    if (had === undefined || v.at > had.at) newest.set(v.memoryId, v);
    if (!seen.has(v.id)) unseen.add(v.memoryId);
  }
  const out = new Map<string, RemoteVersion | null>();
  for (const id of unseen) {
    const v = newest.get(id) as RemoteVersion;
    out.set(id, seen.has(v.id) ? null : v);
  }
  return out;
}

export function toLocalEntry(e: Awaited<ReturnType<NativeMemories['syncEntries']>>[number]): LocalEntry {
  return { path: e.path, sha: e.contentSha256, size: e.sizeBytes, memoryId: e.memoryId ?? null, versionId: e.versionId ?? null };
}

/** The local memories at `paths` (absent ones left out): one read each, or one of the whole mapping. */
export async function readLocal(m: NativeMemories, dir: string, paths: string[]): Promise<LocalEntry[]> {
  if (paths.length > READ_EACH_MAX) {
    const want = new Set(paths);
    return (await native(() => m.syncEntries(dir))).filter((e) => want.has(e.path)).map(toLocalEntry);
  }
  // A memory's own path is a directory for syncEntries: it answers the memory (nothing is below one).
  const each = await Promise.all(paths.map((p) => native(() => m.syncEntries(p))));
  return each.flatMap((es, i) => es.filter((e) => e.path === paths[i]).map(toLocalEntry));
}

export interface Selection {
  local: LocalEntry[];
  remote: RemoteMemory[];
  /** In the order a full round plans them (by tag). */
  bases: Base[];
}

/** Where select finds the bases a change names. */
export interface BaseLookup {
  /** The bases of these hosted ids (absent ones left out). */
  byId(ids: readonly string[]): Promise<Base[]>;
  /** The bases whose `field` is one of `values`. */
  by(field: IndexField, values: readonly string[]): Promise<Base[]>;
}

/** A lookup over bases already read (every one of the mapping's). */
export function lookupIn(all: readonly Base[]): BaseLookup {
  const byId = new Map(all.map((b) => [b.id, b]));
  const index = { lp: new Map<string, Base[]>(), rp: new Map<string, Base[]>(), lm: new Map<string, Base[]>() };
  for (const b of all) {
    for (const field of ['lp', 'rp', 'lm'] as const) {
      const v = b[field];
      if (v === null) continue;
      const list = index[field].get(v);
      if (list === undefined) index[field].set(v, [b]);
      else list.push(b);
    }
  }
  return {
    byId: async (ids) => ids.flatMap((id) => byId.get(id) ?? []),
    by: async (field, values) => values.flatMap((v) => index[field].get(v) ?? []),
  };
}

/** Tag order: the order a full round reads the bases in (UTF-8 bytes). */
const byTag = (a: Base, b: Base) => Buffer.compare(Buffer.from(a.id), Buffer.from(b.id));

/**
 * The memories and bases to plan: the changed ones and, closed over, every base or memory the
 * planner pairs with them (by hosted id, hosted path, local memory id, local path).
 */
export async function select(
  lookup: BaseLookup,
  localChanged: ReadonlySet<string>,
  remoteNow: ReadonlyMap<string, RemoteMemory | null>,
  map: PathMap,
  read: (paths: string[]) => Promise<LocalEntry[]>,
): Promise<Selection> {
  const chosen = new Map<string, Base>();
  const paths = new Set(localChanged);
  const add = (bs: Base[]) => {
    for (const b of bs) {
      if (chosen.has(b.id)) continue;
      chosen.set(b.id, b);
      paths.add(b.lp);
    }
  };
  add(await lookup.byId([...remoteNow.keys()]));
  const now = [...remoteNow.values()].flatMap((r) => (r === null ? [] : [r]));
  add(await lookup.by('rp', [...new Set(now.map((r) => r.path))]));
  for (const r of now) {
    const lp = map.toLocal(r.path);
    if (lp !== null) paths.add(lp);
  }
  add(await lookup.by('lp', [...localChanged]));
  const local = new Map<string, LocalEntry>();
  const done = new Set<string>();
  for (;;) {
    const todo = [...paths].filter((p) => !done.has(p));
    if (todo.length === 0) break;
    for (const p of todo) done.add(p);
    const found = await read(todo);
    for (const e of found) local.set(e.path, e);
    add(
      await lookup.by(
        'lp',
        found.map((e) => e.path),
      ),
    );
    add(await lookup.by('lm', [...new Set(found.flatMap((e) => (e.memoryId === null ? [] : [e.memoryId])))]));
  }
  const remote = new Map<string, RemoteMemory>();
  for (const b of chosen.values()) {
    const r = remoteNow.has(b.id) ? remoteNow.get(b.id) : { id: b.id, path: b.rp, sha: b.sha, size: 0, versionId: b.rv };
    if (r) remote.set(r.id, r);
  }
  for (const r of remoteNow.values()) if (r !== null) remote.set(r.id, r);
  return { local: [...local.values()], remote: [...remote.values()], bases: [...chosen.values()].sort(byTag) };
}
