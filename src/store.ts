/** `Rabosh`: the store a host opens and owns; handlers are built over it. */

import {
  encryptionOption,
  type EncryptionOptions,
  keyBytes,
  type KeySource,
  rekeyOptions,
  type RekeyOptions,
  resolveKey,
  withKey,
} from './encryption.js';
import { InvalidArgumentError, InvalidOptionError, native, nativeSync } from './errors.js';
import { historyOption, type HistoryOptions } from './history.js';
import {
  type CheckpointInfo,
  type CompactInfo,
  type HistoryUsage,
  NativeStore,
  type NativeDurability,
  type NativeSnapshot,
  type NativeStoreOptions,
  type StoreCounters,
  type VerifyReport,
} from './native.js';
import { optionRecord, refuseUnknownKeys } from './options.js';
import type { Same } from './same-shape.js';
import { syncStore } from './sync/engine.js';
import { syncEvery, stopSyncs } from './sync/every.js';
import type { SyncEveryOptions, SyncHost, SyncOptions, SyncReport, SyncRunner } from './sync/types.js';

// The public name is a plain union, documented here; it must stay the binding's string enum.
const durabilityMatchesBinding: Same<Durability, NativeDurability> = true;
void durabilityMatchesBinding;

/**
 * When an acknowledged commit is durable.
 *
 * - `'sync'` (the default): the log is fdatasync'd before a commit is acknowledged, so every
 *   acknowledged commit survives both a killed process and a power loss or OS crash.
 * - `'buffered'`: a commit is acknowledged once it is in the OS page cache. It survives a killed
 *   process (the kernel still writes it out) but not a power loss or OS crash until
 *   `db.sync()` (or {@link Rabosh.close}) returns. Meant for bulk loads followed by one
 *   `sync()`.
 *   In a shared store (the default) other processes may read a buffered commit before it is
 *   durable; it can still be lost at power loss, exactly as in one process.
 *
 * In both modes a crash never leaves a half-applied commit: recovery keeps a prefix of whole
 * commits.
 */
export type Durability = 'sync' | 'buffered';

/** Options of {@link Rabosh.open} (and of `RaboshMemoryToolHandler.open`, which passes them on). */
export interface RaboshOptions {
  /**
   * When a commit is durable; default `'sync'`. Any other value throws `InvalidOptionError`.
   * See {@link Durability} for what each mode survives.
   */
  durability?: Durability;
  /**
   * Create the store when `dir` holds none; default `true`. With `false`, opening a missing,
   * empty or non-store directory fails instead, and nothing is written (read-only tools).
   */
  create?: boolean;
  /**
   * Record a version of every change any handler over this store makes (see docs/guide/history.md):
   * `true`, or `{ retainDays, maxVersionsPerMemory }`. History is a property of the store: once
   * turned on it is recorded in the store and every later opener records, with or without this
   * option; `false` on such a store throws `InvalidOptionError`. Omitted: the store's setting.
   */
  history?: boolean | HistoryOptions;
  /**
   * Hold the directory alone; default `false`: several processes on one machine (local
   * filesystems only) may open the store at once, every commit serialised by a cross-process
   * lock and every read caught up with the others' commits, so no process loses another's
   * update. `true` refuses to share: this open fails with `StoreLockedError` naming the holder
   * while any other handle (in any process) has the store open, and while it is open every other
   * open fails the same way.
   */
  exclusive?: boolean;
  /**
   * Shared stores: the longest, in milliseconds, any call waits for the cross-process commit
   * lock another process holds (through each of its commits) before it fails with
   * `StoreBusyError` naming the holder (having committed nothing); default 5000
   * (`DEFAULT_LOCK_TIMEOUT_MS`). It counts from the call, time queued behind this process's
   * other commands included, and starts again
   * whenever another process's commit lands. Like SQLite's busy timeout: a process
   * stopped in a debugger, a laptop asleep mid-commit, or a program holding the lock file cannot
   * freeze the others. Reads (views, listings) do not wait for it when what is durable answers
   * them. A whole number from 0 to 2147483647; anything else throws `InvalidOptionError`, and so
   * does any value on a PostgreSQL URL (which has no such lock: `client_timeout` in the URL
   * bounds its waits).
   */
  lockTimeout?: number;
  /**
   * Encrypt the store at rest (docs/guide/encryption.md): `{ key }` (32 bytes) or `{ keyProvider }`
   * (an async function resolving to 32 bytes, called once per open). A new store is created
   * encrypted; an encrypted store opened without this option fails with
   * `EncryptionKeyRequiredError`, with the wrong key with `WrongKeyError`, and a plain store
   * opened with a key with `NotEncryptedError` (migrate with `rabosh-memory encrypt`). On a
   * PostgreSQL URL, contents and metadata are sealed client-side and paths stay plain.
   */
  encryption?: EncryptionOptions;
}

