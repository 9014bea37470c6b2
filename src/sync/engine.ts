/**
 * `db.sync(client, options)`: rounds of read both sides → plan (plan.ts) → apply, until a round
 * finds nothing that changed under it. Local writes are `syncApply` commits: the memories and
 * the base records describing them in one commit, every write conditional on the hash the plan
 * saw, so a concurrent edit (the model's, another process's sync) is never overwritten: the
 * commit is refused and the next round re-plans it. Hosted writes carry the hosted
 * preconditions; their answers become base records. See docs/guide/sync.md.
 */

import { InvalidArgumentError, InvalidOptionError, native, nativeSync } from '../errors.js';
import { actorOption, type Actor } from '../history.js';
import { DEFAULT_MAX_MEMORY_BYTES, NativeMemories } from '../native.js';
import { createHash, randomUUID } from 'node:crypto';
import { DONE_TAG, decodeBase, encodeBase, encodeDone, tagPrefix, type Base } from './base.js';
import {
  CURSOR_MARK,
  DEFAULT_MAX_AGE_MS,
  DEFAULT_MAX_SYNCS,
  MARGIN_MS,
  MAX_SEEN,
  decodeCursor,
  encodeCursor,
  staleness,
  type Cursor,
} from './cursor.js';
import { backfill, INDEX_MARK, indexWrites, isBaseTag } from './base-index.js';
import { IndexedBases, type BaseRow } from './base-lookup.js';
import { type BaseLookup, lookupIn, newestVersions, readFeed, readLocal, select, toLocalEntry } from './incremental.js';
import { CONFLICT_MARK, conflictTag, decodeConflict, encodeConflict, judge, type ConflictRecord, type Intent } from './conflicts.js';
import { PathMap } from './mapping.js';
import { PUSH_MARK, decodePush, encodePush, pushTag, settled, type PushRecord } from './pushes.js';
import { plan, type Action, type LocalEntry, type NextBase, type PendingConflict, type Skip } from './plan.js';
import { RemoteStore, RemoteWriteError, type RemoteMemory } from './remote.js';
import type { SyncConflict, SyncHost, SyncOptions, SyncReport, SyncSide } from './types.js';

const MAX_ROUNDS = 5;
const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');
const LOCAL_CHUNK = 256;
/** Lookup rows written per commit when a sync writes the missing ones. */
const INDEX_CHUNK = 4096;
const SYNC_OPTION_KEYS = new Set([
  'memoryStoreId',
  'scope',
  'prefix',
  'deletes',
  'onConflict',
  'dryRun',
  'concurrency',
  'maxAttempts',
  'onProgress',
  'actor',
  'hostedActors',
  'incremental',
]);
const INCREMENTAL_KEYS = new Set(['maxSyncs', 'maxAgeMs']);

/** One sync at a time per store handle and mapping in this process (others wait their turn). */
const running = new WeakMap<object, Map<string, Promise<unknown>>>();

interface Settings {
  storeId: string;
  scope: string;
  map: PathMap;
  deletes: { enabled: boolean; max: number | null; allowEmptySide: boolean };
  onConflict: NonNullable<SyncOptions['onConflict']>;
  dryRun: boolean;
  concurrency: number;
  maxAttempts: number;
  onProgress: SyncOptions['onProgress'] | null;
  actor: Actor;
  hostedActors: boolean;
  /** null: every sync is a full one. */
  incremental: { maxSyncs: number; maxAgeMs: number } | null;
}

function settings(options: SyncOptions): Settings {
  if (typeof options !== 'object' || options === null) throw new InvalidOptionError('db.sync needs options { memoryStoreId }');
  for (const key of Object.keys(options)) {
    if (!SYNC_OPTION_KEYS.has(key)) throw new InvalidOptionError(`invalid option ${key}: unknown sync option`);
  }
  const bad = (name: string, why: string): never => {
    const value = (options as unknown as Record<string, unknown>)[name];
    throw new InvalidOptionError(`invalid option ${name}: ${JSON.stringify(value) ?? String(value)} (${why})`);
  };
  const storeId = options.memoryStoreId;
  if (typeof storeId !== 'string' || !/^[A-Za-z0-9_-]{1,255}$/.test(storeId)) bad('memoryStoreId', 'expected a memstore_… id');
  const scope = options.scope ?? 'default';
  if (typeof scope !== 'string') bad('scope', 'expected a string');
  let map: PathMap;
  try {
    map = new PathMap(options.prefix);
  } catch {
    return bad('prefix', 'expected a directory below /memories');
  }
  const d = options.deletes ?? true;
  let deletes: Settings['deletes'];
  if (typeof d === 'boolean') deletes = { enabled: d, max: null, allowEmptySide: false };
  else if (typeof d === 'object' && d !== null) {
    if (d.max !== undefined && (!Number.isSafeInteger(d.max) || d.max < 0)) bad('deletes', 'max must be a non-negative integer');
    if (d.allowEmptySide !== undefined && typeof d.allowEmptySide !== 'boolean') bad('deletes', 'allowEmptySide must be a boolean');
    deletes = { enabled: true, max: d.max ?? null, allowEmptySide: d.allowEmptySide ?? false };
  } else return bad('deletes', 'expected a boolean or { max, allowEmptySide }');
  const onConflict = options.onConflict ?? 'remote';
  if (onConflict !== 'local' && onConflict !== 'remote' && typeof onConflict !== 'function')
    bad('onConflict', "expected 'local', 'remote' or a function");
  const positive = (name: string, v: unknown, dflt: number) => {
    if (v === undefined) return dflt;
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 1 || v > 64) bad(name, 'expected an integer 1–64');
    return v as number;
  };
  if (options.onProgress !== undefined && typeof options.onProgress !== 'function') bad('onProgress', 'expected a function');
  if (options.dryRun !== undefined && typeof options.dryRun !== 'boolean') bad('dryRun', 'expected true or false');
  if (options.hostedActors !== undefined && typeof options.hostedActors !== 'boolean') bad('hostedActors', 'expected true or false');
  const inc = options.incremental ?? true;
  let incremental: Settings['incremental'] = null;
  if (typeof inc === 'object' && inc !== null) {
    for (const key of Object.keys(inc)) if (!INCREMENTAL_KEYS.has(key)) bad('incremental', `unknown key ${key}`);
    const { maxSyncs = DEFAULT_MAX_SYNCS, maxAgeMs = DEFAULT_MAX_AGE_MS } = inc;
    if (!Number.isSafeInteger(maxSyncs) || maxSyncs < 0) bad('incremental', 'maxSyncs must be a non-negative integer');
    if (!Number.isSafeInteger(maxAgeMs) || maxAgeMs < 0) bad('incremental', 'maxAgeMs must be a non-negative integer');
    incremental = { maxSyncs, maxAgeMs };
  } else if (inc === true) incremental = { maxSyncs: DEFAULT_MAX_SYNCS, maxAgeMs: DEFAULT_MAX_AGE_MS };
  else if (inc !== false) bad('incremental', 'expected a boolean or { maxSyncs, maxAgeMs }');
  return {
    storeId,
    scope,
    map,
    deletes,
    onConflict,
    dryRun: options.dryRun ?? false,
    concurrency: positive('concurrency', options.concurrency, 8),
    maxAttempts: positive('maxAttempts', options.maxAttempts, 6),
    onProgress: options.onProgress ?? null,
    actor: actorOption(options.actor) ?? { type: 'memory_store', id: storeId },
    hostedActors: options.hostedActors ?? false,
    incremental,
  };
}

