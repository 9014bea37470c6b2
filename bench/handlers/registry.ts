import type { Backend } from './types.js';

export interface BackendInfo {
  id: string;
  label: string;
  family: string;
  ours: boolean;
}

/** Column order of the table. Ours first; the ratio columns divide ours by each alternative. */
export const BACKENDS: readonly BackendInfo[] = [
  { id: 'rabosh', label: 'ours (listingIndex off)', family: 'rabosh', ours: true },
  { id: 'rabosh-index', label: 'ours (listingIndex on)', family: 'rabosh', ours: true },
  { id: 'sdk-fs', label: 'SDK filesystem tool', family: 'sdk-fs', ours: false },
  { id: 'sqlite', label: 'SQLite (better-sqlite3)', family: 'sqlite', ours: false },
  { id: 'sqlite-tuned', label: 'SQLite+ (covering index, tuned listing)', family: 'sqlite', ours: false },
  { id: 'lmdb', label: 'LMDB (lmdb-js)', family: 'lmdb', ours: false },
];

/** Imported lazily so a child loads only the engine it measures (RSS and open time depend on it). */
export async function loadBackend(id: string): Promise<Backend> {
  switch (id) {
    case 'rabosh':
      return (await import('./rabosh.js')).raboshBackend(false);
    case 'rabosh-index':
      return (await import('./rabosh.js')).raboshBackend(true);
    case 'sdk-fs':
      return (await import('./sdk-fs.js')).sdkFsBackend;
    case 'sqlite':
      return (await import('./alternatives.js')).sqliteBackend;
    case 'sqlite-tuned':
      return (await import('./alternatives.js')).sqliteTunedBackend;
    case 'lmdb':
      return (await import('./alternatives.js')).lmdbBackend;
    default:
      throw new Error(`unknown backend ${id}`);
  }
}
