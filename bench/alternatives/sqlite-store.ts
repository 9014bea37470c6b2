// What a user would write with SQLite: one table, WAL, synchronous=FULL, and a covering index on
// (path, size) so a listing reads the index only, never the content column. The binding
// (better-sqlite3, node:sqlite, bun:sqlite) comes in through the driver seam of sql-driver.ts.

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Meta, Tx, TxStore } from './memory-commands.js';
import type { SqlDriver } from './sql-driver.js';

function upper(prefix: string): string {
  // Every prefix here ends in '/', and '0' is the next code point: [prefix, upper) is the subtree.
  return `${prefix.slice(0, -1)}0`;
}

export interface SqliteStore extends TxStore {
  bulkPut(entries: Iterable<readonly [string, string]>): void;
  /** Whether a memory is stored at exactly `path`. */
  has(path: string): boolean;
  /** [path, size] of every memory under `prefix` in one call, from the covering index. */
  sizesUnderAll(prefix: string): [string, number][];
}

/** Opens (creating) `dir`/memories.sqlite through `driver`. */
export function openSqliteStore(dir: string, driver: (file: string) => SqlDriver): SqliteStore {
  mkdirSync(dir, { recursive: true });
  const db = driver(join(dir, 'memories.sqlite'));
  db.exec('PRAGMA journal_mode = WAL');
  db.exec('PRAGMA synchronous = FULL');
  db.exec(`
    CREATE TABLE IF NOT EXISTS memories (
      path TEXT NOT NULL UNIQUE,
      size INTEGER NOT NULL,
      lines INTEGER NOT NULL,
      created_at INTEGER NOT NULL,
      updated_at INTEGER NOT NULL,
      content TEXT NOT NULL
    );
    CREATE INDEX IF NOT EXISTS memories_listing ON memories(path, size);
  `);
  const metaStmt = db.prepare('SELECT size, lines, created_at, updated_at FROM memories WHERE path = ?');
  const contentStmt = db.prepare('SELECT content FROM memories WHERE path = ?');
  const sizesStmt = db.prepare('SELECT path, size FROM memories INDEXED BY memories_listing WHERE path >= ? AND path < ?');
  const hasStmt = db.prepare('SELECT 1 FROM memories WHERE path = ?');
  const anyStmt = db.prepare('SELECT 1 FROM memories WHERE path >= ? AND path < ? LIMIT 1');
  const putStmt = db.prepare(`
    INSERT INTO memories (path, size, lines, created_at, updated_at, content) VALUES (?, ?, ?, ?, ?, ?)
    ON CONFLICT(path) DO UPDATE SET size = excluded.size, lines = excluded.lines,
      created_at = excluded.created_at, updated_at = excluded.updated_at, content = excluded.content`);
  const deleteStmt = db.prepare('DELETE FROM memories WHERE path = ? OR (path >= ? AND path < ?)');
  const moveStmt = db.prepare(`
    UPDATE memories SET path = ? || substr(path, length(?) + 1), updated_at = ?
    WHERE path = ? OR (path >= ? AND path < ?)`);

  const tx: Tx = {
    meta(path) {
      const row = metaStmt.row(path) as [number, number, number, number] | undefined;
      return row && { size: row[0], lines: row[1], createdAt: row[2], updatedAt: row[3] };
    },
    content: (path) => contentStmt.row(path)?.[0] as string | undefined,
    *sizesUnder(prefix) {
      for (const row of sizesStmt.each(prefix, upper(prefix))) yield row as [string, number];
    },
    anyUnder: (prefix) => anyStmt.row(prefix, upper(prefix)) !== undefined,
    put(path: string, content: string, m: Meta) {
      putStmt.run(path, m.size, m.lines, m.createdAt, m.updatedAt, content);
    },
    deleteTree: (path) => deleteStmt.run(path, `${path}/`, upper(`${path}/`)),
    moveTree(from, to, now) {
      moveStmt.run(to, from, now, from, `${from}/`, upper(`${from}/`));
    },
  };

  return {
    // Every binding here is synchronous: nothing else can run between the statements of `fn`.
    read: (fn) => fn(tx),
    write: (fn) => {
      try {
        return Promise.resolve(db.immediate(() => fn(tx)));
      } catch (err) {
        return Promise.reject(err);
      }
    },
    has: (path) => hasStmt.row(path) !== undefined,
    sizesUnderAll: (prefix) => sizesStmt.rows(prefix, upper(prefix)) as [string, number][],
    bulkPut(entries) {
      const now = Date.now();
      db.immediate(() => {
        for (const [path, content] of entries) {
          let lines = 1;
          for (let i = content.indexOf('\n'); i !== -1; i = content.indexOf('\n', i + 1)) lines++;
          putStmt.run(path, Buffer.byteLength(content), lines, now, now, content);
        }
      });
    },
    async close() {
      db.close();
    },
  };
}
