/**
 * `RaboshMemoryToolHandler`: the six commands as the model sees them. It normalises paths,
 * asks the store what happened, and words the answer; the store decides everything else.
 */

import type { MemoryToolHandlers } from '@anthropic-ai/sdk/helpers/beta/memory';
import type {
  BetaMemoryTool20250818CreateCommand,
  BetaMemoryTool20250818DeleteCommand,
  BetaMemoryTool20250818InsertCommand,
  BetaMemoryTool20250818RenameCommand,
  BetaMemoryTool20250818StrReplaceCommand,
  BetaMemoryTool20250818ViewCommand,
} from '@anthropic-ai/sdk/resources/beta';

import { childrenOf, type DirectoryPage, type ExportStreamOptions, type PageOptions, streamExport } from './browse.js';
import { changes, type ChangesOptions, type ChangesPage } from './changes.js';
import { exportFrom, importInto, type ExportedMemory, type ImportOptions, type ImportResult, type MemoryFile } from './bulk.js';
import { StoreClosedError, native, nativeSync } from './errors.js';
import * as H from './history.js';
import { Limit } from './limit.js';
import { DEFAULT_MAX_MEMORY_BYTES, DEFAULT_VIEW_MAX_CHARS } from './limits.js';
import { NativeMemories, type ScopeUsage } from './native.js';
import { pageFrom, type ListOptions, type MemoryPage } from './listing-page.js';
import { optionRecord, refuse, refuseUnknownKeys } from './options.js';
import { MemoryPath } from './path.js';
import { viewRange, viewed } from './view-answer.js';
import { Rabosh, STORE_OPTION_KEYS, snapshotNative, storeHistory, storeNative, type RaboshOptions, type Snapshot } from './store.js';
import * as S from './strings.js';
import type { ToolOutput } from './tool-output.js';

/**
 * Options of a {@link RaboshMemoryToolHandler}. Every field is optional; an unknown key, a value of
 * the wrong type or out of range throws `InvalidOptionError` naming the option and the value.
 */
export interface MemoryToolOptions {
  /** Key prefix separating namespaces in one store, `[A-Za-z0-9_.-]{1,64}`; not a security boundary. */
  scope?: string;
  /** Cap on one memory in UTF-8 bytes (create, str_replace, insert). Default 1 MiB. */
  maxMemoryBytes?: number;
  /** Cap on a rendered file view in UTF-16 code units, applied after view_range. Default 16,000. */
  viewMaxChars?: number;
  /** `create` on an existing memory replaces it instead of refusing. Default false. */
  createOverwrites?: boolean;
  /** `view` of a memory records accessedAt (every such view becomes a commit). Default false. */
  trackAccess?: boolean;
  /**
   * Answer directory views from the aggregated listing index: the same answers, at a cost bounded
   * by what the view prints instead of by everything under the viewed directory.
   *
   * Default true, from the benchmark (docs/performance.md; 50,000 memories, same machine, same run): a
   * root view of a 500-directory tree takes 0.021 ms with the index against 6.8 ms without, and
   * flat listings are 1.4–2.1× faster; creates and edits cost the same either way. The price is
   * about 30 bytes of memory per memory (a memory with nothing below it is a 16-byte entry in its
   * directory's table plus its name) and a one-time build at the first directory view after open
   * (off the calling thread). Turn it off for very large stores on memory-tight hosts that rarely
   * list.
   */
  listingIndex?: boolean;
  /** Who this handler's changes are recorded as, in version history: e.g. `{ type: 'session', id }`. */
  actor?: H.Actor;
}

export type { ToolOutput } from './tool-output.js';

/**
 * What {@link RaboshMemoryToolHandler.usage} reports for the handler's scope: its memories
 * (documented on {@link ScopeUsage}, which the binding defines) and its history's size.
 */
export interface MemoryUsage extends ScopeUsage {
  /** With history on (a store opened with `history`): the versions kept, apart from the memories. */
  history?: H.HistoryUsage;
}

export type { ScopeUsage } from './native.js';

const HANDLER_OPTION_KEYS = [
  'scope',
  'maxMemoryBytes',
  'viewMaxChars',
  'createOverwrites',
  'trackAccess',
  'listingIndex',
  'actor',
] as const;