/**
 * {@link Rabosh.stats}: the store's counters (documented on {@link StoreCounters}, which the
 * binding defines), and its history's size.
 */
export interface RaboshStats extends StoreCounters {
  /**
   * With `history` on: the versions of every scope and their content bytes, apart from the
   * memories (`keys` and the byte figures above include them), and when the store began recording.
   */
  history?: StoreHistoryUsage;
}

/** {@link RaboshStats.history}: the history of every scope of the store. */
export interface StoreHistoryUsage extends HistoryUsage {
  /** When the store began recording history: changes before it have no versions. */
  since: Date;
}

// What the binding reports unchanged is its own definition, with its documentation.
export type { CheckpointInfo, CompactInfo, StoreCounters, VerifyReport } from './native.js';

/**
 * A pinned, consistent read view; release it (or `using` it) to let space be reclaimed. Read
 * through it with `RaboshMemoryToolHandler.viewAt(snapshot, command)`: the same answers as
 * `view`, as of the moment the snapshot was taken.
 */
export interface Snapshot {
  /** The sequence number of the last commit this view sees. */
  readonly seq: number;
  /** Unpin; idempotent. */
  release(): void;
  /** Same as {@link Snapshot.release}, for `using snap = db.snapshot()`. */
  [Symbol.dispose](): void;
}

/** Every key {@link RaboshOptions} has: the one list any other is refused against. */
export const STORE_OPTION_KEYS = ['durability', 'create', 'exclusive', 'history', 'lockTimeout', 'encryption'] as const;
// A new field of RaboshOptions that is not listed would be refused as unknown: this fails to
// compile instead.
const storeKeysComplete: Same<(typeof STORE_OPTION_KEYS)[number], keyof RaboshOptions> = true;
void storeKeysComplete;

/**
 * Validated store options, without the key (see {@link storeKeySource}); `InvalidOptionError`
 * names the option and the value.
 */
export function storeOptions(options: RaboshOptions | undefined): NativeStoreOptions {
  const o = optionRecord(options);
  encryptionOption(o['encryption']);
  refuseUnknownKeys(o, STORE_OPTION_KEYS);
  const durability = o['durability'] ?? 'sync';
  const create = o['create'] ?? true;
  if (typeof create !== 'boolean') {
    throw new InvalidOptionError(`invalid option create: ${JSON.stringify(create) ?? String(create)} (expected true or false)`);
  }
  const exclusive = o['exclusive'] ?? false;
  if (typeof exclusive !== 'boolean') {
    throw new InvalidOptionError(`invalid option exclusive: ${JSON.stringify(exclusive) ?? String(exclusive)} (expected true or false)`);
  }
  if (durability !== 'sync' && durability !== 'buffered') {
    throw new InvalidOptionError(
      `invalid option durability: ${JSON.stringify(durability) ?? String(durability)} (expected 'sync' or 'buffered')`,
    );
  }
  // Sent only when given: a PostgreSQL URL, which has no such lock, refuses it.
  const lockTimeoutMs = o['lockTimeout'];
  if (
    lockTimeoutMs !== undefined &&
    (typeof lockTimeoutMs !== 'number' || !Number.isInteger(lockTimeoutMs) || lockTimeoutMs < 0 || lockTimeoutMs > 2 ** 31 - 1)
  ) {
    throw new InvalidOptionError(
      `invalid option lockTimeout: ${JSON.stringify(lockTimeoutMs) ?? String(lockTimeoutMs)} (expected a whole number of milliseconds from 0 to 2147483647)`,
    );
  }
  return { durability, create, exclusive, history: historyOption(o['history']), ...(lockTimeoutMs === undefined ? {} : { lockTimeoutMs }) };
}

