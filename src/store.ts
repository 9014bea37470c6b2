/** `Rabosh`: the store a host opens and owns; handlers are built over it. */

import { InvalidOptionError, native, nativeSync } from './errors.js';
import { NativeStore } from './native.js';

export type Durability = 'sync' | 'buffered';

export interface RaboshOptions {
  /** `sync` (default): every commit is fsynced before it is acknowledged. `buffered`: call sync(). */
  durability?: Durability;
}

export interface RaboshStats {
  commits: number;
  fsyncs: number;
  /** Values read from disk ("documents read"); metadata reads do not count. */
  valuesRead: number;
  bytesWritten: number;
  liveBytes: number;
  deadBytes: number;
  files: number;
  keys: number;
  openSnapshots: number;
  compactions: number;
  seq: number;
}

export interface CheckpointInfo {
  /** The sequence number of the last commit the checkpoint holds. */
  seq: number;
  /** Every data file was hard-linked rather than copied. */
  hardLinked: boolean;
}

export interface CompactInfo {
  bytesBefore: number;
  bytesAfter: number;
}

export interface VerifyReport {
  files: number;
  records: number;
  keys: number;
}

/** A pinned, consistent read view; release it (or `using` it) to let space be reclaimed. */
export interface Snapshot {
  /** The sequence number of the last commit this view sees. */
  readonly seq: number;
  /** Unpin; idempotent. */
  release(): void;
  [Symbol.dispose](): void;
}

export const STORE_OPTION_KEYS = ['durability'] as const;

/** Validated store options; `InvalidOptionError` names the option and the value. */
export function storeOptions(options: RaboshOptions | undefined): { durability: Durability } {
  const durability = options?.durability ?? 'sync';
  if (durability !== 'sync' && durability !== 'buffered') {
    throw new InvalidOptionError(
      `invalid option durability: ${JSON.stringify(durability) ?? String(durability)} (expected 'sync' or 'buffered')`,
    );
  }
  return { durability };
}

let nativeOf: (db: Rabosh) => NativeStore;

/** The handler's way to the native store; not part of the public API. */
export function storeNative(db: Rabosh): NativeStore {
  return nativeOf(db);
}

export class Rabosh {
  readonly #native: NativeStore;
  #closing: Promise<void> | null = null;

  static {
    nativeOf = (db) => {
      if (!(db instanceof Rabosh)) throw new TypeError('expected a Rabosh store (from Rabosh.open)');
      return db.#native;
    };
  }

  private constructor(store: NativeStore) {
    this.#native = store;
  }

  /**
   * Open (creating if needed) the store in `dir` and take its lock. A second open of the same
   * directory fails with `StoreLockedError`, carrying the holder.
   */
  static async open(dir: string, options?: RaboshOptions): Promise<Rabosh> {
    if (typeof dir !== 'string' || dir === '') throw new TypeError('Rabosh.open needs a directory path');
    const opts = storeOptions(options);
    return new Rabosh(await native(() => NativeStore.open(dir, opts)));
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
    return { seq: snap.seq, release, [Symbol.dispose]: release };
  }

  /** Counters of the work done so far. */
  stats(): RaboshStats {
    return nativeSync(() => this.#native.stats());
  }

  /** Reclaim space held by overwritten and deleted data (explicit maintenance). */
  compact(): Promise<CompactInfo> {
    return native(() => this.#native.compact());
  }

  /** Make every commit so far durable (for `durability: 'buffered'`). */
  sync(): Promise<void> {
    return native(() => this.#native.sync());
  }

  /** Read every record and check every checksum; a problem rejects with `CorruptionError`. */
  verify(): Promise<VerifyReport> {
    return native(() => this.#native.verify());
  }

  /** Release the lock and every file. Idempotent; later calls fail with `StoreClosedError`. */
  close(): Promise<void> {
    this.#closing ??= native(() => this.#native.close());
    return this.#closing;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
