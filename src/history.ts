/**
 * Version history, redaction, a read-only view of the past, and host edits with preconditions
 * (issue 13). Everything is decided in the Rust crate (one commit per change, its versions in the
 * same commit); this module checks arguments, words answers and throws the typed errors. See
 * docs/guide/history.md.
 */

import { InvalidArgumentError, InvalidOptionError, PreconditionFailedError, native } from './errors.js';
import {
  type HistoryUsage,
  MAX_ACTOR_ID_BYTES,
  MAX_ACTOR_TYPE_BYTES,
  type NativeActor,
  type NativeHistoryOptions,
  type NativeHistoryRequest,
  type NativeMemories,
} from './native.js';
import type { Same } from './same-shape.js';
import { MemoryPath } from './path.js';
import * as S from './strings.js';
import type { ToolOutput } from './tool-output.js';
import { viewRange, viewed } from './view-answer.js';

/** `Rabosh.open(dir, { history })`: `true`, or limits on what is kept. */
export interface HistoryOptions {
  /** Versions older than this many days are dropped at expiry and `pruneHistory()`. Default: kept. */
  retainDays?: number;
  /** Only this many newest versions of each memory are kept (same times). Default: all. */
  maxVersionsPerMemory?: number;
}

/** Who made a change: the handler option `actor`, e.g. `{ type: 'session', id }`. */
export interface Actor {
  /** What kind of author, e.g. `'session'`, `'user'`, `'app'` (1–255 UTF-8 bytes). */
  type: string;
  /** Which one of that kind (at most 1,024 UTF-8 bytes). */
  id: string;
}

/** What a version did to its memory (the hosted stores' names). */
export type VersionOperation = 'created' | 'modified' | 'renamed' | 'deleted';

/** One recorded change of one memory. */
export interface MemoryVersion {
  /** 32 hex digits, ordered as the commits were (newer is greater). */
  id: string;
  /** The memory's id, stable across its edits and renames (the id of its first version). */
  memoryId: string;
  /** The path after this change; null once redacted. */
  path: string | null;
  /** What the change did. */
  operation: VersionOperation;
  /** The handler's `actor` option when it made the change, else null. */
  actor: Actor | null;
  /** When the change was committed. */
  createdAt: Date;
  /** Hex SHA-256 of the UTF-8 content; null for a deletion and once redacted. */
  contentSha256: string | null;
  /** UTF-8 bytes of the content; null for a deletion and once redacted. */
  sizeBytes: number | null;
  /** When the version was redacted; null while it is not. */
  redactedAt: Date | null;
}

/** A version with its content (null for a deletion and once redacted). */
export interface MemoryVersionWithContent extends MemoryVersion {
  /** The content after the change. */
  content: string | null;
}

/** Filters of `versions()`; every one given must match. */
export interface VersionQuery {
  /** Versions whose path is exactly this one. */
  path?: string;
  /** The directory (or memory) and everything below it. */
  pathPrefix?: string;
  /** Versions of one memory (its `memoryId`), whatever its path was. */
  memoryId?: string;
  /** Versions of one kind. */
  operation?: VersionOperation;
  /** Versions made by this actor (type and id both match). */
  actor?: Actor;
  /** Versions committed at or after this instant. */
  since?: Date;
  /** Versions committed at or before this instant. */
  until?: Date;
  /** Page size, 1–10,000; default 100. */
  limit?: number;
  /** `nextCursor` of the previous page. */
  cursor?: string;
}

/** One page of {@link RaboshMemoryToolHandler.versions}. */
export interface VersionPage {
  /** Newest first. */
  data: MemoryVersion[];
  /** Present when more versions match: pass it as `cursor`. */
  nextCursor?: string;
}

/** A memory as the host reads it. */
export interface HostMemory {
  /** The normalised path. */
  path: string;
  /** The memory's content. */
  content: string;
  /** Hex SHA-256 of the UTF-8 content: pass it as `ifMatch`. */
  contentSha256: string;
  /** The version holding this content; null when it was written with history off. */
  versionId: string | null;
}

/** Preconditions of {@link RaboshMemoryToolHandler.put}. */
export interface PutOptions {
  /** Write only if the memory's content hash is this one (else `PreconditionFailedError`). */
  ifMatch?: string;
  /** `'*'`: write only if no memory exists at the path. */
  ifNoneMatch?: '*';
}

