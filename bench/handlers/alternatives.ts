import { KvMemoryHandler } from '../alternatives/memory-commands.js';
import { openLmdbStore } from '../alternatives/lmdb-store.js';
import { openSqliteStore } from '../alternatives/sqlite-store.js';
import type { Backend } from './types.js';

export const sqliteBackend: Backend = {
  family: 'sqlite',
  async open(dir) {
    return new KvMemoryHandler(openSqliteStore(dir));
  },
  async seed(dir, entries) {
    const store = openSqliteStore(dir);
    store.bulkPut(entries);
    await store.close();
  },
};

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
};
