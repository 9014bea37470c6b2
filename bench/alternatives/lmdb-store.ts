// What a user would write with lmdb-js: metadata and content in two named databases of one
// environment (a listing reads only the small metadata values), writes in lmdb-js's asynchronous
// transactions, each command answered after `flushed` so it is as durable as ours.

import type { Database } from 'lmdb';
import { anyKeyUnder, durably, keysAt, openEnv, removeKeys, txStoreOver, under } from './lmdb-env.js';
import type { Meta, Tx, TxStore } from './memory-commands.js';

type MetaRow = [size: number, lines: number, createdAt: number, updatedAt: number];

export interface LmdbStore extends TxStore {
  bulkPut(entries: Iterable<readonly [string, string]>): Promise<void>;
}

export function openLmdbStore(dir: string): LmdbStore {
  const env = openEnv(dir);
  const metaDb: Database<MetaRow, string> = env.openDB({ name: 'meta' });
  const bodyDb: Database<string, string> = env.openDB({ name: 'body', encoding: 'string' });

  const tx: Tx = {
    meta(path) {
      const row = metaDb.get(path);
      return row && { size: row[0], lines: row[1], createdAt: row[2], updatedAt: row[3] };
    },
    content: (path) => bodyDb.get(path),
    *sizesUnder(prefix) {
      for (const { key, value } of metaDb.getRange(under(prefix))) {
        yield [key, value[0]] as const;
      }
    },
    anyUnder: (prefix) => anyKeyUnder(metaDb, prefix),
    put(path: string, content: string, m: Meta) {
      metaDb.putSync(path, [m.size, m.lines, m.createdAt, m.updatedAt]);
      bodyDb.putSync(path, content);
    },
    deleteTree: (path) => removeKeys(keysAt(metaDb, path), metaDb, bodyDb),
    moveTree(from, to, now) {
      for (const key of keysAt(metaDb, from)) {
        const row = metaDb.get(key)!;
        const body = bodyDb.get(key)!;
        const target = to + key.slice(from.length);
        metaDb.removeSync(key);
        bodyDb.removeSync(key);
        metaDb.putSync(target, [row[0], row[1], row[2], now]);
        bodyDb.putSync(target, body);
      }
    },
  };

  return {
    ...txStoreOver(env, tx),
    async bulkPut(entries) {
      const now = Date.now();
      await durably(env, () => {
        for (const [path, content] of entries) {
          let lines = 1;
          for (let i = content.indexOf('\n'); i !== -1; i = content.indexOf('\n', i + 1)) lines++;
          metaDb.putSync(path, [Buffer.byteLength(content), lines, now, now]);
          bodyDb.putSync(path, content);
        }
      });
    },
  };
}
