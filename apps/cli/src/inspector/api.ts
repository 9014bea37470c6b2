/**
 * The inspector's JSON endpoints, over the public handler API only: a directory's names a page
 * at a time (hidden memories too; sizes from metadata, no content read), digests of the
 * directories the page shows (to re-fetch only those that changed), a search over paths (the
 * filter), one memory, its versions, one version, a diff between two,
 * usage, and the two writes (revert, redact). Each answer is plain JSON; dates are ISO strings.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { structuredPatch } from 'diff';
import { DEFAULT_VERSION_PAGE, InvalidArgumentError, RaboshError, type MemoryVersion, type RaboshMemoryToolHandler } from 'rabosh-memory';
import { memoryVersions } from '../history.js';
import { DirCache } from './dir-cache.js';
import { admitWrite, refuse, sendJson } from './guard.js';
import { search } from './search.js';
import type { StoreInfo } from './page/store-info.js';

export type { StoreInfo };

/** Past this many changed lines, or this long, a diff is not worth waiting for: the page says so. */
const DIFF_TIMEOUT_MS = 1500;
/** A request body of a write endpoint is a few ids and a path. */
const MAX_BODY_BYTES = 64 * 1024;

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const versionJson = (v: MemoryVersion) => ({
  id: v.id,
  memoryId: v.memoryId,
  path: v.path,
  operation: v.operation,
  actor: v.actor,
  createdAt: v.createdAt.toISOString(),
  contentSha256: v.contentSha256,
  sizeBytes: v.sizeBytes,
  redactedAt: v.redactedAt?.toISOString() ?? null,
});

function param(url: URL, name: string): string {
  const v = url.searchParams.get(name);
  if (v === null || v === '') throw new HttpError(400, `missing query parameter ${name}`);
  return v;
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new HttpError(413, 'request body too large');
    chunks.push(chunk as Buffer);
  }
  let body: unknown;
  try {
    body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new HttpError(400, 'the request body is not JSON');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new HttpError(400, 'the request body must be a JSON object');
  return body as Record<string, unknown>;
}

function field(body: Record<string, unknown>, name: string): string {
  const v = body[name];
  if (typeof v !== 'string' || v === '') throw new HttpError(400, `${name} must be a non-empty string`);
  return v;
}

/** Names of one directory sent at a time, unless the page asks for more (a refresh of what it shows). */
const PAGE = 200;
const MAX_PAGE = 5_000;
/** Opened directories one digests request may name. */
const MAX_DIGESTS = 200;

function pageLimit(url: URL): number {
  const raw = url.searchParams.get('limit');
  if (raw === null) return PAGE;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 1 || n > MAX_PAGE) throw new HttpError(400, `limit must be 1 to ${MAX_PAGE}`);
  return n;
}

function after(url: URL): { after?: string } {
  const a = url.searchParams.get('after');
  return a === null || a === '' ? {} : { after: a };
}

/** A page of a directory as the page reads it: names and sizes, and a digest to compare later. */
async function childrenAnswer(dirs: DirCache, path: string, url: URL | null, limit?: number) {
  const page = await dirs.children(path, {
    limit: limit ?? (url === null ? PAGE : pageLimit(url)),
    ...(url === null ? {} : after(url)),
  });
  const body = {
    path: page.path,
    memories: page.memories,
    bytes: page.bytes,
    total: page.total,
    // [name, bytes of the memory at that name or null, memories below, bytes below]
    entries: page.entries.map((e) => [e.name, e.memoryBytes, e.memories, e.bytes] as const),
    next: page.next,
  };
  return { ...body, digest: createHash('sha256').update(JSON.stringify(body)).digest('base64url').slice(0, 22) };
}

export class Api {
  readonly #dirs: DirCache;

  constructor(
    private readonly handler: RaboshMemoryToolHandler,
    private readonly info: StoreInfo,
  ) {
    this.#dirs = new DirCache(handler);
  }

