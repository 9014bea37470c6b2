/**
 * The hosted memory store, through the host's own `Anthropic` client: every call with the SDK's
 * own retries off (`maxRetries: 0`) and ours instead, so each attempt is counted and a retry of a
 * write is a decision of the sync (a lost response to a create or update is resolved by the next
 * listing, never guessed). 429 and 5xx wait `Retry-After` (or `retry-after-ms`) when the server
 * sends it, else an exponential backoff with jitter; at most `concurrency` requests in flight.
 * The peer SDK is only duck-typed here: any version that has `beta.memoryStores` works.
 */

import { HostedAnswerError, UnsupportedError } from '../errors.js';
import { Limit } from '../limit.js';

/**
 * Most pages one listing follows. The cursor is the server's: one that repeats is caught at once,
 * and this bounds one that never repeats and never ends (10 million memories at 100 a page, far
 * beyond any hosted store).
 */
export const MAX_LIST_PAGES = 100_000;

/** The first `@anthropic-ai/sdk` release with `client.beta.memoryStores` (checked on npm). */
export const MIN_SDK_VERSION = '0.91.0';

/** A hosted memory as the sync needs it (`content` only when fetched). */
export interface RemoteMemory {
  id: string;
  path: string;
  sha: string;
  size: number;
  versionId: string;
  content?: string | null;
}

/** The SDK's `APIError` as far as the sync reads it. */
interface ApiErrorLike {
  status?: number;
  headers?: { get(name: string): string | null | undefined } | Record<string, string>;
  error?: { error?: { type?: string } };
  type?: string | null;
}

interface MemoriesApi {
  list(id: string, params: Record<string, unknown>, options?: Record<string, unknown>): PromiseLike<PageLike>;
  retrieve(id: string, params: Record<string, unknown>, options?: Record<string, unknown>): PromiseLike<WireMemory>;
  create(id: string, params: Record<string, unknown>, options?: Record<string, unknown>): PromiseLike<WireMemory>;
  update(id: string, params: Record<string, unknown>, options?: Record<string, unknown>): PromiseLike<WireMemory>;
  delete(id: string, params: Record<string, unknown>, options?: Record<string, unknown>): PromiseLike<unknown>;
}

interface PageLike {
  data: Array<WireMemory | { type: 'memory_prefix'; path: string }>;
  next_page?: string | null;
}

interface WireMemory {
  type: 'memory';
  id: string;
  path: string;
  content_sha256: string;
  content_size_bytes: number;
  memory_version_id: string;
  content?: string | null;
}

/** What a failed write was, for the engine to decide on. */
export type WriteFailure =
  | { kind: 'precondition' }
  | { kind: 'path-conflict'; conflictingPath: string | null }
  | { kind: 'not-found' }
  /** Not sent: the local memory no longer holds what the plan pushes. */
  | { kind: 'local-changed' }
  | { kind: 'refused'; status: number; detail: string };

export class RemoteWriteError extends Error {
  constructor(readonly failure: WriteFailure) {
    super(failure.kind);
  }
}

function memoriesOf(client: unknown): MemoriesApi {
  const m = (client as { beta?: { memoryStores?: { memories?: MemoriesApi } } } | null)?.beta?.memoryStores?.memories;
  if (typeof m?.list !== 'function' || typeof m.update !== 'function') {
    throw new UnsupportedError(
      `db.sync needs an Anthropic client from @anthropic-ai/sdk ${MIN_SDK_VERSION} or later (client.beta.memoryStores); this client has none`,
    );
  }
  return m;
}

function header(e: ApiErrorLike, name: string): string | null {
  const h = e.headers;
  if (h === undefined) return null;
  if (typeof (h as { get?: unknown }).get === 'function') return (h as { get(n: string): string | null | undefined }).get(name) ?? null;
  return (h as Record<string, string>)[name] ?? null;
}

/** Milliseconds the server asked us to wait, if it said. */
function retryAfterMs(e: ApiErrorLike): number | null {
  const ms = Number(header(e, 'retry-after-ms'));
  if (header(e, 'retry-after-ms') !== null && Number.isFinite(ms) && ms >= 0) return ms;
  const ra = header(e, 'retry-after');
  if (ra === null) return null;
  const seconds = Number(ra);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const at = Date.parse(ra);
  return Number.isFinite(at) ? Math.max(0, at - Date.now()) : null;
}

function errorType(e: ApiErrorLike): string | null {
  return e.error?.error?.type ?? e.type ?? null;
}