/** What {@link RaboshMemoryToolHandler.put} did. */
export interface PutResult {
  /** Hex SHA-256 of the memory's content now. */
  contentSha256: string;
  /** The version holding it (null with history off). */
  versionId: string | null;
  /** False when the memory already held this content: nothing was written. */
  written: boolean;
}

/** What {@link RaboshMemoryToolHandler.remove} did. */
export interface RemoveResult {
  /** False when there was no memory (its removal already holds). */
  removed: boolean;
  /** The `deleted` version recorded (null with history off or when nothing was removed). */
  versionId: string | null;
}

export type { HistoryUsage } from './native.js';

/** What a view of the past answers: the tool's strings as the model would have seen them. */
export interface HistoricView {
  /** The instant this view shows. */
  readonly at: Date;
  /** Like the handler's `execute`; any command but `view` is refused (`isError`). */
  execute(input: unknown): Promise<ToolOutput>;
  /** Like the handler's `view`: the text alone. */
  view(command: { path: string; view_range?: [number, number] }): Promise<string>;
}

/** What {@link RaboshMemoryToolHandler.revert} wrote. */
export interface RevertResult {
  /** The new version (null when the memory already held that content: nothing was written). */
  versionId: string | null;
}

// The public option and actor are the binding's shapes, documented here for hosts; they must not
// drift apart (the compiler holds it).
const historyOptionsMatchBinding: Same<HistoryOptions, NativeHistoryOptions> = true;
const actorMatchesBinding: Same<Actor, NativeActor> = true;
void historyOptionsMatchBinding;
void actorMatchesBinding;

const refuse = (option: string, value: unknown, why: string): never => {
  throw new InvalidOptionError(`invalid option ${option}: ${JSON.stringify(value) ?? String(value)} (${why})`);
};

/**
 * The store option `history`, validated: undefined when not given (the store's own setting
 * holds), `{ on: false }` for `false` (refused by a store that records history), `{ on: true }`
 * for `true` (keeping the store's retention), `{ on: true, options }` for an object.
 */
export function historyOption(value: unknown): NativeHistoryRequest | undefined {
  if (value === undefined) return undefined;
  if (value === false) return { on: false };
  if (value === true) return { on: true };
  if (typeof value !== 'object' || value === null) refuse('history', value, 'must be a boolean or { retainDays, maxVersionsPerMemory }');
  const o = value as Record<string, unknown>;
  for (const key of Object.keys(o)) {
    if (key !== 'retainDays' && key !== 'maxVersionsPerMemory') refuse(`history.${key}`, o[key], 'unknown option');
  }
  const out: NativeHistoryOptions = {};
  const days = o['retainDays'];
  if (days !== undefined) {
    if (typeof days !== 'number' || !Number.isFinite(days) || days <= 0) refuse('history.retainDays', days, 'must be a positive number');
    out.retainDays = days as number;
  }
  const max = o['maxVersionsPerMemory'];
  if (max !== undefined) {
    if (typeof max !== 'number' || !Number.isSafeInteger(max) || max < 1) {
      refuse('history.maxVersionsPerMemory', max, 'must be a positive integer');
    }
    out.maxVersionsPerMemory = max as number;
  }
  return { on: true, options: out };
}

/** The handler option `actor`, validated. */
export function actorOption(value: unknown): Actor | undefined {
  if (value === undefined) return undefined;
  const a = value as Record<string, unknown> | null;
  if (typeof a !== 'object' || a === null || typeof a['type'] !== 'string' || typeof a['id'] !== 'string') {
    return refuse('actor', value, 'must be { type: string, id: string }');
  }
  // The limits are the Rust crate's (one definition, exported by the binding): an actor accepted
  // here always fits the version record, so it can never make a write fail.
  const typeBytes = Buffer.byteLength(a['type']);
  if (typeBytes === 0 || typeBytes > MAX_ACTOR_TYPE_BYTES || Buffer.byteLength(a['id']) > MAX_ACTOR_ID_BYTES) {
    return refuse('actor', value, `type must be 1–${MAX_ACTOR_TYPE_BYTES} UTF-8 bytes, id at most ${MAX_ACTOR_ID_BYTES}`);
  }
  return { type: a['type'], id: a['id'] };
}

