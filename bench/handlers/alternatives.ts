import { KvMemoryHandler, withView } from '../alternatives/memory-commands.js';
import { openLmdbDirect, seedLmdbDirect } from '../alternatives/lmdb-direct.js';
import { openLmdbStore } from '../alternatives/lmdb-store.js';
import { openSqliteStore } from '../alternatives/sqlite-store.js';
import { tunedListing } from '../alternatives/tuned-listing.js';
import type { SqlDriver } from '../alternatives/sql-driver.js';
import { normalise, ROOT } from '../../__test__/fixtures/contract-model.js';
import type { Backend } from './types.js';

type Driver = (file: string) => SqlDriver;

/** The SQLite store over one binding. All bindings share one file format, hence one family. */
export function sqliteBackend(driver: Driver): Backend {
  return {
    family: 'sqlite',
    // Loads the binding (better-sqlite3 is required on first use) outside every timed open.
    async preload() {
      driver(':memory:').close();
    },
    async open(dir) {
      return new KvMemoryHandler(openSqliteStore(dir, driver));
    },
    async seed(dir, entries) {
      const store = openSqliteStore(dir, driver);
      store.bulkPut(entries);
      await store.close();
    },
    async importer(dir) {
      const store = openSqliteStore(dir, driver);
      return { put: async (chunk) => store.bulkPut(chunk), close: () => store.close() };
    },
  };
}

/**
 * The same store (same file, same covering index on (path, size)) with the directory view
 * written for speed: every row in one `all()` call and a single-pass builder. Everything else
 * is the shared handler.
 */
export function sqliteTunedBackend(driver: Driver): Backend {
  return {
    family: 'sqlite',
    async open(dir) {
      const store = openSqliteStore(dir, driver);
      const kv = new KvMemoryHandler(store);
      return withView(kv, async (input) => {
        const path = normalise(input.path);
        if (path === null || (path !== ROOT && store.has(path))) return kv.view(input);
        const text = store.read(() => tunedListing(path, path === ROOT, store.sizesUnderAll(`${path}/`)));
        return text ?? kv.view(input);
      });
    },
    preload: sqliteBackend(driver).preload!,
    seed: sqliteBackend(driver).seed,
    importer: sqliteBackend(driver).importer!,
  };
}

export const lmdbBackend: Backend = {
  family: 'lmdb',
  async open(dir) {
    return new KvMemoryHandler(openLmdbStore(dir));
  },
  async seed(dir, entries) {
    const store = openLmdbStore(dir);
    await store.bulkPut(entries);
    await store.close();
  },
  async importer(dir) {
    const store = openLmdbStore(dir);
    return { put: (chunk) => store.bulkPut(chunk), close: () => store.close() };
  },
};

export const lmdbDirectBackend: Backend = {
  family: 'lmdb-direct',
  open: async (dir) => openLmdbDirect(dir),
  seed: seedLmdbDirect,
};