function positiveInteger(option: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
    refuse(option, value, 'must be a positive integer');
  }
  return value;
}

function flag(option: string, value: unknown, byDefault = false): boolean {
  if (value === undefined) return byDefault;
  if (typeof value !== 'boolean') refuse(option, value, 'must be a boolean');
  return value;
}

interface Settings {
  scope: string;
  maxMemoryBytes: number;
  viewMaxChars: number;
  createOverwrites: boolean;
  trackAccess: boolean;
  listingIndex: boolean;
  actor: H.Actor | undefined;
}

/** Types and ranges here; the scope pattern is checked by the store, which owns the key layout. */
function settings(options: unknown, extraKeys: readonly string[] = []): Settings {
  const o = optionRecord(options);
  if (o['history'] !== undefined && !extraKeys.includes('history')) {
    refuse('history', o['history'], 'history is a store option: Rabosh.open(dir, { history: true })');
  }
  refuseUnknownKeys(o, [...HANDLER_OPTION_KEYS, ...extraKeys]);
  const scope = o['scope'] ?? 'default';
  if (typeof scope !== 'string') refuse('scope', scope, 'must be a string matching [A-Za-z0-9_.-]{1,64}');
  return {
    scope,
    maxMemoryBytes: positiveInteger('maxMemoryBytes', o['maxMemoryBytes'], DEFAULT_MAX_MEMORY_BYTES),
    viewMaxChars: positiveInteger('viewMaxChars', o['viewMaxChars'], DEFAULT_VIEW_MAX_CHARS),
    createOverwrites: flag('createOverwrites', o['createOverwrites']),
    trackAccess: flag('trackAccess', o['trackAccess']),
    listingIndex: flag('listingIndex', o['listingIndex'], true),
    actor: H.actorOption(o['actor']),
  };
}

/** A text field of model input: anything but a string reads as the empty string (contract §1). */
const text = (v: unknown): string => (typeof v === 'string' ? v : '');

function safeString(v: unknown): string {
  try {
    return String(v);
  } catch {
    return Object.prototype.toString.call(v);
  }
}

const ok = (text: string): ToolOutput => ({ text, isError: false });
const fail = (text: string): ToolOutput => ({ text, isError: true });

type Input = Record<string, unknown>;

/*
 * Where a view runs. Measured through the binding (log-structured engine, page cache warm,
 * 2-core box under load; median of 7 rounds of 1,000 views, 20 for the root), calling thread
 * against libuv pool:
 *   file view                       2.5 us  vs  31-123 us  (the pool hop dominates)
 *   root listing, 10k, index on      70 us  vs  362 us
 *   root listing, 10k, index off     24 ms  vs  21 ms      (the scan grows with the store)
 * So a view runs on the calling thread only when its work is bounded and already in memory: a
 * memory of at most 64 KiB, or a listing of at most 8,192 memories (16,384 lines as the index
 * bounds them) from a listing index already built, and no commit (trackAccess off). Issue 24,
 * 5,000 × 64 B flat directory, release addon, median of 300 views: 0.15 ms on the pool against
 * 0.14 ms on the calling thread under Bun, 0.22 against 0.20 ms under Node 24 (the listing's own
 * work dominates either way; the bound moved from 1,024 lines so the hop is not paid on top).
 * Everything else — a larger memory, a scan, the first view that builds the index — runs on the
 * pool (viewIfCheap answers null), at most POOL_VIEWS at a time, so a burst of large views holds
 * and formats a bounded amount at once.
 */
const POOL_VIEWS = 2;

/**
 * An `old_str` holding an unpaired surrogate, which stored (UTF-8) text can never contain. With
 * the `u` flag a surrogate class matches only an unpaired one (a pair is one code point).
 */
const cannotMatch = (s: string): boolean => /[\uD800-\uDFFF]/u.test(s);