export async function syncStore(db: SyncHost, client: unknown, options: SyncOptions): Promise<SyncReport> {
  const s = settings(options);
  if (db.history === null) {
    throw new InvalidOptionError('db.sync needs a store opened with history: true (a conflict keeps the losing edit as a version)');
  }
  const remote = new RemoteStore(client, s.storeId, s.concurrency, s.maxAttempts);
  const m = nativeSync(
    () =>
      new NativeMemories(db.native, {
        scope: s.scope,
        maxMemoryBytes: DEFAULT_MAX_MEMORY_BYTES,
        createOverwrites: false,
        trackAccess: false,
        listingIndex: false,
        actor: s.actor,
      }),
  );
  const key = `${s.scope}\0${tagPrefix(s.storeId, s.map.dir)}`;
  const mine = running.get(db.key) ?? new Map<string, Promise<unknown>>();
  running.set(db.key, mine);
  const before = mine.get(key) ?? Promise.resolve();
  const run = before.catch(() => undefined).then(() => new Sync(m, remote, s).run());
  mine.set(key, run);
  try {
    return await run;
  } finally {
    if (mine.get(key) === run) mine.delete(key);
  }
}

type BaseWrites = Parameters<NativeMemories['syncApply']>[1];

/** One hosted path an ancestor of the other (not the same path). */
function nestedPaths(a: string, b: string): boolean {
  return a !== b && (b.startsWith(`${a}/`) || a.startsWith(`${b}/`));
}

class Sync {
  readonly #report: SyncReport;
  readonly #prefix: string;
  #retry: Skip[] = [];
  /** What this round skipped; the last round's list is the report's (each round re-plans all). */
  #skips: Skip[] = [];
  #done = 0;
  #total = 0;
  /** Names this run's conflict records apart from every other run's. */
  readonly #run = randomUUID();
  #seq = 0;
  /** The conflict records this run wrote (its own conflicts), cleared in its last commit. */
  readonly #own: ConflictRecord[] = [];
  /** Records other runs left, found as this run started: to report (resolved, never reported) and to clear unreported. */
  #carried: ConflictRecord[] = [];
  #dropped: ConflictRecord[] = [];
  /** This run's intents whose push failed in a way that may hide a landed write. */
  #unsure: ConflictRecord[] = [];
  /** Push records as the current round read them, and the tags the first round read. */
  #pushes: PushRecord[] = [];
  #pushesAtStart = new Set<string>();
  /** The current round's hosted listing and bases (for the sweep of push records). */
  #listed: RemoteMemory[] = [];
  /** The cursor record as the run began (its bytes: the condition of the one it writes). */
  #cursorRaw: string | undefined;
  #cursor: Cursor | null = null;
  /** Where the next sync reads on from, once this one has read both sides. */
  #next: { feed: string | null; since: number | null; seen: string[] } = { feed: null, since: null, seen: [] };
  /** The hosted memories there are, for pricing a fetch of contents (a full listing's length, or the bases'). */
  #hosted = 0;
  /** The hosted memories an incremental sync read changed (NaN #hosted: added to the estimate). */
  #changedHosted = 0;
  /** Every base has its lookup rows (base-index.ts): the cursor this run writes says so. */
  #indexed = false;