/** 429, 5xx and connection failures (no status: the response never arrived) are retried. */
function transient(e: ApiErrorLike): boolean {
  const s = e.status;
  return s === undefined || s === 408 || (s === 409 && errorType(e) === 'conflict_error') || s === 429 || s >= 500;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

interface VersionsApi {
  retrieve(id: string, params: Record<string, unknown>, options?: Record<string, unknown>): PromiseLike<{ created_by?: WireActor | null }>;
  list?(id: string, params: Record<string, unknown>, options?: Record<string, unknown>): PromiseLike<VersionPageLike>;
}

interface VersionPageLike {
  data: WireVersion[];
  next_page?: string | null;
}

interface WireVersion {
  type: 'memory_version';
  id: string;
  memory_id: string;
  operation: string;
  created_at: string;
  path?: string | null;
  content_sha256?: string | null;
  content_size_bytes?: number | null;
  redacted_at?: string | null;
}

/** One hosted version as the incremental sync reads it (`path` and `sha` null: redacted or deleted). */
export interface RemoteVersion {
  id: string;
  memoryId: string;
  operation: 'created' | 'modified' | 'deleted';
  /** `created_at` in milliseconds since the epoch. */
  at: number;
  path: string | null;
  sha: string | null;
  size: number | null;
}

/** An SDK promise whose `withResponse()` also gives the HTTP response (for its `date` header). */
interface WithResponse<T> {
  withResponse?: () => PromiseLike<{ data: T; response: { headers: { get(name: string): string | null } } }>;
}

/** The `date` header of an answer in milliseconds, or null when absent or unreadable. */
function dateOf(response: { headers: { get(name: string): string | null } }): number | null {
  const d = response.headers.get('date');
  const ms = d === null ? Number.NaN : Date.parse(d);
  return Number.isFinite(ms) ? ms : null;
}

/** RFC 3339 with any number of fractional digits, in whole milliseconds (rounded down). */
export function rfc3339Ms(s: string): number | null {
  const m = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d+))?(Z|[+-]\d{2}:\d{2})$/.exec(s);
  if (m === null) return null;
  const ms = Date.parse(`${m[1]}${m[3]}`);
  return Number.isFinite(ms) ? ms + Number((m[2] ?? '').padEnd(3, '0').slice(0, 3)) : null;
}

type WireActor = { type: string } & Record<string, unknown>;

/** A hosted actor as a local one: its kind as `type`, its id (`apikey_…`, `sesn_…`, …) as `id`. */
export function localActor(a: WireActor | null | undefined): { type: string; id: string } | null {
  if (a === null || a === undefined || typeof a.type !== 'string') return null;
  const id = a['api_key_id'] ?? a['session_id'] ?? a['user_id'] ?? a['service_account_id'];
  return typeof id === 'string' && a.type.length > 0 ? { type: a.type, id } : null;
}

export class RemoteStore {
  readonly #api: MemoriesApi;
  readonly #versions: VersionsApi | null;
  readonly #limit: Limit;
  readonly #maxAttempts: number;
  requests = 0;
  /**
   * The hosted store's clock (its `date` header, ms) as the latest `list` began; null when the
   * client gives no response headers.
   */
  listedAt: number | null = null;

  constructor(
    client: unknown,
    readonly storeId: string,
    concurrency: number,
    maxAttempts: number,
  ) {
    this.#api = memoriesOf(client);
    this.#versions = (client as { beta: { memoryStores: { memoryVersions?: VersionsApi } } }).beta.memoryStores.memoryVersions ?? null;
    this.#limit = new Limit(concurrency);
    this.#maxAttempts = maxAttempts;
  }