/** How the key of `options` is got (undefined: no encryption); validated, nothing called yet. */
export function storeKeySource(options: RaboshOptions | undefined): KeySource | undefined {
  return encryptionOption(optionRecord(options)['encryption']);
}

let nativeOf: (db: Rabosh) => NativeStore;
type StoreHistory = ReturnType<NativeStore['historySettings']>;
let historyOf: (db: Rabosh) => StoreHistory;

/** The store's history settings as its open settled them (null: off); not part of the public API. */
export function storeHistory(db: Rabosh): StoreHistory {
  return historyOf(db);
}

/** Which store took each snapshot, and its native view. */
const pinned = new WeakMap<Snapshot, { db: Rabosh; snap: NativeSnapshot }>();

/** The native view of a snapshot `db` took; anything else is refused. Not part of the public API. */
export function snapshotNative(db: Rabosh, snapshot: unknown): NativeSnapshot {
  const p = typeof snapshot === 'object' && snapshot !== null ? pinned.get(snapshot as Snapshot) : undefined;
  if (p === undefined || p.db !== db) {
    throw new InvalidArgumentError('expected a snapshot taken by db.snapshot() of the store this handler uses');
  }
  return p.snap;
}

/** The handler's way to the native store; not part of the public API. */
export function storeNative(db: Rabosh): NativeStore {
  return nativeOf(db);
}

/**
 * An open store: one directory, shared with other processes that open it (or held alone with
 * `exclusive: true`) for as long as it is open. Build
 * {@link RaboshMemoryToolHandler}s over it (one per scope), or let
 * `RaboshMemoryToolHandler.open` open and own one. Methods of a closed store reject (or throw)
 * `StoreClosedError`; IO failures surface as `IoError`, and after a failed write or fsync
 * every write is refused with `PoisonedError` until the store is reopened.
 */
export class Rabosh {
  readonly #native: NativeStore;
  readonly #history: StoreHistory;
  #closing: Promise<void> | null = null;

  static {
    nativeOf = (db) => {
      if (!(db instanceof Rabosh)) throw new TypeError('expected a Rabosh store (from Rabosh.open)');
      return db.#native;
    };
    historyOf = (db) => db.#history;
  }

  private constructor(store: NativeStore) {
    this.#native = store;
    this.#history = store.historySettings();
  }

