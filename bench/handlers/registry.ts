import type { Backend } from './types.js';

export interface BackendInfo {
  id: string;
  label: string;
  family: string;
  ours: boolean;
  /**
   * The runtime its children run under when not the bench's own Node: `node24`, the official
   * Node 24 binary (node:sqlite), or `bun` (bun:sqlite). See bench/runtimes.ts.
   */
  runtime?: 'node24' | 'bun';
  /**
   * The measurements (ids or id prefixes, as RABOSH_BENCH_ONLY takes them) this column runs;
   * all when absent. Ours under the other runtimes runs the reads and the open only: the
   * listing, view and open rows the goals name "in both runtimes" (issue 24), so the run does not
   * double its length.
   */
  only?: readonly string[];
}

/** Whether column `b` runs measurement `instanceId`. */
export function runsMeasurement(b: BackendInfo, instanceId: string): boolean {
  return !b.only || b.only.some((p) => instanceId === p || instanceId.startsWith(`${p}/`));
}

/** Column order of the table. Ours first; the ratio columns divide ours by each alternative. */
export const BACKENDS: readonly BackendInfo[] = [
  { id: 'rabosh', label: 'ours (listingIndex off)', family: 'rabosh', ours: true },
  { id: 'rabosh-index', label: 'ours (listingIndex on)', family: 'rabosh', ours: true },
  // The same handler and addon, its children under the other runtimes a user embeds it in.
  {
    id: 'rabosh-node24',
    label: 'ours under Node 24 (listingIndex on)',
    family: 'rabosh',
    ours: true,
    runtime: 'node24',
    only: ['read', 'open'],
  },
  { id: 'rabosh-bun', label: 'ours under Bun (listingIndex on)', family: 'rabosh', ours: true, runtime: 'bun', only: ['read', 'open'] },
  { id: 'sdk-fs', label: 'SDK filesystem tool', family: 'sdk-fs', ours: false },
  { id: 'sqlite', label: 'SQLite (better-sqlite3)', family: 'sqlite', ours: false },
  { id: 'sqlite-tuned', label: 'SQLite+ (covering index, tuned listing)', family: 'sqlite', ours: false },
  { id: 'node-sqlite', label: 'node:sqlite (Node 24, covering index, tuned listing)', family: 'sqlite', ours: false, runtime: 'node24' },
  { id: 'bun-sqlite', label: 'bun:sqlite (Bun, covering index, tuned listing)', family: 'sqlite', ours: false, runtime: 'bun' },
  { id: 'lmdb', label: 'LMDB (lmdb-js)', family: 'lmdb', ours: false },
  { id: 'lmdb-direct', label: 'LMDB-direct (lmdb-js, one get per view, one transaction per write)', family: 'lmdb-direct', ours: false },
];

/** Imported lazily so a child loads only the engine it measures (RSS and open time depend on it). */
export async function loadBackend(id: string): Promise<Backend> {
  switch (id) {
    case 'rabosh':
      return (await import('./rabosh.js')).raboshBackend(false);
    case 'rabosh-index':
    case 'rabosh-node24':
    case 'rabosh-bun':
      return (await import('./rabosh.js')).raboshBackend(true);
    case 'sdk-fs':
      return (await import('./sdk-fs.js')).sdkFsBackend;
    case 'sqlite':
      return (await import('./alternatives.js')).sqliteBackend((await import('../alternatives/sql-better-sqlite3.js')).openBetterSqlite3);
    case 'sqlite-tuned':
      return (await import('./alternatives.js')).sqliteTunedBackend(
        (await import('../alternatives/sql-better-sqlite3.js')).openBetterSqlite3,
      );
    case 'node-sqlite':
      return (await import('./alternatives.js')).sqliteTunedBackend((await import('../alternatives/sql-node-sqlite.js')).openNodeSqlite);
    case 'bun-sqlite':
      return (await import('./alternatives.js')).sqliteTunedBackend((await import('../alternatives/sql-bun-sqlite.js')).openBunSqlite);
    case 'lmdb':
      return (await import('./alternatives.js')).lmdbBackend;
    case 'lmdb-direct':
      return (await import('./alternatives.js')).lmdbDirectBackend;
    default:
      throw new Error(`unknown backend ${id}`);
  }
}