function pathArg(raw: unknown, what = 'path'): string {
  const path = typeof raw === 'string' ? MemoryPath.normalise(raw) : null;
  if (path === null) throw new InvalidArgumentError(`${what} is not a valid memory path: ${JSON.stringify(raw)}`);
  return path;
}

function memoryPathArg(raw: unknown): string {
  const path = pathArg(raw);
  if (path === '/memories') throw new InvalidArgumentError('/memories is a directory, not a memory');
  return path;
}

function dateArg(name: string, d: unknown): number | undefined {
  if (d === undefined) return undefined;
  const ms = d instanceof Date ? d.getTime() : NaN;
  if (!Number.isFinite(ms)) throw new TypeError(`${name} must be a valid Date`);
  return ms;
}

type NativeVersion = Awaited<ReturnType<NativeMemories['versions']>>['data'][number] & { content?: string };

function version(v: NativeVersion): MemoryVersion {
  return {
    id: v.id,
    memoryId: v.memoryId,
    path: v.path ?? null,
    operation: v.operation as VersionOperation,
    actor: v.actor ? { type: v.actor.type, id: v.actor.id } : null,
    createdAt: new Date(v.createdAtMs),
    contentSha256: v.contentSha256 ?? null,
    sizeBytes: v.contentSha256 === undefined ? null : v.sizeBytes,
    redactedAt: v.redactedAtMs === undefined ? null : new Date(v.redactedAtMs),
  };
}

export async function versions(m: NativeMemories, q: VersionQuery = {}): Promise<VersionPage> {
  const page = await native(() =>
    m.versions({
      path: q.path === undefined ? undefined : pathArg(q.path),
      pathPrefix: q.pathPrefix === undefined ? undefined : pathArg(q.pathPrefix, 'pathPrefix'),
      memoryId: q.memoryId,
      operation: q.operation,
      actor: q.actor,
      sinceMs: dateArg('since', q.since),
      untilMs: dateArg('until', q.until),
      limit: q.limit,
      cursor: q.cursor,
    }),
  );
  const out: VersionPage = { data: page.data.map(version) };
  if (page.nextCursor !== undefined) out.nextCursor = page.nextCursor;
  return out;
}

export async function versionById(m: NativeMemories, id: string): Promise<MemoryVersionWithContent | null> {
  const v = await native(() => m.version(String(id)));
  return v === null ? null : { ...version(v), content: v.content ?? null };
}

export async function revert(m: NativeMemories, path: string, versionId: string): Promise<RevertResult> {
  const p = memoryPathArg(path);
  const o = await native(() => m.revert(p, String(versionId)));
  switch (o.type) {
    case 'Reverted':
      return { versionId: o.versionId ?? null };
    case 'UnknownVersion':
      throw new InvalidArgumentError(`no version ${versionId}`);
    case 'NoContent':
      throw new InvalidArgumentError(`version ${versionId} has no content to revert to (a deletion, or redacted)`);
    case 'TooLarge':
      throw new InvalidArgumentError(`version ${versionId} is larger than maxMemoryBytes (${o.limit})`);
  }
}

export async function redact(m: NativeMemories, versionId: string): Promise<MemoryVersion> {
  const o = await native(() => m.redact(String(versionId)));
  if (o === 'UnknownVersion') throw new InvalidArgumentError(`no version ${versionId}`);
  const v = await versionById(m, versionId);
  if (v === null) throw new InvalidArgumentError(`no version ${versionId}`);
  const { content: _content, ...row } = v;
  return row;
}

export async function get(m: NativeMemories, path: string): Promise<HostMemory | null> {
  const p = memoryPathArg(path);
  const c = await native(() => m.hostGet(p));
  return c === null ? null : { path: c.path, content: c.content, contentSha256: c.contentSha256, versionId: c.versionId ?? null };
}

/**
 * The `ifMatch` of a host edit, checked here: the binding would reject anything but a string
 * with a bare napi `StringExpected` error instead of a typed one.
 */
