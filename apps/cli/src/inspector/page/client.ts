/** The inspector's JSON API, as the page calls it (relative URLs: they carry the token). */

import type { StoreInfo } from './store-info.js';

export type { StoreInfo };

export interface Usage {
  memories: number;
  bytes: number;
  history?: { versions: number; bytes: number };
}

/** One name of a directory: [name, bytes of the memory at it or null, memories below, bytes below]. */
export type ChildRow = readonly [string, number | null, number, number];

export interface Children {
  path: string;
  memories: number;
  bytes: number;
  /** Names in the directory over all pages. */
  total: number;
  entries: ChildRow[];
  next: string | null;
  digest: string;
}

/** A page of the filter's matches (apps/cli/src/inspector/search.ts). */
export interface SearchPage {
  memories: { path: string; bytes: number }[];
  next: string | null;
}

export interface Memory {
  path: string;
  content: string;
  contentSha256: string;
  versionId: string | null;
}

export interface Version {
  id: string;
  memoryId: string;
  path: string | null;
  operation: 'created' | 'modified' | 'renamed' | 'deleted';
  actor: { type: string; id: string } | null;
  createdAt: string;
  contentSha256: string | null;
  sizeBytes: number | null;
  redactedAt: string | null;
}

export interface Hunk {
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
  lines: string[];
}

export interface Diff {
  from: Version | null;
  to: Version;
  identical: boolean;
  /** null when the two were too far apart to diff in time. */
  hunks: Hunk[] | null;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

async function answer<T>(res: Response): Promise<T> {
  const body = (await res.json().catch(() => null)) as { error?: { message?: string } } | null;
  if (!res.ok) throw new ApiError(res.status, body?.error?.message ?? `HTTP ${res.status}`);
  return body as T;
}

function get<T>(name: string, query: Record<string, string> = {}): Promise<T> {
  const q = new URLSearchParams(query).toString();
  return fetch(`api/${name}${q ? `?${q}` : ''}`, { cache: 'no-store' }).then((r) => answer<T>(r));
}

function post<T>(name: string, body: unknown): Promise<T> {
  return fetch(`api/${name}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  }).then((r) => answer<T>(r));
}

export const api = {
  info: () => get<StoreInfo>('info'),
  usage: () => get<Usage>('usage'),
  children: (path: string, limit: number) => get<Children>('children', { path, limit: String(limit) }),
  digests: (dirs: { path: string; limit: number }[]) => {
    const q = new URLSearchParams();
    for (const d of dirs) q.append('d', `${d.limit}:${d.path}`);
    return fetch(`api/digests?${q}`, { cache: 'no-store' }).then((r) => answer<{ digests: Record<string, string> }>(r));
  },
  search: (q: string, after: string | null) => get<SearchPage>('search', after === null ? { q } : { q, after }),
  memory: (path: string) => get<Memory | null>('memory', { path }),
  versions: (path: string, cursor?: string) =>
    get<{ data: Version[]; nextCursor: string | null }>('versions', cursor ? { path, cursor } : { path }),
  version: (id: string) => get<Version & { content: string | null }>('version', { id }),
  diff: (to: string, from: string | null) => get<Diff>('diff', from ? { to, from } : { to }),
  revert: (path: string, versionId: string) => post<{ versionId: string | null }>('revert', { path, versionId }),
  redact: (versionId: string) => post<Version>('redact', { versionId }),
};