  /**
   * Reads the root's listing ahead of the page's first request (the one read that grows with
   * the store), so a page opened a moment after the URL is printed finds it ready.
   */
  prime(): Promise<void> {
    return this.#dirs.totals().then(
      () => {},
      () => {},
    );
  }

  /** Answers `api/<name>`; false when there is no such endpoint. */
  async serve(name: string, req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean> {
    const get = this.#reads[name];
    const post = this.#writes[name];
    if (get === undefined && post === undefined) return false;
    try {
      if (post !== undefined) {
        const refusal = admitWrite(req);
        if (refusal !== null) {
          refuse(res, refusal);
          return true;
        }
        sendJson(res, 200, await post(await readJson(req)));
      } else if (req.method !== 'GET' && req.method !== 'HEAD') {
        sendJson(res, 405, { error: { code: 'HTTP_405', message: 'method not allowed: reads are GET requests' } }, { Allow: 'GET' });
      } else {
        sendJson(res, 200, await get!(url));
      }
    } catch (e) {
      this.#fail(res, e);
    }
    return true;
  }

  #fail(res: ServerResponse, e: unknown): void {
    if (e instanceof HttpError) {
      sendJson(res, e.status, { error: { code: `HTTP_${e.status}`, message: e.message } });
    } else if (e instanceof InvalidArgumentError) {
      sendJson(res, 400, { error: { code: e.code, message: e.message } });
    } else if (e instanceof RaboshError) {
      sendJson(res, 500, { error: { code: e.code, message: e.message } });
    } else {
      sendJson(res, 500, { error: { code: 'INTERNAL', message: e instanceof Error ? e.message : String(e) } });
    }
  }

  readonly #reads: Record<string, (url: URL) => Promise<unknown>> = {
    info: async () => this.info,
    // As handler.usage() counts: the root's totals are the scope's, kept current from the feed.
    usage: async () => ({
      ...(await this.#dirs.totals()),
      ...(this.info.history ? { history: await this.handler.historyUsage() } : {}),
    }),
    // One directory's names, a page at a time, from the listing's metadata (no content read).
    children: async (url) => childrenAnswer(this.#dirs, url.searchParams.get('path') ?? '/memories', url),
    // For each opened directory the page names (`d=<n>:<path>`), the digest of its first n
    // names: the page re-fetches only those whose digest moved.
    digests: async (url) => {
      const asked = url.searchParams.getAll('d').slice(0, MAX_DIGESTS);
      const digests: Record<string, string> = {};
      for (const d of asked) {
        const colon = d.indexOf(':');
        const n = Number(d.slice(0, colon));
        if (colon < 1 || !Number.isSafeInteger(n) || n < 1) throw new HttpError(400, `d must be <count>:<path>, got ${JSON.stringify(d)}`);
        const path = d.slice(colon + 1);
        digests[path] = (await childrenAnswer(this.#dirs, path, null, Math.min(n, MAX_PAGE))).digest;
      }
      return { digests };
    },
    // The filter, a page at a time: a path's memories from where it sorts, other text in every path.
    search: async (url) => search(this.handler, param(url, 'q'), pageLimit(url), after(url).after),
    // null when no memory is there (as get() answers): a deleted memory's page is a normal state.
    memory: async (url) => this.handler.get(param(url, 'path')),
    versions: async (url) => {
      // The CLI's `history` answers the same: a memory's versions follow it through renames.
      const cursor = url.searchParams.get('cursor') ?? undefined;
      const page = await memoryVersions(this.handler, param(url, 'path'), { limit: DEFAULT_VERSION_PAGE, ...(cursor ? { cursor } : {}) });
      return { data: page.data.map(versionJson), nextCursor: page.nextCursor ?? null };
    },
    version: async (url) => {
      const v = await this.handler.version(param(url, 'id'));
      if (v === null) throw new HttpError(404, `no version ${url.searchParams.get('id')}`);
      return { ...versionJson(v), content: v.content };
    },
    diff: async (url) => {
      const to = await this.handler.version(param(url, 'to'));
      if (to === null) throw new HttpError(404, `no version ${url.searchParams.get('to')}`);
      const fromId = url.searchParams.get('from');
      const from = fromId ? await this.handler.version(fromId) : null;
      if (fromId && from === null) throw new HttpError(404, `no version ${fromId}`);
      const before = from?.content ?? '';
      const after = to.content ?? '';
      const patch = structuredPatch('before', 'after', before, after, undefined, undefined, {
        context: 3,
        timeout: DIFF_TIMEOUT_MS,
      });
      return {
        from: from === null ? null : versionJson(from),
        to: versionJson(to),
        identical: before === after,
        hunks: patch === undefined ? null : patch.hunks,
      };
    },
  };

  readonly #writes: Record<string, (body: Record<string, unknown>) => Promise<unknown>> = {
    revert: async (body) => this.handler.revert(field(body, 'path'), field(body, 'versionId')),
    redact: async (body) => versionJson(await this.handler.redact(field(body, 'versionId'))),
  };
}