  async #call<T>(send: () => PromiseLike<T>): Promise<T> {
    return this.#limit.run(async () => {
      for (let attempt = 1; ; attempt++) {
        this.requests++;
        try {
          return await send();
        } catch (raw) {
          // An answer that is not JSON (the SDK's parse throws SyntaxError) is not retried: the
          // server is saying something the sync cannot read, and a write it answered may have
          // landed (the push records tell, see pushes.ts).
          if (raw instanceof SyntaxError)
            throw new HostedAnswerError(`the hosted memory store answered with a body that is not JSON (${raw.message})`, { cause: raw });
          const e = (raw ?? {}) as ApiErrorLike;
          if (typeof e !== 'object' || !transient(e) || attempt >= this.#maxAttempts) throw raw;
          const backoff = Math.min(8000, 200 * 2 ** (attempt - 1)) * (0.5 + Math.random() / 2);
          await sleep(Math.min(60_000, retryAfterMs(e) ?? backoff));
        }
      }
    });
  }

  /** Writes fail as `RemoteWriteError` for the outcomes the sync decides on. */
  async #write<T>(send: () => PromiseLike<T>): Promise<T> {
    try {
      return await this.#call(send);
    } catch (raw) {
      const e = (raw ?? {}) as ApiErrorLike & { message?: string; error?: { error?: { conflicting_path?: string } } };
      const type = errorType(e);
      if (type === 'memory_precondition_failed_error') throw new RemoteWriteError({ kind: 'precondition' });
      if (type === 'memory_path_conflict_error') {
        throw new RemoteWriteError({ kind: 'path-conflict', conflictingPath: e.error?.error?.conflicting_path ?? null });
      }
      if (e.status === 404) throw new RemoteWriteError({ kind: 'not-found' });
      if (typeof e.status === 'number' && e.status >= 400 && e.status < 500) {
        throw new RemoteWriteError({ kind: 'refused', status: e.status, detail: String(e.message ?? type ?? e.status) });
      }
      throw raw;
    }
  }

  /** A wire memory as the sync reads it; anything without its fields is a typed error, not a crash later. */
  static #memory(w: WireMemory): RemoteMemory {
    const ok =
      typeof w === 'object' &&
      w !== null &&
      typeof w.id === 'string' &&
      typeof w.path === 'string' &&
      typeof w.memory_version_id === 'string' &&
      typeof w.content_sha256 === 'string' &&
      /^[0-9a-f]{64}$/.test(w.content_sha256) &&
      Number.isSafeInteger(w.content_size_bytes) &&
      w.content_size_bytes >= 0 &&
      (w.content === undefined || w.content === null || typeof w.content === 'string');
    if (!ok)
      throw new HostedAnswerError(
        `the hosted memory store answered a memory without its id, path, version, hash or size: ${JSON.stringify(w)?.slice(0, 200)}`,
      );
    return {
      id: w.id,
      path: w.path,
      sha: w.content_sha256,
      size: w.content_size_bytes,
      versionId: w.memory_version_id,
      content: w.content,
    };
  }

  /** Every memory of the store, path-ordered pages of `limit`; `full` brings the content (20 a page). */
  async list(full = false): Promise<RemoteMemory[]> {
    const out: RemoteMemory[] = [];
    const seen = new Set<string>();
    let page: string | undefined;
    do {
      if (page !== undefined) {
        // A cursor seen before would list the same pages again, and again: a cycle, not an end.
        if (seen.has(page))
          throw new HostedAnswerError(
            `the hosted memory store's listing repeats its page cursor ${JSON.stringify(page.slice(0, 80))}: a cycle, not followed`,
          );
        if (seen.size >= MAX_LIST_PAGES)
          throw new HostedAnswerError(`the hosted memory store's listing did not end within ${MAX_LIST_PAGES} pages`);
        seen.add(page);
      }
      const params: Record<string, unknown> = { limit: full ? 20 : 100, view: full ? 'full' : 'basic' };
      if (page !== undefined) params['page'] = page;
      // Await the page itself (not the SDK's auto-paginating iterator): each page is one counted,
      // retried request. The first page's `date` is when the listing began (see cursor.ts).
      const first = page === undefined;
      const body = await this.#call(async () => {
        const { body, date } = await RemoteStore.#dated(this.#api.list(this.storeId, params, { maxRetries: 0 }));
        if (first) this.listedAt = date;
        return body;
      });
      if (
        typeof body !== 'object' ||
        body === null ||
        !Array.isArray(body.data) ||
        (body.next_page != null && typeof body.next_page !== 'string')
      ) {
        throw new HostedAnswerError(
          `the hosted memory store answered a listing page without data or with a cursor that is not a string: ${JSON.stringify(body)?.slice(0, 200)}`,
        );
      }
      for (const item of body.data) if (item?.type === 'memory') out.push(RemoteStore.#memory(item));
      page = body.next_page ?? undefined;
    } while (page !== undefined);
    return out;
  }

  /** Awaits an SDK promise, with its answer's `date` when the client exposes the response. */
  static async #dated<T>(p: PromiseLike<T> & WithResponse<T>): Promise<{ body: T; date: number | null }> {
    if (typeof p.withResponse !== 'function') return { body: await p, date: null };
    const { data, response } = await p.withResponse();
    return { body: data, date: dateOf(response) };
  }

  /** Whether the client can list versions (`beta.memoryStores.memoryVersions.list`). */
  get canListVersions(): boolean {
    return typeof this.#versions?.list === 'function';
  }

  /**
   * Every version written at or after `sinceMs` (the hosted clock), in pages of 100 without
   * content; and the hosted clock as the listing began (its first answer's `date`), null when
   * the client gives no response headers.
   */
  async versionsSince(sinceMs: number): Promise<{ versions: RemoteVersion[]; at: number | null }> {
    const api = this.#versions;
    if (api === null || typeof api.list !== 'function') throw new HostedAnswerError('this client cannot list memory versions');
    const list = api.list.bind(api);
    const out: RemoteVersion[] = [];
    const seen = new Set<string>();
    let page: string | undefined;
    let at: number | null = null;
    do {
      if (page !== undefined) {
        if (seen.has(page) || seen.size >= MAX_LIST_PAGES)
          throw new HostedAnswerError(`the hosted version listing repeats or does not end (cursor ${JSON.stringify(page.slice(0, 80))})`);
        seen.add(page);
      }
      const params: Record<string, unknown> = { limit: 100, view: 'basic', 'created_at[gte]': new Date(sinceMs).toISOString() };
      if (page !== undefined) params['page'] = page;
      const first = page === undefined;
      const body = await this.#call(async () => {
        const r = await RemoteStore.#dated(list(this.storeId, params, { maxRetries: 0 }));
        if (first) at = r.date;
        return r.body;
      });
      if (
        typeof body !== 'object' ||
        body === null ||
        !Array.isArray(body.data) ||
        (body.next_page != null && typeof body.next_page !== 'string')
      )
        throw new HostedAnswerError(`the hosted version listing answered a page without data: ${JSON.stringify(body)?.slice(0, 200)}`);
      for (const v of body.data) out.push(RemoteStore.#version(v));
      page = body.next_page ?? undefined;
    } while (page !== undefined);
    return { versions: out, at };
  }

  static #version(v: WireVersion): RemoteVersion {
    const at = typeof v?.created_at === 'string' ? rfc3339Ms(v.created_at) : null;
    const op = v?.operation;
    const ok =
      typeof v === 'object' &&
      v !== null &&
      typeof v.id === 'string' &&
      typeof v.memory_id === 'string' &&
      (op === 'created' || op === 'modified' || op === 'deleted') &&
      at !== null;
    if (!ok)
      throw new HostedAnswerError(
        `the hosted store answered a version without its id, memory, operation or time: ${JSON.stringify(v)?.slice(0, 200)}`,
      );
    const sha = typeof v.content_sha256 === 'string' && /^[0-9a-f]{64}$/.test(v.content_sha256) ? v.content_sha256 : null;
    const path = typeof v.path === 'string' ? v.path : null;
    const size = Number.isSafeInteger(v.content_size_bytes) ? (v.content_size_bytes as number) : null;
    return { id: v.id, memoryId: v.memory_id, operation: op, at, path, sha, size };
  }

  async retrieve(id: string): Promise<RemoteMemory | null> {
    try {
      return RemoteStore.#memory(
        await this.#write(() => this.#api.retrieve(id, { memory_store_id: this.storeId, view: 'full' }, { maxRetries: 0 })),
      );
    } catch (e) {
      if (e instanceof RemoteWriteError && e.failure.kind === 'not-found') return null;
      throw e;
    }
  }

  /** Who wrote a hosted version (`created_by`), as a local actor; null when not recorded. */
  async author(versionId: string): Promise<{ type: string; id: string } | null> {
    const api = this.#versions;
    if (api === null) return null;
    const v = await this.#call(() => api.retrieve(versionId, { memory_store_id: this.storeId, view: 'basic' }, { maxRetries: 0 }));
    return localActor(v.created_by);
  }

  async create(path: string, content: string): Promise<RemoteMemory> {
    return RemoteStore.#memory(await this.#write(() => this.#api.create(this.storeId, { path, content }, { maxRetries: 0 })));
  }

  /** Content and/or path, if the memory still holds `ifSha`. */
  async update(id: string, change: { content?: string; path?: string }, ifSha: string): Promise<RemoteMemory> {
    const params = { memory_store_id: this.storeId, ...change, precondition: { type: 'content_sha256', content_sha256: ifSha } };
    return RemoteStore.#memory(await this.#write(() => this.#api.update(id, params, { maxRetries: 0 })));
  }

  /** Deletes if it still holds `ifSha`; a memory already gone counts as deleted. */
  async delete(id: string, ifSha: string): Promise<void> {
    try {
      await this.#write(() => this.#api.delete(id, { memory_store_id: this.storeId, expected_content_sha256: ifSha }, { maxRetries: 0 }));
    } catch (e) {
      if (e instanceof RemoteWriteError && e.failure.kind === 'not-found') return;
      throw e;
    }
  }
}