  /**
   * Open (creating if needed) the store in `dir` and take its lock: a shared one by default, so
   * other processes (and other handles in this one) may open it too; with `exclusive: true`, a
   * second open of the same directory fails with `StoreLockedError`, carrying the holder (and so
   * does this one while any other handle has it open).
   *
   * A `postgres://` or `postgresql://` URL instead of a directory opens a PostgreSQL store: the
   * same commands, strings, scopes, size cap, usage, expiry, listing and export/import, shared
   * by every process that opens the same URL (no lock; commands are SERIALIZABLE transactions,
   * retried on conflict). The schema is created or migrated on first open. Besides the server's
   * own URL parameters (`sslmode`, `sslrootcert`, `connect_timeout` …) the query may carry
   * `schema` (default `rabosh`), `pool_size` (8), `statement_timeout` (seconds, 30) and
   * `max_attempts` (64); any other parameter that is neither this one's nor the server's is
   * refused with `InvalidOptionError` naming it. Durability is the server's and the server decides
   * who connects: `durability: 'buffered'` and `exclusive: true` are refused (`InvalidOptionError`,
   * "… is not supported by PostgreSQL stores").
   * `create: false` refuses a schema that holds no store with `NotAStoreError`, creating no
   * schema and no table (a store of an older schema version is still migrated). `checkpoint`, `compact`, `verify` and `snapshot` throw
   * `UnsupportedError`; `sync` resolves at once; `stats` counts commits and values read only.
   * Connection faults are `BackendUnavailableError`s and never name the host or password.
   */
  static async open(dir: string, options?: RaboshOptions): Promise<Rabosh> {
    if (typeof dir !== 'string' || dir === '') throw new TypeError('Rabosh.open needs a directory path or a postgres:// URL');
    const opts = storeOptions(options);
    const source = storeKeySource(options);
    const key = source === undefined ? undefined : await resolveKey(source);
    return withKey(key, async (encryptionKey) => {
      const withKeyOpts = encryptionKey === undefined ? opts : { ...opts, encryptionKey };
      return new Rabosh(await native(() => NativeStore.open(dir, withKeyOpts)));
    });
  }