function ifMatchArg(command: string, options: unknown): string | null {
  if (options === undefined) return null;
  if (options === null || typeof options !== 'object') {
    throw new InvalidArgumentError(`${command} options must be an object, got ${options === null ? 'null' : typeof options}`);
  }
  const ifMatch: unknown = (options as { ifMatch?: unknown }).ifMatch;
  if (ifMatch === undefined) return null;
  if (typeof ifMatch !== 'string') {
    const got = ifMatch === null ? 'null' : Array.isArray(ifMatch) ? 'an array' : typeof ifMatch;
    throw new InvalidArgumentError(`ifMatch must be a content hash string (from get()), got ${got}`);
  }
  return ifMatch;
}

export async function put(m: NativeMemories, path: string, content: string, options: PutOptions = {}): Promise<PutResult> {
  const p = memoryPathArg(path);
  if (typeof content !== 'string') throw new TypeError('put needs string content');
  const ifMatch = ifMatchArg('put', options);
  if (options.ifNoneMatch !== undefined && options.ifNoneMatch !== '*') {
    throw new InvalidArgumentError(`ifNoneMatch must be '*', got ${JSON.stringify(options.ifNoneMatch)}`);
  }
  const o = await native(() => m.hostPut(p, content, ifMatch, options.ifNoneMatch === '*'));
  switch (o.type) {
    case 'Written':
    case 'Unchanged':
      return { contentSha256: o.contentSha256, versionId: o.versionId ?? null, written: o.type === 'Written' };
    case 'PreconditionFailed':
      throw preconditionFailed(p, o.currentSha256 ?? null);
    case 'TooLarge':
      throw new InvalidArgumentError(`content of ${p} is larger than maxMemoryBytes (${o.limit})`);
    case 'IsRoot':
      throw new InvalidArgumentError('/memories is a directory, not a memory');
  }
}

export async function remove(m: NativeMemories, path: string, options: { ifMatch?: string } = {}): Promise<RemoveResult> {
  const p = memoryPathArg(path);
  const ifMatch = ifMatchArg('remove', options);
  const o = await native(() => m.hostRemove(p, ifMatch));
  switch (o.type) {
    case 'PreconditionFailed':
      throw preconditionFailed(p, o.currentSha256);
    case 'Removed':
      return { removed: true, versionId: o.versionId ?? null };
    case 'Absent':
      return { removed: false, versionId: null };
    case 'IsRoot':
      throw new InvalidArgumentError('/memories is a directory, not a memory');
  }
}

function preconditionFailed(path: string, current: string | null): PreconditionFailedError {
  const now = current === null ? 'no memory exists there' : `its content hash is ${current}`;
  return new PreconditionFailedError(`precondition failed for ${path}: ${now}`, current);
}

export async function historyUsage(m: NativeMemories): Promise<HistoryUsage> {
  return native(() => m.historyUsage());
}

export async function pruneHistory(m: NativeMemories): Promise<number> {
  return native(() => m.pruneHistory());
}

export async function at(m: NativeMemories, when: Date, viewMaxChars: number): Promise<HistoricView> {
  const ms = dateArg('at', when);
  if (ms === undefined) throw new TypeError('at needs a Date');
  const past = await native(() => m.at(ms));
  const answer = async (raw: string, range: unknown): Promise<ToolOutput> => {
    const path = MemoryPath.normalise(raw);
    if (path === null) return { text: S.viewNotFound(raw), isError: true };
    const o = await native(() => past.view(path, viewRange(range), viewMaxChars));
    if (o.type === 'NotRecorded') {
      return { text: `Error: history did not record ${path} as of ${new Date(ms).toISOString()}`, isError: true };
    }
    return viewed(path, o);
  };
  const text = (v: unknown): string => (typeof v === 'string' ? v : '');
  return {
    at: new Date(ms),
    async execute(input: unknown) {
      const i = (typeof input === 'object' && input !== null ? input : {}) as Record<string, unknown>;
      const command = i['command'];
      if (command === 'view') return answer(text(i['path']), i['view_range']);
      if (typeof command === 'string' && ['create', 'str_replace', 'insert', 'delete', 'rename'].includes(command)) {
        return {
          text: `Error: the memory directory is read-only as of ${new Date(ms).toISOString()}; ${command} is refused`,
          isError: true,
        };
      }
      return { text: S.unknownCommand(String(command)), isError: true };
    },
    async view(command) {
      return (await answer(text(command.path), command.view_range)).text;
    },
  };
}
