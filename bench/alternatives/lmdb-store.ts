// What a user would write with lmdb-js: metadata and content in two named databases of one
// environment (a listing reads only the small metadata values), writes in lmdb-js's asynchronous
// transactions, each command answered after `flushed` so it is as durable as ours.

import { open, type Database, type RootDatabase } from 'lmdb';
import type { Meta, Tx, TxStore } from './memory-commands.js';

type MetaRow = [size: number, lines: number, createdAt: number, updatedAt: number];

function upper(prefix: string): string {
  return `${prefix.slice(0, -1)}0`;
}

export interface LmdbStore extends TxStore {
  bulkPut(entries: Iterable<readonly [string, string]>): Promise<void>;
}

export function openLmdbStore(dir: string): LmdbStore {
  const env: RootDatabase = open({ path: dir, compression: false });
  const metaDb: Database<MetaRow, string> = env.openDB({ name: 'meta' });
  const bodyDb: Database<string, string> = env.openDB({ name: 'body', encoding: 'string' });

  const tx: Tx = {
    meta(path) {
      const row = metaDb.get(path);
      return row && { size: row[0], lines: row[1], createdAt: row[2], updatedAt: row[3] };
    },
    content: (path) => bodyDb.get(path),
    *sizesUnder(prefix) {
      for (const { key, value } of metaDb.getRange({ start: prefix, end: upper(prefix) })) {
        yield [key, value[0]] as const;
      }
    },
    anyUnder(prefix) {
      for (const _ of metaDb.getKeys({ start: prefix, end: upper(prefix), limit: 1 })) return true;
      return false;
    },
    put(path: string, content: string, m: Meta) {
      metaDb.putSync(path, [m.size, m.lines, m.createdAt, m.updatedAt]);
      bodyDb.putSync(path, content);
    },
    deleteTree(path) {
      const doomed = [...(metaDb.get(path) ? [path] : []), ...metaDb.getKeys(range(path))];
      for (const key of doomed) {
        metaDb.removeSync(key);
        bodyDb.removeSync(key);
      }
      return doomed.length;
    },
    moveTree(from, to, now) {
      const moving = [...(metaDb.get(from) ? [from] : []), ...metaDb.getKeys(range(from))];
      for (const key of moving) {
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
    read: (fn) => fn(tx),
    async write(fn) {
      const result = await env.transaction(() => fn(tx));
      await env.flushed;
      return result;
    },
    async bulkPut(entries) {
      const now = Date.now();
      await env.transaction(() => {
        for (const [path, content] of entries) {
          let lines = 1;
          for (let i = content.indexOf('\n'); i !== -1; i = content.indexOf('\n', i + 1)) lines++;
          metaDb.putSync(path, [Buffer.byteLength(content), lines, now, now]);
          bodyDb.putSync(path, content);
        }
      });
      await env.flushed;
    },
    close: () => env.close(),
  };
}

function range(path: string): { start: string; end: string } {
  return { start: `${path}/`, end: upper(`${path}/`) };
}
