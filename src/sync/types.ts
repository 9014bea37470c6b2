/** The public shapes of `db.sync(client, options)` (issue 22); see docs/guide/sync.md. */

import type { Actor } from '../history.js';

/** Which side's content becomes current when both sides changed a memory differently. */
export type SyncSide = 'local' | 'remote';

/** What a conflict was. */
export type ConflictKind =
  /** Both sides changed the content (or both renamed it) differently since the last sync. */
  | 'edit-edit'
  /** Edited here, deleted in the hosted store: the edit is kept (re-created there). */
  | 'edit-delete'
  /** Deleted here, edited in the hosted store: the edit is kept (re-created here). */
  | 'delete-edit'
  /** Both sides created a memory at the same path, with different content, since the last sync. */
  | 'create-create';

/** A conflict as `onConflict` sees it (before it is resolved). */
export interface SyncConflictInfo {
  /** Both edited (`edit-edit`) or both created the path (`create-create`). */
  kind: 'edit-edit' | 'create-create';
  /** The local path (under `/memories/<prefix>`). */
  path: string;
  /** The hosted path. */
  remotePath: string;
  /** The hosted memory id (`mem_…`). */
  remoteId: string;
  /** The local content's hash. */
  localSha256: string;
  /** The hosted content's hash. */
  remoteSha256: string;
  /** The last synced hash; null for `create-create`. */
  baseSha256: string | null;
}

/** Where the side that lost a conflict is kept, so nothing is lost. */
export type KeptVersion =
  /** A local version (revert with `handler.revert(path, versionId)`). */
  | {
      /** Kept locally. */
      side: 'local';
      /** The local version holding it. */
      versionId: string | null;
    }
  /** A hosted memory version (`memver_…`, readable with `memoryVersions.retrieve`). */
  | {
      /** Kept in the hosted store. */
      side: 'remote';
      /** The hosted version holding it. */
      memoryVersionId: string;
    };

/** One conflict and how it was resolved. */
export interface SyncConflict {
  /** What conflicted. */
  kind: ConflictKind;
  /** The local path. */
  path: string;
  /** The hosted path. */
  remotePath: string;
  /** The hosted memory id (`mem_…`). */
  remoteId: string;
  /** The local content's hash; null when it was deleted here. */
  localSha256: string | null;
  /** The hosted content's hash; null when it was deleted there. */
  remoteSha256: string | null;
  /** Whose content is current now. */
  winner: SyncSide;
  /** Where the other side's content is kept; null when there was none (a deletion lost). */
  kept: KeptVersion | null;
  /**
   * True when an earlier sync resolved this conflict but never returned its report (it was
   * killed, or it failed after resolving it); this sync reports it once in its place. Absent
   * for the conflicts this sync resolved itself.
   */
  carriedOver?: true;
}

/** One memory carried across. */
export interface SyncChange {
  /** The local path after the change. */
  path: string;
  /** The hosted path after the change. */
  remotePath: string;
  /** The hosted memory id (`mem_…`). */
  remoteId: string;
  /** What the change did on the side it was carried to. */
  operation: 'created' | 'modified' | 'renamed' | 'deleted';
  /** The content's hash after the change; null for a deletion. */
  contentSha256: string | null;
}

/** Why a memory was not carried across this time. */
export type SkipReason =
  /** The hosted rules refuse the path (segments, bytes, characters, NFC) or it maps outside. */
  | 'path-rules'
  /** Larger than the hosted 100 kB (102,400 bytes) or the local `maxMemoryBytes`. */
  | 'too-large'
  /** A memory is an ancestor or descendant of the path on the side it would be written to. */
  | 'path-conflict'
  /** More deletions than the cap allow in one sync: held for the next one. */
  | 'delete-cap'
  /** One side holds no memory at all while the base knows several: not read as a mass delete. */
  | 'empty-side'
  /** `deletes: false`: the deletion is not carried across. */
  | 'deletes-off'
  /** The other side kept changing under this sync; the next sync takes it up. */
  | 'changed-during-sync'
  /** The hosted store refused the request. */
  | 'remote-error'
  /**
   * The hosted store states a content hash that is not the hash of the content it holds (or was
   * sent): not carried until it does, rather than carried back and forth on every sync.
   */
  | 'hash-mismatch';

/** One memory not carried across, and why. */
export interface SyncSkip {
  /** The local path (or where it would be). */
  path: string;
  /** The hosted path (or where it would be); null when it has none. */
  remotePath: string | null;
  /** Which side holds what was not carried. */
  side: SyncSide;
  /** Why, as a stable word. */
  reason: SkipReason;
  /** Why, for a person. */
  detail: string;
}