/**
 * The memory tool's six commands (`view`, `create`, `str_replace`, `insert`, `delete`, `rename`)
 * over one scope of a {@link Rabosh} store, answering with the contract's strings.
 *
 * Hand it to {@link memoryTool} for the SDK's tool runner, call {@link RaboshMemoryToolHandler.execute}
 * with raw tool input in a hand-driven loop (see {@link memoryResult}), or pass it where the SDK
 * expects `MemoryToolHandlers`. Every write command is one atomic commit, durable before it
 * returns (per the store's {@link Durability}). Outcomes a model can cause (a missing path, no
 * match, a bad line number …) are answers, never exceptions; only faults reject with a
 * `RaboshError` subclass.
 *
 * @group Start here
 */
export class RaboshMemoryToolHandler implements MemoryToolHandlers {
  readonly #db: Rabosh;
  #owned: boolean;
  readonly #memories: NativeMemories;
  readonly #viewMaxChars: number;
  readonly #poolViews = new Limit(POOL_VIEWS);
  readonly #history: boolean;
  #closing: Promise<void> | null = null;

  /**
   * A handler over a store the host opened (and keeps owning: closing the handler leaves the
   * store open). Invalid options throw `InvalidOptionError` naming the option and the value.
   */
  constructor(db: Rabosh, options?: MemoryToolOptions) {
    const s = settings(options);
    this.#db = db;
    this.#owned = false;
    const store = storeNative(db);
    this.#memories = nativeSync(
      () =>
        new NativeMemories(store, {
          scope: s.scope,
          maxMemoryBytes: s.maxMemoryBytes,
          createOverwrites: s.createOverwrites,
          trackAccess: s.trackAccess,
          listingIndex: s.listingIndex,
          actor: s.actor,
        }),
    );
    this.#viewMaxChars = s.viewMaxChars;
    this.#history = storeHistory(db) !== null;
  }

  /** Opens `dir`, owns the store, and closes it with the handler. */
  static async open(dir: string, options?: MemoryToolOptions & RaboshOptions): Promise<RaboshMemoryToolHandler> {
    settings(options, STORE_OPTION_KEYS); // refuse bad options before taking the lock
    const { durability, create, exclusive, history, lockTimeout, encryption, ...handlerOptions } = options ?? {};
    const db = await Rabosh.open(dir, {
      durability,
      create,
      exclusive,
      history,
      ...(lockTimeout === undefined ? {} : { lockTimeout }),
      ...(encryption === undefined ? {} : { encryption }),
    });
    try {
      const h = new RaboshMemoryToolHandler(db, handlerOptions);
      h.#owned = true;
      return h;
    } catch (e) {
      await db.close();
      throw e;
    }
  }

  // ---- the SDK's MemoryToolHandlers shape: the documented text, never a throw for outcomes --

  /**
   * `view`: a memory's numbered lines ("Here's the content of {path} with line numbers:",
   * honouring `view_range`, cut at `viewMaxChars` with a "[Truncated: …]" note), or a directory
   * listing two levels deep with sizes. Failure outcomes: "The path {path} does not exist.
   * Please provide a valid path." (also for a path that does not normalise) and "File {path}
   * exceeds maximum line limit of 999,999 lines.".
   *
   * Resolves to the text alone and never throws for an expected outcome (use `execute` to learn
   * whether it was a failure); rejects only for faults (`StoreClosedError`, `IoError` …).
   */
  async view(command: BetaMemoryTool20250818ViewCommand): Promise<string> {
    return (await this.#view(asInput(command))).text;
  }

  /**
   * `create`: writes `file_text` at `path` → "File created successfully at: {path}". Failure
   * outcomes: "Error: File {path} already exists" (an existing memory unless `createOverwrites`,
   * the root, or a path that does not normalise) and "Error: File {path} exceeds the maximum
   * memory file size of {n} bytes" past `maxMemoryBytes`.
   *
   * Resolves to the text alone and never throws for an expected outcome (use `execute` to learn
   * whether it was a failure); rejects only for faults (`StoreClosedError`, `IoError` …).
   */
  async create(command: BetaMemoryTool20250818CreateCommand): Promise<string> {
    return (await this.#create(asInput(command))).text;
  }

  /**
   * `str_replace`: replaces the single occurrence of `old_str` with `new_str` → "The memory file
   * has been edited. Here is the snippet …" with the changed lines. Failure outcomes: "Error: The
   * path {path} does not exist. Please provide a valid path.", "No replacement was performed,
   * old_str … did not appear verbatim in {path}.", "No replacement was performed. Multiple
   * occurrences of old_str … in lines: …", and the size-limit string of `create`.
   *
   * Resolves to the text alone and never throws for an expected outcome (use `execute` to learn
   * whether it was a failure); rejects only for faults (`StoreClosedError`, `IoError` …).
   */
  async str_replace(command: BetaMemoryTool20250818StrReplaceCommand): Promise<string> {
    return (await this.#strReplace(asInput(command))).text;
  }

  /**
   * `insert`: inserts `insert_text` after line `insert_line` (0 = at the top) → "The file {path}
   * has been edited.". Failure outcomes: "Error: The path {path} does not exist", "Error: Invalid
   * `insert_line` parameter: … It should be within the range of lines of the file: [0, {count}]"
   * (also for a non-integer `insert_line`), and the size-limit string of `create`.
   *
   * Resolves to the text alone and never throws for an expected outcome (use `execute` to learn
   * whether it was a failure); rejects only for faults (`StoreClosedError`, `IoError` …).
   */
  async insert(command: BetaMemoryTool20250818InsertCommand): Promise<string> {
    return (await this.#insert(asInput(command))).text;
  }

  /**
   * `delete`: removes the memory at `path` and every memory under it, in one commit →
   * "Successfully deleted {path}". Failure outcomes: "Error: The path {path} does not exist" and
   * "Error: Cannot delete the /memories directory itself". Never compacts, so a snapshot or
   * checkpoint taken before still holds what was deleted.
   *
   * Resolves to the text alone and never throws for an expected outcome (use `execute` to learn
   * whether it was a failure); rejects only for faults (`StoreClosedError`, `IoError` …).
   */
  async delete(command: BetaMemoryTool20250818DeleteCommand): Promise<string> {
    return (await this.#delete(asInput(command))).text;
  }

  /**
   * `rename`: moves the memory at `old_path` and everything under it to `new_path`, in one commit
   * → "Successfully renamed {old_path} to {new_path}". Failure outcomes: "Error: The path
   * {old_path} does not exist", "Error: The destination {new_path} already exists", "Error:
   * Cannot rename the /memories directory itself" and "Error: Cannot rename {old_path} to
   * {new_path}, which is inside it".
   *
   * Resolves to the text alone and never throws for an expected outcome (use `execute` to learn
   * whether it was a failure); rejects only for faults (`StoreClosedError`, `IoError` …).
   */
  async rename(command: BetaMemoryTool20250818RenameCommand): Promise<string> {
    return (await this.#rename(asInput(command))).text;
  }

  /**
   * Runs raw, model-generated tool input: `isError` is true for every failure outcome. Rejects
   * only for faults (closed store, IO, corruption …).
   */
  async execute(input: unknown): Promise<ToolOutput> {
    this.#assertOpen();
    const command = typeof input === 'object' && input !== null ? (input as Input)['command'] : undefined;
    const i = input as Input;
    switch (command) {
      case 'view':
        return this.#view(i);
      case 'create':
        return this.#create(i);
      case 'str_replace':
        return this.#strReplace(i);
      case 'insert':
        return this.#insert(i);
      case 'delete':
        return this.#delete(i);
      case 'rename':
        return this.#rename(i);
      default:
        return fail(S.unknownCommand(safeString(command)));
    }
  }

  /**
   * `view` as of `snapshot` (from `db.snapshot()` of this handler's store): the same strings as
   * {@link RaboshMemoryToolHandler.view} would have answered when the snapshot was taken. Never
   * records access. A snapshot of another store, or one already released, rejects with
   * `InvalidArgumentError`.
   */
  async viewAt(snapshot: Snapshot, command: unknown): Promise<ToolOutput> {
    this.#assertOpen();
    const snap = snapshotNative(this.#db, snapshot);
    const input = asInput(command);
    const raw = text(input['path']);
    const path = MemoryPath.normalise(raw);
    if (path === null) return fail(S.viewNotFound(raw));
    const range = viewRange(input['view_range']);
    return this.#poolViews.run(async () =>
      viewed(path, await this.#outcome(() => this.#memories.viewAt(snap, path, range, this.#viewMaxChars))),
    );
  }

  /** How many memories the scope holds and their total content bytes (reported, not enforced). */
  async usage(): Promise<MemoryUsage> {
    this.#assertOpen();
    const usage: MemoryUsage = await native(() => this.#memories.usage());
    return this.#history ? { ...usage, history: await H.historyUsage(this.#memories) } : usage;
  }

  /**
   * Deletes every memory of the scope last updated (or accessed, with trackAccess) before
   * `instant`, in one commit, then compacts. Returns how many were deleted.
   *
   * If compaction fails (e.g. the disk is too full to rewrite live data) after the deletions
   * committed, rejects with an `IoError` whose message says how many memories were expired and
   * that reclaiming their space failed, with that count as its `expired` property. The deletions stand either way: retry `store.compact()` to get the space back,
   * not the expiry.
   */
  async expireBefore(instant: Date): Promise<number> {
    this.#assertOpen();
    const ms = instant instanceof Date ? instant.getTime() : NaN;
    if (!Number.isFinite(ms)) throw new TypeError(`expireBefore needs a valid Date, got ${safeString(instant)}`);
    return native(() => this.#memories.expireBefore(ms));
  }

  /** Every memory of the scope, hidden ones included, read at one snapshot (for backups and tools). */
  async exportMemories(): Promise<ExportedMemory[]> {
    this.#assertOpen();
    return exportFrom(this.#memories);
  }

  /**
   * The same memories as {@link RaboshMemoryToolHandler.exportMemories}, in path order, read a
   * page at a time as the loop asks for them: memory holds one page, not the whole scope. A
   * directory store pins one snapshot for the whole loop (released when it ends or breaks), so
   * every memory comes from one state; PostgreSQL, which has no snapshots, reads each page from
   * the newest state.
   */
  exportStream(options?: ExportStreamOptions): AsyncGenerator<ExportedMemory> {
    this.#assertOpen();
    return streamExport(this.#db, this.#memories, options);
  }

  /**
   * The names directly under the directory `dir` (hidden ones included), a page at a time in
   * byte order, each with the size of the memory at that name and the count and bytes of what
   * lies below it: a tree to show one directory at a time. Reads metadata only, never content;
   * the cost grows with what lies below `dir`, the answer with `limit`. A path with nothing below
   * it answers an empty page.
   */
  children(dir: string, options?: PageOptions): Promise<DirectoryPage> {
    this.#assertOpen();
    return childrenOf(this.#memories, dir, options);
  }

  /**
   * One page of the scope's memories (hidden ones included) with their sizes, read from their
   * metadata at one snapshot without reading any content: for listing a scope too large to
   * export, or (with `contains`) searching it by path, compared in lower case. Pages follow the
   * UTF-8 byte order of the paths; pass a page's `next` as `after` for the one that follows
   * (null: that was the last). A memory written or removed between two pages moves no other
   * memory to another page. A `limit` outside 1 to 10,000 (default 1,000), an `after` that is
   * not a normalised memory path or a `contains` that is not a string rejects with
   * `InvalidArgumentError`; an unknown option with `InvalidOptionError`.
   */
  async listMemories(options?: ListOptions): Promise<MemoryPage> {
    this.#assertOpen();
    return pageFrom(this.#memories, options);
  }

  /**
   * Writes `files` into the scope in ONE commit, or nothing: a path that does not normalise, a
   * repeated path, one over `maxMemoryBytes`, or (without `overwrite`) an existing memory
   * rejects with `InvalidArgumentError` naming it.
   */
  async importMemories(files: readonly MemoryFile[], options?: ImportOptions): Promise<ImportResult> {
    this.#assertOpen();
    return importInto(this.#memories, files, options);
  }

  /**
   * The paths of the scope that changed after `options.since`, oldest first, each once with its
   * latest change, and the cursor to read on from: what a watcher polls instead of reading every
   * memory (docs/guide/changes.md). Reads no content. Resumable across reopen and across
   * processes; a cursor the feed can no longer answer for comes back with `reset: true`.
   */
  changes(options?: ChangesOptions): Promise<ChangesPage> {
    this.#assertOpen();
    return changes(this.#memories, options);
  }

  // ---- version history and host edits (docs/guide/history.md; decided in src/history.ts) -----------

  /** Recorded versions matching `query`, newest first, one page (`nextCursor` for the next). */
  versions(query?: H.VersionQuery): Promise<H.VersionPage> {
    this.#assertOpen();
    return H.versions(this.#memories, query);
  }

  /** One version with its content (null once redacted); null for an unknown id. */
  version(id: string): Promise<H.MemoryVersionWithContent | null> {
    this.#assertOpen();
    return H.versionById(this.#memories, id);
  }

  /** Writes version `versionId`'s content back at `path`, as a new version. */
  revert(path: string, versionId: string): Promise<H.RevertResult> {
    this.#assertOpen();
    return H.revert(this.#memories, path, versionId);
  }

  /** Forgets a version's content, path, hash and size for good (then compacts); the row stays. */
  redact(versionId: string): Promise<H.MemoryVersion> {
    this.#assertOpen();
    return H.redact(this.#memories, versionId);
  }

  /** A read-only view of the scope as history recorded it at `when`. */
  at(when: Date): Promise<H.HistoricView> {
    this.#assertOpen();
    return H.at(this.#memories, when, this.#viewMaxChars);
  }

  /** Host read of a memory with its content hash (for `ifMatch`). */
  get(path: string): Promise<H.HostMemory | null> {
    this.#assertOpen();
    return H.get(this.#memories, path);
  }

  /** Host write; a stale `ifMatch` or `ifNoneMatch: '*'` on an existing memory throws `PreconditionFailedError`. */
  put(path: string, content: string, options?: H.PutOptions): Promise<H.PutResult> {
    this.#assertOpen();
    return H.put(this.#memories, path, content, options);
  }

  /** Host removal of one memory; a stale `ifMatch` throws `PreconditionFailedError`. */
  remove(path: string, options?: { ifMatch?: string }): Promise<H.RemoveResult> {
    this.#assertOpen();
    return H.remove(this.#memories, path, options);
  }

  /** How many versions the scope holds and their content bytes (apart from `usage()`). */
  historyUsage(): Promise<H.HistoryUsage> {
    this.#assertOpen();
    return H.historyUsage(this.#memories);
  }

  /** Drops versions past the store's retention now, then compacts; how many were dropped. */
  pruneHistory(): Promise<number> {
    this.#assertOpen();
    return H.pruneHistory(this.#memories);
  }

  /** Closes the handler (and its store, when opened by `open`). Idempotent. */
  close(): Promise<void> {
    this.#closing ??= this.#owned ? this.#db.close() : Promise.resolve();
    return this.#closing;
  }

  /** Same as {@link RaboshMemoryToolHandler.close}, for `await using handler = …`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  // ---- the commands ---------------------------------------------------------------------------

  #assertOpen(): void {
    if (this.#closing !== null) throw new StoreClosedError('memory tool handler is closed');
  }

  async #outcome<T>(call: () => T | Promise<T>): Promise<T> {
    this.#assertOpen();
    return native(call);
  }

  async #view(input: Input): Promise<ToolOutput> {
    this.#assertOpen();
    const raw = text(input['path']);
    const path = MemoryPath.normalise(raw);
    if (path === null) return fail(S.viewNotFound(raw));
    const range = viewRange(input['view_range']);
    const m = this.#memories;
    // Synchronous: no promise or microtask of its own for the common, bounded view.
    const cheap = nativeSync(() => m.viewIfCheap(path, range, this.#viewMaxChars));
    // A file view or listing arrives as its finished text, with no outcome object around it.
    if (typeof cheap === 'string') return { text: cheap, isError: false };
    if (cheap !== null) return viewed(path, cheap);
    return this.#poolViews.run(async () => viewed(path, await this.#outcome(() => m.view(path, range, this.#viewMaxChars))));
  }

  async #create(input: Input): Promise<ToolOutput> {
    this.#assertOpen();
    const raw = text(input['path']);
    const path = MemoryPath.normalise(raw);
    if (path === null) return fail(S.createExists(raw));
    const o = await this.#outcome(() => this.#memories.create(path, text(input['file_text'])));
    switch (o.type) {
      case 'Created':
        return ok(S.created(path));
      case 'TooLarge':
        return fail(S.tooLarge(path, o.limit));
      case 'Exists':
        return fail(S.createExists(path));
    }
  }

  async #strReplace(input: Input): Promise<ToolOutput> {
    this.#assertOpen();
    const raw = text(input['path']);
    const oldStr = text(input['old_str']);
    const path = MemoryPath.normalise(raw);
    if (path === null) return fail(S.replaceNotFound(raw));
    // Such an old_str must never match, yet the path is checked first (contract §4): the empty
    // old_str asks the store for exactly that — not found, or no match — and edits nothing.
    const sent = cannotMatch(oldStr) ? '' : oldStr;
    const o = await this.#outcome(() => this.#memories.strReplace(path, sent, text(input['new_str'])));
    switch (o.type) {
      case 'Edited':
        return ok(S.edited(o.firstLine, o.snippet));
      case 'NoMatch':
        return fail(S.replaceNoMatch(oldStr, path));
      case 'Multiple':
        return fail(S.replaceMultiple(oldStr, o.lines));
      case 'TooLarge':
        return fail(S.tooLarge(path, o.limit));
      case 'NotFound':
        return fail(S.replaceNotFound(path));
    }
  }

  async #insert(input: Input): Promise<ToolOutput> {
    this.#assertOpen();
    const raw = text(input['path']);
    const path = MemoryPath.normalise(raw);
    if (path === null) return fail(S.pathNotFound(raw));
    const line = input['insert_line'];
    // Not an integer: the store answers invalid_line (after its own path check). An integer past
    // what the binding carries exactly is out of range either way.
    const insertLine = typeof line === 'number' && Number.isInteger(line) ? Math.min(Math.max(line, -1), Number.MAX_SAFE_INTEGER) : null;
    const o = await this.#outcome(() => this.#memories.insert(path, insertLine, text(input['insert_text'])));
    switch (o.type) {
      case 'Edited':
        return ok(S.inserted(path));
      case 'InvalidLine':
        return fail(S.invalidLine(safeString(line), o.count));
      case 'TooLarge':
        return fail(S.tooLarge(path, o.limit));
      case 'NotFound':
        return fail(S.pathNotFound(path));
    }
  }

  async #delete(input: Input): Promise<ToolOutput> {
    this.#assertOpen();
    const raw = text(input['path']);
    const path = MemoryPath.normalise(raw);
    if (path === null) return fail(S.pathNotFound(raw));
    const o = await this.#outcome(() => this.#memories.delete(path));
    switch (o.type) {
      case 'Deleted':
        return ok(S.deleted(path));
      case 'IsRoot':
        return fail(S.deleteRoot);
      case 'NotFound':
        return fail(S.pathNotFound(path));
    }
  }

  async #rename(input: Input): Promise<ToolOutput> {
    this.#assertOpen();
    const rawOld = text(input['old_path']);
    const rawNew = text(input['new_path']);
    const oldPath = MemoryPath.normalise(rawOld);
    if (oldPath === null) return fail(S.pathNotFound(rawOld));
    const newPath = MemoryPath.normalise(rawNew);
    if (newPath === null) return fail(S.destinationExists(rawNew));
    const o = await this.#outcome(() => this.#memories.rename(oldPath, newPath));
    switch (o.type) {
      case 'Renamed':
        return ok(S.renamed(oldPath, newPath));
      case 'IsRoot':
        return fail(S.renameRoot);
      case 'Inside':
        return fail(S.renameInside(oldPath, newPath));
      case 'NotFound':
        return fail(S.pathNotFound(oldPath));
      case 'DestinationExists':
        return fail(S.destinationExists(newPath));
    }
  }
}

/** The SDK's command objects are model input too: anything but an object reads as empty. */
function asInput(command: unknown): Input {
  return typeof command === 'object' && command !== null ? (command as Input) : {};
}