  constructor(
    readonly m: NativeMemories,
    readonly remote: RemoteStore,
    readonly s: Settings,
  ) {
    this.#prefix = tagPrefix(s.storeId, s.map.dir);
    this.#report = {
      memoryStoreId: s.storeId,
      firstSync: true,
      pushed: [],
      pulled: [],
      deleted: [],
      conflicts: [],
      skipped: [],
      requests: 0,
      rounds: 0,
      mode: 'full',
    };
  }

  async run(): Promise<SyncReport> {
    const cursor = await this.#startCursor();
    let again = false;
    for (let round = 1; round <= MAX_ROUNDS; round++) {
      this.#report.rounds = round;
      this.#retry = [];
      this.#skips = [];
      // A round after the first (something changed under the sync) is a full one.
      again = round === 1 && cursor !== null ? await this.#incremental(cursor) : await this.#round(round === 1);
      if (!again || this.s.dryRun) break;
    }
    this.#report.skipped.push(...this.#skips, ...this.#retry);
    if (!this.s.dryRun && this.#report.firstSync) {
      await this.#commit([], [{ tag: this.#prefix + DONE_TAG, value: encodeDone() }]);
    }
    if (!this.s.dryRun) await this.#sweepPushes();
    if (this.s.dryRun)
      this.#report.conflicts.push(
        ...this.#carried.flatMap((r) => (r.conflict === null ? [] : [{ ...r.conflict, carriedOver: true as const }])),
      );
    else await this.#clearConflicts();
    if (!this.s.dryRun) await this.#saveCursor(!again && this.#report.skipped.length === 0 && this.#unsure.length === 0);
    this.#report.requests = this.remote.requests;
    return this.#report;
  }

  /**
   * The cursor to read on from, when an incremental sync can be trusted now: this mapping synced
   * before and ended clean, no push or conflict record is left by an interrupted sync, the
   * client can list versions, and the last full sync is recent enough. Also takes the local
   * feed's position before anything local is read (a full round's cursor).
   */
  async #startCursor(): Promise<Cursor | null> {
    const [now, rows, done, pending, unresolved] = await Promise.all([
      native(() => this.m.changes(undefined, 0)),
      native(() => this.m.syncBases(this.#prefix + CURSOR_MARK)),
      native(() => this.m.syncBases(this.#prefix + DONE_TAG)),
      native(() => this.m.syncBases(this.#prefix + PUSH_MARK)),
      native(() => this.m.syncBases(this.#prefix + CONFLICT_MARK)),
    ]);
    this.#next.feed = now.cursor;
    const tag = this.#prefix + CURSOR_MARK;
    this.#cursorRaw = rows.find((r) => r.tag === tag)?.value;
    this.#cursor = this.#cursorRaw === undefined ? null : decodeCursor(this.#cursorRaw, tag);
    // Whether every base has its lookup rows: whatever this run then writes keeps them so.
    this.#indexed = this.#cursor?.ix === true;
    if (this.s.incremental === null || !this.remote.canListVersions) return null;
    if (done.length === 0 || pending.length > 0 || unresolved.length > 0) return null;
    return staleness(this.#cursor, this.s.incremental, Date.now()) === null ? this.#cursor : null;
  }

  /**
   * After a clean sync: the cursor where this one began reading (conditional on the record it
   * read; one another sync wrote meanwhile stays). After any other: none, so the next is full.
   */
  async #saveCursor(clean: boolean): Promise<void> {
    const tag = this.#prefix + CURSOR_MARK;
    const { feed, since, seen } = this.#next;
    if (clean && feed !== null && since !== null) {
      const incremental = this.#report.mode === 'incremental' && this.#cursor !== null;
      const c: Cursor = {
        feed,
        since,
        seen,
        n: incremental ? (this.#cursor as Cursor).n + 1 : 0,
        full: incremental ? (this.#cursor as Cursor).full : Date.now(),
        ix: this.#indexed,
      };
      await this.#commit([], [{ tag, value: encodeCursor(c), expect: this.#cursorRaw }]);
      return;
    }
    // Whatever another sync wrote meanwhile goes too: this one knows of something left over.
    let raw = this.#cursorRaw;
    for (let i = 0; i < 8 && raw !== undefined; i++) {
      const out = await this.#commit([], [{ tag, value: undefined, expect: raw }]);
      if (out.status === 'applied') return;
      raw = (await native(() => this.m.syncBases(tag))).find((r) => r.tag === tag)?.value;
    }
  }

  /**
   * The first round of an incremental sync: the paths the local feed names since the cursor and
   * the hosted memories with versions since it, planned as a full round would plan them. Falls
   * back to a full round when the feed resets or the versions cannot be listed.
   */
  async #incremental(c: Cursor): Promise<boolean> {
    const feed = await readFeed(this.m, c.feed, this.s.map.dir);
    if (feed === null) return this.#round(true);
    let listed: Awaited<ReturnType<RemoteStore['versionsSince']>>;
    try {
      listed = await this.remote.versionsSince(c.since);
    } catch {
      return this.#round(true);
    }
    this.#report.mode = 'incremental';
    this.#report.firstSync = false;
    this.#next.feed = feed.cursor;
    const newest = listed.versions.reduce((t, v) => Math.max(t, v.at), Number.NEGATIVE_INFINITY);
    const clock = listed.at ?? (Number.isFinite(newest) ? newest : null);
    const since = clock === null ? c.since : Math.max(c.since, clock - MARGIN_MS);
    this.#next.since = since;
    const seen = listed.versions.filter((v) => v.at >= since).map((v) => v.id);
    // Past a burst the record would grow with it; without the ids, those versions' memories are
    // only checked against their bases again (no request), so the ids are an economy, not a need.
    this.#next.seen = seen.length <= MAX_SEEN ? seen : [];
    const changed = newestVersions(listed.versions, new Set(c.seen));
    if (feed.paths.size === 0 && changed.size === 0) return false;
    let lookup: BaseLookup;
    let rowOf: (id: string) => BaseRow | undefined;
    let count: number | (() => Promise<number>);
    if (c.ix) {
      // Every base has its lookup rows: read only the ones the changes name.
      const marks = await Promise.all([PUSH_MARK, CONFLICT_MARK].map((mark) => native(() => this.m.syncBases(this.#prefix + mark))));
      // A push or conflict record now: another sync is under way; plan everything.
      if (marks.some((rows) => rows.length > 0)) return this.#round(true);
      const indexed = new IndexedBases(this.m, this.#prefix);
      lookup = indexed;
      rowOf = (id) => indexed.rows.get(id) ?? undefined;
      count = () => this.#countBases();
    } else {
      // A store whose bases may lack their rows (an older build synced it last): read them all, once.
      const read = await this.#readBases();
      if (read === null) return this.#round(true);
      await this.#backfill(read.bases, read.index);
      const all = [...read.bases.values()].flatMap((b) => (b.base === null ? [] : [b.base]));
      lookup = lookupIn(all);
      rowOf = (id) => read.bases.get(id);
      count = all.length;
    }
    await lookup.byId([...changed.keys()]);
    // A version this mapping's syncs wrote or already pulled is the one its base records.
    const remoteNow = new Map<string, RemoteMemory | null>();
    await Promise.all(
      [...changed].map(async ([id, v]) => {
        const rv = rowOf(id)?.base?.rv;
        if (v !== null && rv === v.id) return;
        if (v?.operation === 'deleted') remoteNow.set(id, null);
        else if (v === null || v.path === null || v.sha === null || v.size === null) {
          // Redacted, or which version is current is not sure: the memory as it is now.
          const r = await this.remote.retrieve(id);
          if (r === null || r.versionId !== rv) remoteNow.set(id, r);
        } else remoteNow.set(id, { id, path: v.path, sha: v.sha, size: v.size, versionId: v.id });
      }),
    );
    if (feed.paths.size === 0 && remoteNow.size === 0) return false;
    const sel = await select(lookup, feed.paths, remoteNow, this.s.map, (p) => readLocal(this.m, this.s.map.dir, p));
    this.#pushes = [];
    this.#listed = sel.remote;
    // Unknown without reading every base: #fetch prices with the local memories' count instead.
    this.#hosted = typeof count === 'number' ? count + remoteNow.size : Number.NaN;
    this.#changedHosted = remoteNow.size;
    const chosen = new Map(sel.bases.map((b) => [b.id, rowOf(b.id) as BaseRow]));
    // Whether a side holds nothing at all matters only with two bases or more and a side with
    // nothing selected: then whether the selection is every base (the count) tells.
    let empty = { local: false, remote: false };
    if (chosen.size >= 2 && (sel.local.length === 0 || sel.remote.length === 0)) {
      const whole = chosen.size === (typeof count === 'number' ? count : await count());
      empty = { local: whole && sel.local.length === 0, remote: whole && sel.remote.length === 0 };
    }
    return this.#execute(sel.local, sel.remote, chosen, count, empty);
  }

  /**
   * Every base record of the mapping, and its lookup rows; null when a push or conflict record
   * is there (another sync is under way).
   */
  async #readBases(): Promise<{ bases: Map<string, BaseRow>; index: Map<string, string> } | null> {
    const rows = await native(() => this.m.syncBases(this.#prefix));
    const bases = new Map<string, BaseRow>();
    const index = new Map<string, string>();
    for (const row of rows) {
      const id = row.tag.slice(this.#prefix.length);
      if (id.startsWith(PUSH_MARK) || id.startsWith(CONFLICT_MARK)) return null;
      if (id.startsWith(INDEX_MARK)) index.set(row.tag, row.value);
      else if (id !== DONE_TAG && id !== CURSOR_MARK) bases.set(id, { base: decodeBase(row.value, row.tag), raw: row.value });
    }
    return { bases, index };
  }

  /** How many bases there are (the planner's delete cap and empty sides): a read of them all. */
  async #countBases(): Promise<number> {
    let n = 0;
    for (const row of await native(() => this.m.syncBases(this.#prefix)))
      if (isBaseTag(this.#prefix, row.tag) && decodeBase(row.value, row.tag) !== null) n++;
    return n;
  }

  /**
   * Writes the lookup rows the bases lack and drops those no base holds, so that this run's
   * cursor can say every base has them (a refused commit: a base changed meanwhile, the next
   * sync does this again).
   */
  async #backfill(bases: Map<string, BaseRow>, index: Map<string, string>): Promise<void> {
    if (this.s.dryRun) return;
    const writes = backfill(
      this.#prefix,
      [...bases.values()].flatMap((b) => (b.base === null ? [] : [b.base])),
      index,
    );
    let ok = true;
    for (let i = 0; i < writes.length; i += INDEX_CHUNK) {
      const out = await native(() =>
        this.m.syncApply([], writes.slice(i, i + INDEX_CHUNK), { type: this.s.actor.type, id: this.s.actor.id }),
      );
      ok &&= out.status === 'applied';
    }
    this.#indexed = ok;
  }

  /** One round; true when another must follow. */
  async #round(first: boolean): Promise<boolean> {
    const rows = await native(() => this.m.syncBases(this.#prefix));
    // A first sync pulls (nearly) everything the hosted store holds: list it with the content
    // (20 a page) instead of listing hashes and fetching the content after.
    const never = !rows.some((r) => r.tag === this.#prefix + DONE_TAG);
    const [local, remote] = await Promise.all([
      native(() => this.m.syncEntries(this.s.map.dir)),
      this.remote.list(never && first && !this.s.dryRun),
    ]);
    this.#report.mode = 'full';
    // The hosted store's clock as its listing began: the next sync lists versions from there.
    if (first) this.#next.since = this.remote.listedAt === null ? null : this.remote.listedAt - MARGIN_MS;
    const bases = new Map<string, BaseRow>();
    const index = new Map<string, string>();
    const left: ConflictRecord[] = [];
    this.#pushes = [];
    this.#listed = remote;
    for (const row of rows) {
      const id = row.tag.slice(this.#prefix.length);
      if (id === CURSOR_MARK) continue;
      if (id === DONE_TAG) this.#report.firstSync = first ? false : this.#report.firstSync;
      else if (id.startsWith(PUSH_MARK)) {
        const p = decodePush(row.tag, row.value);
        this.#pushes.push(p ?? { tag: row.tag, raw: row.value, id: null, rp: '', sha: '' });
        if (first) this.#pushesAtStart.add(row.tag);
      } else if (id.startsWith(INDEX_MARK)) index.set(row.tag, row.value);
      else if (!id.startsWith(CONFLICT_MARK)) bases.set(id, { base: decodeBase(row.value, row.tag), raw: row.value });
    }
    // Rows vouched for (by the cursor, or an earlier round of this run) need no second look.
    if (!this.#indexed) await this.#backfill(bases, index);
    // Conflict records are read after the listing: a hosted write it saw landed was announced
    // (its intent committed) before it was sent, so that intent is among them.
    if (first) {
      for (const row of await native(() => this.m.syncBases(this.#prefix + CONFLICT_MARK))) left.push(decodeConflict(row.tag, row.value));
    }
    const baseRaw = (id: string) => bases.get(id)?.raw ?? null;
    if (first) ({ claim: this.#carried, drop: this.#dropped } = judge(left, baseRaw, remote));
    // This run's own unsure intents: a landed one is its conflict; any other is over (its push is done).
    const landed = judge(this.#unsure, baseRaw, remote).claim;
    for (const r of this.#unsure) {
      const l = landed.find((x) => x.tag === r.tag);
      if (l?.conflict == null) this.#dropped.push(r);
      else {
        this.#report.conflicts.push(l.conflict);
        this.#own.push(l);
      }
    }
    this.#unsure = [];
    const entries: LocalEntry[] = local.map(toLocalEntry);
    this.#hosted = remote.length;
    return this.#execute(entries, remote, bases, null, undefined);
  }

  /**
   * Plans and applies one round. `bases`: every base the plan may touch (all of them, or an
   * incremental selection); `count`: how many bases there are in all (null: `bases` is all; a
   * function: read when the plan's delete cap depends on it).
   */
  async #execute(
    entries: LocalEntry[],
    remote: RemoteMemory[],
    bases: Map<string, BaseRow>,
    count: number | null | (() => Promise<number>),
    empty: { local: boolean; remote: boolean } | undefined,
  ): Promise<boolean> {
    const known = [...bases.values()].flatMap((b) => (b.base === null ? [] : [b.base]));
    const input = this.#planInput(entries, remote, known, typeof count === 'function' ? known.length : (count ?? known.length), empty);
    // Ask the policy about each conflict first (it may be async), then plan with the answers.
    let asked: Array<[PendingConflict, string]> = [];
    const ask = (i: typeof input) => {
      asked = [];
      return plan({
        ...i,
        choose: (c, path) => {
          asked.push([c, path]);
          return 'remote';
        },
      });
    };
    // The cap planned with the bases selected is at most the real one: a plan it did not cap is
    // the same under the real one; one it capped is planned again with the count.
    if (ask(input).skipped.some((k) => k.reason === 'delete-cap') && typeof count === 'function' && this.s.deletes.max === null)
      Object.assign(input, this.#planInput(entries, remote, known, await count(), empty));
    ask(input);
    const answers = new Map<string, SyncSide>();
    for (const [c, path] of asked) answers.set(`${c.kind}\0${path}`, await this.#decide(c, path, entries, remote));
    const { actions, skipped } = plan({ ...input, choose: (c, path) => answers.get(`${c.kind}\0${path}`) ?? 'remote' });
    this.#skips.push(...skipped);
    const work = actions.filter((a) => a.side !== 'base' || this.#baseDiffers(a, bases));
    if (work.length === 0) return false;
    if (this.s.dryRun) {
      for (const a of work) this.#record(a, a.side === 'remote' ? null : (a.local?.versionId ?? null));
      return false;
    }
    this.#total += work.length;
    this.#progress(0);
    const expect = (id: string) => bases.get(id)?.raw;
    await this.#applyLocal(
      work.filter((a) => a.side !== 'remote'),
      expect,
    );
    await this.#applyRemote(
      work.filter((a) => a.side === 'remote'),
      expect,
    );
    return this.#retry.length > 0 || work.some((a) => a.partial);
  }

  #planInput(
    entries: LocalEntry[],
    remote: RemoteMemory[],
    known: Base[],
    count: number,
    empty: { local: boolean; remote: boolean } | undefined,
  ) {
    return {
      map: this.s.map,
      local: entries,
      remote,
      bases: known,
      pushed: this.#pushes,
      deletes: {
        enabled: this.s.deletes.enabled,
        max: this.s.deletes.max ?? Math.max(10, Math.ceil(count / 4)),
        allowEmptySide: this.s.deletes.allowEmptySide,
      },
      localMax: DEFAULT_MAX_MEMORY_BYTES,
      ...(empty === undefined ? {} : { empty }),
    };
  }

  #baseDiffers(a: Action, bases: Map<string, BaseRow>): boolean {
    if (a.side !== 'base') return true;
    const id = a.remote?.id ?? a.base?.id;
    return id !== undefined && (a.next === null || bases.get(id)?.raw !== encodeBase(this.#base(id, a.next, a.local?.memoryId ?? null)));
  }

  #base(id: string, n: NextBase, lm: string | null): Base {
    return { id, rp: n.rp, lp: n.lp, sha: n.sha, lm, rv: n.rv };
  }

  /** A policy's answer; a local side with no recorded version wins (it is kept nowhere else). */
  async #decide(c: PendingConflict, path: string, local: LocalEntry[], remote: RemoteMemory[]): Promise<SyncSide> {
    const l = local.find((e) => e.path === path);
    if (l !== undefined && l.versionId === null) return 'local';
    const p = this.s.onConflict;
    if (p === 'local' || p === 'remote') return p;
    const r = remote.find((e) => e.sha === c.remoteSha && this.s.map.toLocal(e.path) === path) ?? remote.find((e) => e.sha === c.remoteSha);
    const answer = await p({
      kind: c.kind as 'edit-edit' | 'create-create',
      path,
      remotePath: r?.path ?? this.s.map.toRemote(path),
      remoteId: r?.id ?? '',
      localSha256: c.localSha ?? '',
      remoteSha256: c.remoteSha ?? '',
      baseSha256: c.baseSha,
    });
    if (answer !== 'local' && answer !== 'remote')
      throw new InvalidArgumentError(`onConflict returned ${JSON.stringify(answer)} (expected 'local' or 'remote')`);
    return answer;
  }

  #progress(step: number): void {
    this.#done += step;
    this.s.onProgress?.({ done: this.#done, total: this.#total, firstSync: this.#report.firstSync });
  }

  #later(a: Action, detail: string): void {
    this.#retry.push({
      path: a.path,
      remotePath: a.remotePath,
      side: a.side === 'remote' ? 'local' : 'remote',
      reason: 'changed-during-sync',
      detail,
    });
  }

  #skip(a: Action, reason: Skip['reason'], detail: string): void {
    this.#skips.push({ path: a.path, remotePath: a.remotePath, side: a.side === 'remote' ? 'local' : 'remote', reason, detail });
  }

  /**
   * One `syncApply` commit; the lookup rows of the bases it writes go in it too (base-index.ts).
   * A refusal on a row (not as its base says: a backfill interrupted, a base an older build
   * wrote) is retried with the rows as they are.
   */
  async #commit(
    ops: Parameters<NativeMemories['syncApply']>[0],
    bases: Parameters<NativeMemories['syncApply']>[1],
    actor: Actor = this.s.actor,
  ) {
    const who = { type: actor.type, id: actor.id };
    let current: Map<string, string | undefined> | undefined;
    for (let attempt = 0; attempt < 3; attempt++) {
      const rows = indexWrites(this.#prefix, bases, current);
      const out = await native(() => this.m.syncApply(ops, [...bases, ...rows], who));
      if (out.status !== 'base_changed' || (out.index ?? 0) < bases.length) return out;
      const read = async (tag: string) => [tag, (await native(() => this.m.syncBases(tag))).find((r) => r.tag === tag)?.value] as const;
      current = new Map(await Promise.all(rows.map((w) => read(w.tag))));
    }
    // Still refused (rows changing under it): the bases alone, and no claim that every base has its rows.
    this.#indexed = false;
    return native(() => this.m.syncApply(ops, bases, who));
  }

  /** With `hostedActors`: the actions grouped by the author of the hosted version they pull. */
  async #byAuthor(actions: Action[], contents: Map<string, RemoteMemory | null>): Promise<Array<[Actor, Action[]]>> {
    if (!this.s.hostedActors) return [[this.s.actor, actions]];
    const groups = new Map<string, [Actor, Action[]]>();
    await Promise.all(
      actions.map(async (a) => {
        const fetched = a.remote !== null ? contents.get(a.remote.id) : undefined;
        const author = (fetched ? await this.remote.author(fetched.versionId) : null) ?? this.s.actor;
        const key = `${author.type}\0${author.id}`;
        const g = groups.get(key) ?? [author, []];
        g[1].push(a);
        groups.set(key, g);
      }),
    );
    return [...groups.values()];
  }

  /** Local actions in commits of up to LOCAL_CHUNK, each with its base records. */
  async #applyLocal(all: Action[], expect: (id: string) => string | undefined): Promise<void> {
    const contents = await this.#fetch(all);
    for (const [actor, actions] of await this.#byAuthor(all, contents)) await this.#applyChunks(actor, actions, contents, expect);
  }

  async #applyChunks(
    actor: Actor,
    actions: Action[],
    contents: Map<string, RemoteMemory | null>,
    expect: (id: string) => string | undefined,
  ): Promise<void> {
    for (let i = 0; i < actions.length; i += LOCAL_CHUNK) {
      let chunk = actions.slice(i, i + LOCAL_CHUNK);
      while (chunk.length > 0) {
        const ops: Parameters<NativeMemories['syncApply']>[0] = [];
        const baseWrites: Parameters<NativeMemories['syncApply']>[1] = [];
        const opOwner: number[] = [];
        const baseOwner: number[] = [];
        const ready: Action[] = [];
        const recs = new Map<Action, ConflictRecord>();
        for (const a of chunk) {
          const fetched = a.remote !== null ? contents.get(a.remote.id) : undefined;
          const needs = a.side === 'local' && a.ops.some((o) => o.kind === 'put');
          if (needs && (fetched === undefined || fetched === null)) {
            this.#later(a, 'the hosted memory changed or went away while it was fetched');
            continue;
          }
          // Content whose hash is not the one the hosted store states: written here, its base
          // would hold the stated hash and the next sync would push it back, forever.
          const actual = needs && fetched ? sha256(fetched.content ?? '') : null;
          if (fetched && actual !== null && actual !== fetched.sha) {
            this.#skip(a, 'hash-mismatch', `the hosted store states hash ${fetched.sha} for content whose hash is ${actual}`);
            continue;
          }
          const k = ready.push(a) - 1;
          if (a.side === 'local') {
            for (const o of a.ops) {
              opOwner.push(k);
              if (o.kind === 'put')
                ops.push({ kind: 'put', path: o.path, content: fetched?.content ?? '', ifMatch: o.ifMatch ?? undefined });
              else if (o.kind === 'move') ops.push({ kind: 'move', from: o.from, path: o.to, ifMatch: o.ifMatch });
              else ops.push({ kind: 'remove', path: o.path, ifMatch: o.ifMatch });
            }
          }
          // A conflict this commit resolves is recorded in it (see #clearConflicts).
          const rec = a.side === 'local' ? this.#recordOf(a, a.local?.versionId ?? null) : undefined;
          if (rec !== undefined) {
            recs.set(a, rec);
            baseOwner.push(k);
            baseWrites.push({ tag: rec.tag, value: rec.raw, expect: undefined });
          }
          const id = a.remote?.id ?? a.base?.id;
          if (id === undefined) continue;
          const n = a.side !== 'remote' ? a.next : null;
          // A pull writes what was fetched, which may be newer than what was listed.
          const next = n !== null && fetched && needs ? { ...n, sha: fetched.sha, rv: fetched.versionId } : n;
          baseOwner.push(k);
          baseWrites.push({
            tag: this.#prefix + id,
            value: next === null ? undefined : encodeBase(this.#base(id, next, a.local?.memoryId ?? null)),
            expect: expect(id),
          });
          if (a.base !== null && a.base.id !== id) {
            baseOwner.push(k);
            baseWrites.push({ tag: this.#prefix + a.base.id, value: undefined, expect: expect(a.base.id) });
          }
        }
        if (ready.length === 0) break;
        const out = await this.#commit(ops, baseWrites, actor);
        if (out.status === 'applied') {
          for (const a of ready) this.#record(a, a.local?.versionId ?? null, undefined, recs.get(a));
          this.#progress(ready.length);
          await this.#learnLocalIds(ready);
          break;
        }
        const bad = out.status === 'base_changed' ? ready[baseOwner[out.index ?? 0] ?? 0] : ready[opOwner[out.index ?? 0] ?? 0];
        if (bad === undefined) throw new Error(`syncApply refused an unknown index: ${JSON.stringify(out)}`);
        if (out.status === 'path_conflict') this.#skip(bad, 'path-conflict', `a local memory is in the way: ${out.path}`);
        else if (out.status === 'too_large') this.#skip(bad, 'too-large', `over the local maxMemoryBytes (${out.limit})`);
        else this.#later(bad, 'the local memory changed during the sync');
        chunk = ready.filter((a) => a !== bad);
      }
    }
  }

  /** Hosted contents for the pulls: one by one, or the whole store in pages of 20 when cheaper. */
  async #fetch(actions: Action[]): Promise<Map<string, RemoteMemory | null>> {
    const ids = actions.flatMap((a) =>
      a.side === 'local' && a.remote !== null && a.ops.some((o) => o.kind === 'put') ? [a.remote.id] : [],
    );
    const out = new Map<string, RemoteMemory | null>();
    for (const a of actions) if (a.remote?.content != null) out.set(a.remote.id, a.remote);
    const missing = ids.filter((id) => !out.has(id));
    if (missing.length === 0) return out;
    // One listing with content (20 a page) when it costs fewer requests than a retrieve each.
    if (missing.length > 20 && missing.length > Math.ceil((await this.#hostedCount()) / 20)) {
      const all = await this.remote.list(true);
      const byId = new Map(all.map((r) => [r.id, r]));
      for (const id of missing) out.set(id, byId.get(id) ?? null);
      return out;
    }
    await Promise.all(missing.map(async (id) => out.set(id, await this.remote.retrieve(id))));
    return out;
  }

  /**
   * The hosted memories there are, for pricing a fetch: known, or (an incremental sync that
   * counted no base) the scope's local memories, which mirror them, plus the hosted ones changed.
   * A scope wider than the mapping only makes fetching one by one likelier.
   */
  async #hostedCount(): Promise<number> {
    if (!Number.isNaN(this.#hosted)) return this.#hosted;
    return (await native(() => this.m.usage())).memories + this.#changedHosted;
  }

  /** Pulled creations get their local memory id into the base (a later local rename is then carried). */
  async #learnLocalIds(done: Action[]): Promise<void> {
    const created = done.filter((a) => a.side === 'local' && a.next !== null && (a.local?.memoryId ?? null) === null);
    if (created.length === 0) return;
    // Only the memories and bases just written (an incremental sync reads no others).
    const paths = created.flatMap((a) => (a.side === 'local' && a.next !== null ? [a.next.lp] : []));
    const entries = new Map((await readLocal(this.m, this.s.map.dir, paths)).map((e) => [e.path, e]));
    const ids = created.flatMap((a) => (a.remote === null ? [] : [a.remote.id]));
    const rows = new Map<string, string>();
    const few = ids.length <= 256;
    const read = few ? ids.map((id) => this.#prefix + id) : [this.#prefix];
    for (const found of await Promise.all(read.map((tag) => native(() => this.m.syncBases(tag)))))
      for (const r of found) rows.set(r.tag, r.value);
    const writes: Parameters<NativeMemories['syncApply']>[1] = [];
    for (const a of created) {
      const id = a.remote?.id;
      const raw = id === undefined ? undefined : rows.get(this.#prefix + id);
      const b = raw === undefined ? null : decodeBase(raw);
      const lm = b === null ? undefined : (entries.get(b.lp)?.memoryId ?? undefined);
      if (b === null || lm == null || raw === undefined) continue;
      writes.push({ tag: this.#prefix + b.id, value: encodeBase({ ...b, lm }), expect: raw });
    }
    // Best effort: a base changed meanwhile keeps lm null, and pairing falls back to the path.
    if (writes.length > 0) await this.#commit([], writes);
  }

  /** Hosted requests, `concurrency` at a time; their answers become base records. */
  async #applyRemote(actions: Action[], expect: (id: string) => string | undefined): Promise<void> {
    const writes: Array<{ a: Action; w: Parameters<NativeMemories['syncApply']>[1][number][]; rec: PushRecord | undefined }> = [];
    const records = await this.#announcePushes(actions);
    const answeredPushes: PushRecord[] = [];
    await Promise.all(
      actions.map(async (a) => {
        if (a.side !== 'remote') return;
        // A push that resolves a conflict is announced first (see conflicts.ts).
        const intent = a.conflict === null ? null : await this.#intend(a, expect);
        const pushRec = records.get(a);
        try {
          const { w, done, answered, mismatch } = await this.#push(a, expect);
          if (mismatch !== null) this.#skip(a, 'hash-mismatch', mismatch);
          if (intent === null) {
            writes.push({ a, w, rec: pushRec });
            this.#record(done, null, answered);
          } else {
            // Its base and its resolved record now, in one commit, not with the batch after
            // every push: a kill in between is what the intent is for.
            const rec = this.#recordOf(done, null, answered, intent.tag, intent.intent);
            const mine = rec !== undefined && (await this.#commitResolved(w, rec, intent));
            if (pushRec !== undefined) answeredPushes.push(pushRec);
            this.#record(mine ? done : { ...done, conflict: null }, null, answered, mine ? rec : undefined);
          }
        } catch (e) {
          if (!(e instanceof RemoteWriteError)) throw e;
          const f = e.failure;
          // A memory above or below the path is a hosted rule no retry changes (the same path
          // taken is a create racing another, or a lost answer: the next round adopts it).
          const nested = f.kind === 'path-conflict' && f.conflictingPath !== null && nestedPaths(f.conflictingPath, a.remotePath);
          // Refused: it did not land, the intent goes. A failed precondition may be the answer to
          // a retry of a write that did land (its first answer lost): the next round tells.
          if (intent !== null && (f.kind === 'refused' || nested))
            await this.#commit([], [{ tag: intent.tag, value: undefined, expect: intent.raw }]);
          else if (intent !== null) this.#unsure.push(intent);
          // A precondition failed or a path taken may be a retry's answer to a write that landed
          // (the first answer lost): its push record stays for the next round to recognise it.
          const unsent = f.kind === 'refused' || f.kind === 'not-found' || f.kind === 'local-changed' || nested;
          if (pushRec !== undefined && unsent) answeredPushes.push(pushRec);
          if (f.kind === 'refused') this.#skip(a, 'remote-error', `the hosted store refused it (${f.status}): ${f.detail}`);
          else if (nested) this.#skip(a, 'path-conflict', `the hosted memory ${f.conflictingPath} is above or below ${a.remotePath}`);
          else if (f.kind === 'local-changed') this.#later(a, 'the local memory changed during the sync');
          else
            this.#later(
              a,
              f.kind === 'path-conflict'
                ? `the hosted path is taken (${f.conflictingPath ?? 'unknown'})`
                : `the hosted memory changed (${f.kind})`,
            );
        }
        this.#progress(1);
      }),
    );
    // The hosted side is written: record the bases, a batch per commit. A base that changed in
    // between (another process recorded the same push) is left to the next sync to compare.
    for (let i = 0; i < writes.length; i += LOCAL_CHUNK) {
      let batch = writes.slice(i, i + LOCAL_CHUNK);
      while (batch.length > 0) {
        const flat = batch.flatMap((b) => b.w);
        const out = await this.#commit([], flat);
        if (out.status === 'applied') {
          for (const b of batch) if (b.rec !== undefined) answeredPushes.push(b.rec);
          break;
        }
        const tag = flat[out.index ?? 0]?.tag;
        batch = batch.filter((b) => !b.w.some((w) => w.tag === tag));
      }
    }
    // Their answers are recorded (or the request surely never landed): the records have served.
    await this.#dropPushes(answeredPushes);
  }

  /**
   * Commits a push record for each create or update before any is sent (one commit per chunk):
   * what the hosted memory holds once it lands, so that a lost answer is recognised by content.
   */
  async #announcePushes(actions: Action[]): Promise<Map<Action, PushRecord>> {
    const out = new Map<Action, PushRecord>();
    for (const a of actions) {
      if (a.side !== 'remote' || a.op.kind === 'delete') continue;
      const op = a.op;
      const rename = op.kind === 'update' && !op.content;
      const sha = rename ? a.remote?.sha : a.local?.sha;
      if (sha === undefined) continue;
      const p = { id: op.kind === 'update' ? (a.remote?.id ?? null) : null, rp: op.remotePath ?? a.remote?.path ?? a.remotePath, sha };
      const tag = pushTag(this.#prefix, this.#run, this.#seq++);
      out.set(a, { tag, raw: encodePush(p), ...p });
    }
    const all = [...out.values()];
    for (let i = 0; i < all.length; i += LOCAL_CHUNK) {
      const res = await this.#commit(
        [],
        all.slice(i, i + LOCAL_CHUNK).map((r) => ({ tag: r.tag, value: r.raw, expect: undefined })),
      );
      if (res.status !== 'applied') throw new Error(`syncApply refused a new push record: ${JSON.stringify(res)}`);
    }
    return out;
  }

  /** Deletes push records that still hold what was read (one that changed or went is left). */
  async #dropPushes(records: PushRecord[]): Promise<void> {
    for (let i = 0; i < records.length; i += LOCAL_CHUNK) {
      let batch = records.slice(i, i + LOCAL_CHUNK);
      while (batch.length > 0) {
        const out = await this.#commit(
          [],
          batch.map((r) => ({ tag: r.tag, value: undefined, expect: r.raw })),
        );
        if (out.status === 'applied') break;
        batch = batch.filter((_, k) => k !== (out.index ?? 0));
      }
    }
  }

  /**
   * The run's sweep of push records that have nothing more to tell (pushes.ts `settled`), judged
   * on the last round's listing and the bases now: own ones read by the last round (pushes of a
   * round whose listing came before them are left for the next sync), and others' read as this
   * run started (one written since may belong to a sync still sending it).
   */
  async #sweepPushes(): Promise<void> {
    if (this.#pushes.length === 0) return;
    const rows = await native(() => this.m.syncBases(this.#prefix));
    const bases = new Map(rows.map((r) => [r.tag.slice(this.#prefix.length), r]));
    const baseOf = (id: string) => {
      const row = bases.get(id);
      return row === undefined ? null : decodeBase(row.value, row.tag);
    };
    const mine = `${this.#prefix}${PUSH_MARK}${this.#run}:`;
    const done = this.#pushes.filter((p) => (p.tag.startsWith(mine) || this.#pushesAtStart.has(p.tag)) && settled(p, this.#listed, baseOf));
    await this.#dropPushes(done);
  }

  /** One hosted request; the base writes that record its answer. */
  async #push(a: Action & { side: 'remote' }, expect: (id: string) => string | undefined) {
    const op = a.op;
    const lm = a.local?.memoryId ?? null;
    const read = async (path: string) => {
      const c = await native(() => this.m.hostGet(path));
      if (c === null) throw new RemoteWriteError({ kind: 'not-found' });
      return c;
    };
    if (op.kind === 'delete') {
      const id = a.remote?.id as string;
      await this.remote.delete(id, op.ifSha);
      return { w: [{ tag: this.#prefix + id, value: undefined, expect: expect(id) }], done: a, answered: undefined, mismatch: null };
    }
    const c = await read(op.localPath);
    const sends = op.kind === 'create' || op.content;
    const sent = sends ? sha256(c.content) : null;
    // The push record names the planned content: other bytes now are a change for the next round.
    if (sent !== null && sent !== a.local?.sha) throw new RemoteWriteError({ kind: 'local-changed' });
    const r =
      op.kind === 'create'
        ? await this.remote.create(op.remotePath, c.content)
        : await this.remote.update(
            a.remote?.id as string,
            { ...(op.content ? { content: c.content } : {}), ...(op.remotePath !== null ? { path: op.remotePath } : {}) },
            op.ifSha,
          );
    // A hosted answer whose hash is not that of the bytes sent would, as the base, make the
    // local memory look edited and pushed again on every sync: the base records the bytes'
    // hash, and the hosted memory then reads as changed there, where the pull's own check
    // stops it (see #applyChunks).
    const mismatch = sent !== null && r.sha !== sent ? `the hosted store answered hash ${r.sha} for content whose hash is ${sent}` : null;
    const base = { id: r.id, rp: r.path, lp: op.localPath, sha: sent ?? r.sha, lm, rv: r.versionId };
    const w: BaseWrites = [{ tag: this.#prefix + r.id, value: encodeBase(base), expect: expect(r.id) }];
    if (a.base !== null && a.base.id !== r.id) w.push({ tag: this.#prefix + a.base.id, value: undefined, expect: expect(a.base.id) });
    return { w, done: { ...a, remotePath: r.path }, answered: r, mismatch };
  }

  /** The intent record of a conflict-resolving push, committed before it is sent. */
  async #intend(a: Action & { side: 'remote' }, expect: (id: string) => string | undefined): Promise<ConflictRecord> {
    const conflict = this.#conflictOf(a, null) as SyncConflict;
    const baseId = a.base?.id ?? (a.remote?.id as string);
    const sha = a.op.kind === 'update' && !a.op.content ? (a.remote?.sha as string) : (a.local?.sha as string);
    const intent: Intent = {
      baseId,
      baseRaw: expect(baseId) ?? null,
      hostedId: a.op.kind === 'update' ? (a.remote?.id as string) : null,
      sha,
    };
    const rec = {
      tag: conflictTag(this.#prefix, this.#run, this.#seq++),
      raw: encodeConflict(conflict, intent, false),
      conflict,
      intent,
      resolved: false,
    };
    const out = await this.#commit([], [{ tag: rec.tag, value: rec.raw, expect: undefined }]);
    if (out.status !== 'applied') throw new Error(`syncApply refused a new conflict record: ${JSON.stringify(out)}`);
    return rec;
  }

  /**
   * A pushed conflict's base writes and its intent turned resolved, in one commit: true when
   * this run reports it. False when another sync claimed the intent first (it reports it), or
   * when the base moved on: another process recorded a push of the same resolution (the hosted
   * store accepts a write that changes nothing, so both saw success) and reports it, or it
   * synced this memory after the write landed and claims the intent, left in place for it.
   */
  async #commitResolved(w: BaseWrites, rec: ConflictRecord, intent: ConflictRecord): Promise<boolean> {
    const out = await this.#commit([], [...w, { tag: rec.tag, value: rec.raw, expect: intent.raw }]);
    if (out.status === 'base_changed' && out.index === w.length) await this.#commit([], w);
    return out.status === 'applied';
  }

  /**
   * The run's last commit: deletes its own conflict records and the carried ones, each only if it
   * still holds what this run read. A record another sync deleted first (claimed it while both
   * ran) is that sync's to report, so this one drops it: each record is reported once.
   */
  async #clearConflicts(): Promise<void> {
    let records = [...this.#own, ...this.#carried, ...this.#dropped];
    while (records.length > 0) {
      const out = await this.#commit(
        [],
        records.map((r) => ({ tag: r.tag, value: undefined, expect: r.raw })),
      );
      if (out.status === 'applied') break;
      const lost = out.status === 'base_changed' ? records[out.index ?? 0] : undefined;
      if (lost === undefined) throw new Error(`syncApply refused an unknown index: ${JSON.stringify(out)}`);
      records = records.filter((r) => r !== lost);
      const at = lost.conflict === null ? -1 : this.#report.conflicts.indexOf(lost.conflict);
      if (at >= 0) this.#report.conflicts.splice(at, 1);
    }
    for (const r of records) {
      if (this.#carried.includes(r) && r.conflict !== null) this.#report.conflicts.push({ ...r.conflict, carriedOver: true });
    }
  }

  /** Reports a carried action (and its conflict, with where the losing side is kept: `rec`'s when it was recorded). */
  #record(a: Action, localVersion: string | null, answered?: RemoteMemory, rec?: ConflictRecord): void {
    const remoteId = answered?.id ?? a.remote?.id ?? a.base?.id ?? '';
    const pushed = a.side === 'remote';
    if (a.side !== 'base') {
      if (a.change === 'deleted')
        this.#report.deleted.push({ side: pushed ? 'remote' : 'local', path: a.path, remotePath: a.remotePath, remoteId });
      else {
        const sha = pushed ? (answered?.sha ?? a.local?.sha ?? null) : (a.remote?.sha ?? null);
        (pushed ? this.#report.pushed : this.#report.pulled).push({
          path: a.path,
          remotePath: a.remotePath,
          remoteId,
          operation: a.change,
          contentSha256: sha,
        });
      }
    }
    const conflict = rec?.conflict ?? this.#conflictOf(a, localVersion, answered);
    if (conflict == null) return;
    this.#report.conflicts.push(conflict);
    if (rec !== undefined) this.#own.push(rec);
  }

  #conflictOf(a: Action, localVersion: string | null, answered?: RemoteMemory): SyncConflict | null {
    const c = a.conflict;
    if (c === null) return null;
    const remoteId = answered?.id ?? a.remote?.id ?? a.base?.id ?? '';
    let kept: SyncConflict['kept'] = null;
    if (c.kind === 'edit-edit' || c.kind === 'create-create') {
      kept =
        c.winner === 'remote' ? { side: 'local', versionId: localVersion } : { side: 'remote', memoryVersionId: a.remote?.versionId ?? '' };
    }
    return {
      kind: c.kind,
      path: a.path,
      remotePath: a.remotePath,
      remoteId,
      localSha256: c.localSha,
      remoteSha256: c.remoteSha,
      winner: c.winner,
      kept,
    };
  }

  /** `a`'s conflict as a record under a fresh tag, for the commit that resolves it; undefined when none. */
  #recordOf(
    a: Action,
    localVersion: string | null,
    answered?: RemoteMemory,
    tag?: string,
    intent?: Intent | null,
  ): ConflictRecord | undefined {
    const conflict = this.#conflictOf(a, localVersion, answered);
    if (conflict === null) return undefined;
    return {
      tag: tag ?? conflictTag(this.#prefix, this.#run, this.#seq++),
      raw: encodeConflict(conflict, intent ?? null, true),
      conflict,
      intent: intent ?? null,
      resolved: true,
    };
  }
}