/** One deletion carried across. */
export interface SyncDeletion {
  /** Where this sync deleted the memory (the other side had deleted it). */
  side: SyncSide;
  /** The local path. */
  path: string;
  /** The hosted path. */
  remotePath: string;
  /** The hosted memory id (`mem_…`). */
  remoteId: string;
}

/** What a sync did. */
export interface SyncReport {
  /** The hosted store synced with. */
  memoryStoreId: string;
  /** No sync of this store into this prefix had completed before. */
  firstSync: boolean;
  /** Local changes written to the hosted store (deletions are in `deleted`). */
  pushed: SyncChange[];
  /** Hosted changes written locally (deletions are in `deleted`). */
  pulled: SyncChange[];
  /** Deletions carried across: `side` is where the memory was deleted by this sync. */
  deleted: SyncDeletion[];
  /** Every conflict met, how it was resolved and where the losing side is kept. */
  conflicts: SyncConflict[];
  /** What was not carried across, and why. */
  skipped: SyncSkip[];
  /** HTTP requests sent to the hosted store, retries included. */
  requests: number;
  /** Plan-and-apply rounds (a round after the first only when something changed under it). */
  rounds: number;
  /**
   * `incremental`: every round read only what changed since the last sync (the local change
   * feed, the hosted versions listing); `full`: a round read both sides whole.
   */
  mode: 'full' | 'incremental';
}

/** `incremental` option: read only what changed since the last sync, with a full sync now and then. */
export interface IncrementalOptions {
  /** A full sync after this many incremental ones in a row (default 1,000). */
  maxSyncs?: number;
  /** A full sync when the last one is older than this (default 24 hours). */
  maxAgeMs?: number;
}

/** `deletes` option: carry deletions across (default true), with a cap per sync and side. */
export interface DeleteOptions {
  /** Most deletions carried per side in one sync; default max(10, a quarter of the synced memories). */
  max?: number;
  /** Carry deletions even when one side holds no memory at all (default false: refuse). */
  allowEmptySide?: boolean;
}

/** How a conflict is resolved: a side, or a function choosing one. */
export type ConflictPolicy = SyncSide | ((conflict: SyncConflictInfo) => SyncSide | Promise<SyncSide>);

/** Options of `db.sync(client, options)`. */
export interface SyncOptions {
  /** The hosted store (`memstore_…`). */
  memoryStoreId: string;
  /** The local scope (default `'default'`). */
  scope?: string;
  /** Local directory below `/memories` the hosted store maps onto (default: `/memories` itself). */
  prefix?: string;
  /** Carry deletions across (default true); false keeps them to their side. */
  deletes?: boolean | DeleteOptions;
  /** Default `'remote'`: the hosted content becomes current, the local edit stays a local version. */
  onConflict?: ConflictPolicy;
  /** Plan only: report what would happen, write nothing on either side. */
  dryRun?: boolean;
  /** Requests in flight at once (default 8). */
  concurrency?: number;
  /** Attempts per request on 429, 5xx and lost responses (default 6). */
  maxAttempts?: number;
  /** Told how far the sync is: `done` of `total` planned changes, and whether it is the first sync. */
  onProgress?: (progress: { done: number; total: number; firstSync: boolean }) => void;
  /** The actor local versions of pulled changes name (default `{ type: 'memory_store', id: memoryStoreId }`). */
  actor?: Actor;
  /**
   * Record each pulled change with the hosted version's author (`created_by`: `{ type:
   * 'session_actor', id: 'sesn_…' }`, `api_actor`, `user_actor`, `service_account_actor`) instead
   * of `actor`: one more request per pulled memory. Default false.
   */
  hostedActors?: boolean;
  /**
   * Default true: a sync after a clean one reads only what changed since (the local change feed,
   * the hosted versions written since), falling back to a full sync when that cannot be trusted;
   * false: every sync reads both sides whole.
   */
  incremental?: boolean | IncrementalOptions;
}

/** `db.syncEvery(ms, client, options)`: a sync now and every `ms` after the previous one ends. */
export interface SyncEveryOptions extends Omit<SyncOptions, 'dryRun' | 'onProgress'> {
  /** Each completed sync's report. */
  onReport?: (report: SyncReport) => void;
  /** A sync that failed (the next one still runs). */
  onError?: (error: unknown) => void;
}

/** What `syncEvery` returns. */
export interface SyncRunner {
  /** Stops: no sync starts after this; resolves once a running one has finished. Idempotent. */
  stop(): Promise<void>;
}

/**
 * What a sync needs of the store that runs it; `Rabosh` hands itself over as this, so the sync
 * never imports the store (which imports the sync).
 */
export interface SyncHost {
  /** Identity of the store: one set of runs and loops per store. */
  readonly key: object;
  readonly closed: boolean;
  readonly native: import('../native.js').NativeStore;
  /** The store's history settings (null: it records none). */
  readonly history: unknown;
}