  /**
   * Replace the host's key of an encrypted store by `newKey` (32 bytes): the data key is
   * rewrapped, crash-safely, without rewriting data (a crash leaves the old key or the new one
   * opening the store, never neither). Other processes sharing the store keep working; their
   * next open needs the new key. A plain store rejects with `NotEncryptedError`.
   */
  async rotateKey(newKey: Uint8Array): Promise<void> {
    const key = keyBytes(newKey, 'newKey');
    await withKey(key, (k) => native(() => this.#native.rotateKey(k as Uint8Array)));
  }

  /**
   * Re-key the closed encrypted store in `dir`: every live memory is rewritten under a fresh data
   * key, wrapped by `options.newKey` (which may be the current key), and the old data key is gone
   * from the directory. Unlike {@link Rabosh.rotateKey} (a rewrap), a copy of the old `KEY` file
   * together with the old key then opens nothing the store holds (docs/encryption.md). Crash-safe:
   * a kill at any point leaves the store opening with the current key or the new one, whole. The
   * store must be closed everywhere (`StoreLockedError` otherwise); a wrong current key is
   * `WrongKeyError` and a plain store `NotEncryptedError`, writing nothing. A `postgres://` URL
   * is refused (`UnsupportedError`): its rows are re-sealed by export and import.
   */
  static async rekey(dir: string, options: RekeyOptions): Promise<void> {
    if (typeof dir !== 'string' || dir === '') throw new TypeError('Rabosh.rekey needs a store directory');
    const { source, newKey } = rekeyOptions(options);
    try {
      const key = await resolveKey(source);
      await withKey(key, (k) => rewriteStore(dir, k, newKey));
    } finally {
      newKey.fill(0);
    }
  }

  /** Whether the store is encrypted at rest. */
  get encrypted(): boolean {
    return nativeSync(() => this.#native.isEncrypted());
  }

  /**
   * Since when the store records history (every change from then on is a version), as this
   * open found it; null when it records none. Read without touching the store, unlike
   * {@link Rabosh.stats}, whose counts walk the whole key directory of a store that was not
   * listed yet.
   */
  get historySince(): Date | null {
    return this.#history === null ? null : new Date(this.#history.sinceMs);
  }

  /** True once close() was called. */
  get closed(): boolean {
    return this.#closing !== null;
  }

  /** Write a durable, openable copy of the current state into `dir` (empty or absent). */
  checkpoint(dir: string): Promise<CheckpointInfo> {
    return native(() => this.#native.checkpoint(dir));
  }

  /** Pin a consistent read view. */
  snapshot(): Snapshot {
    const snap = nativeSync(() => this.#native.snapshot());
    const release = () => snap.release();
    const view: Snapshot = { seq: snap.seq, release, [Symbol.dispose]: release };
    pinned.set(view, { db: this, snap });
    return view;
  }

  /** Counters of the work done so far. */
  stats(): RaboshStats {
    const stats: RaboshStats = nativeSync(() => this.#native.stats());
    if (this.#history === null) return stats;
    return { ...stats, history: { ...nativeSync(() => this.#native.historyStats()), since: new Date(this.#history.sinceMs) } };
  }

  /** Reclaim space held by overwritten and deleted data (explicit maintenance). */
  compact(): Promise<CompactInfo> {
    return native(() => this.#native.compact());
  }

  /** Make every commit so far durable (for `durability: 'buffered'`). */
  sync(): Promise<void>;
  /**
   * Sync a scope (or a directory of it) with an Anthropic hosted memory store through the host's
   * own `Anthropic` client (`@anthropic-ai/sdk` 0.91.0 or later): three-way by content hash
   * against the base kept in this store, conflicts reported and never lost (docs/guide/sync.md). Needs
   * a store opened with `history: true`.
   */
  sync(client: unknown, options: SyncOptions): Promise<SyncReport>;
  // biome-ignore lint/suspicious/noConfusingVoidType: the implementation of sync(): Promise<void> and sync(client, options): Promise<SyncReport>.
  sync(client?: unknown, options?: SyncOptions): Promise<void | SyncReport> {
    if (client === undefined) return native(() => this.#native.sync());
    return syncStore(this.#syncHost(), client, options as SyncOptions);
  }

  /**
   * `db.sync(client, options)` with a hosted store now and then every `ms` after each one ends, until
   * the runner is stopped or the store is closed (close waits for a running sync to end).
   */
  syncEvery(ms: number, client: unknown, options: SyncEveryOptions): SyncRunner {
    return syncEvery(this.#syncHost(), ms, client, options);
  }

  /** What the sync needs of this store (src/sync/ imports nothing of it). */
  #syncHost(): SyncHost {
    const db = this;
    return {
      key: db,
      get closed() {
        return db.closed;
      },
      native: db.#native,
      history: db.#history,
    };
  }

  /** Read every record and check every checksum; a problem rejects with `CorruptionError`. */
  verify(): Promise<VerifyReport> {
    return native(() => this.#native.verify());
  }

  /** Release the lock and every file. Idempotent; later calls fail with `StoreClosedError`. */
  close(): Promise<void> {
    this.#closing ??= stopSyncs(this).then(() => native(() => this.#native.close()));
    return this.#closing;
  }

  /**
   * Rewrites the closed store in `dir` from key `from` to key `to`, crash-safely: a kill at any
   * point leaves it opening with `from` or with `to`, never neither. Without `from` the store is
   * plain and is encrypted; without `to` it is decrypted. The library's copies of both keys are
   * zeroed afterwards.
   */
  static async reencrypt(dir: string, keys: { from?: Uint8Array; to?: Uint8Array }): Promise<void> {
    if (typeof keys !== 'object' || keys === null) throw new InvalidOptionError('invalid option keys: expected { from?, to? }');
    refuseUnknownKeys(keys as Record<string, unknown>, ['from', 'to']);
    await rewriteStore(dir, keys.from, keys.to);
  }

  /** Same as {@link Rabosh.close}, for `await using db = await Rabosh.open(dir)`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

/** The engine's crash-safe rewrite of a closed store from key `from` to key `to` (absent: plain). */
async function rewriteStore(dir: string, from: Uint8Array | undefined, to: Uint8Array | undefined): Promise<void> {
  const f = from === undefined ? undefined : keyBytes(from, 'from');
  const t = to === undefined ? undefined : keyBytes(to, 'to');
  try {
    await native(() => NativeStore.reencrypt(dir, f, t));
  } finally {
    f?.fill(0);
    t?.fill(0);
  }
}
