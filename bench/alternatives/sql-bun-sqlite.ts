// Bun's built-in SQLite (`bun:sqlite`) behind the store's driver seam. Loaded only in a child
// that runs under Bun.
import { createRequire } from 'node:module';
import type { SqlDriver } from './sql-driver.js';

interface BunStatement {
  values(...p: unknown[]): unknown[][];
  run(...p: unknown[]): { changes: number };
}
interface BunDatabase {
  exec(sql: string): void;
  prepare(sql: string): BunStatement;
  transaction<T>(fn: () => T): { immediate(): T };
  close(): void;
}

export function openBunSqlite(file: string): SqlDriver {
  const { Database } = createRequire(import.meta.url)('bun:sqlite') as { Database: new (file: string) => BunDatabase };
  const db = new Database(file);
  let open = true;
  return {
    exec: (sql) => db.exec(sql),
    prepare(sql) {
      const s = db.prepare(sql);
      // bun:sqlite has no array-row get or iterate; values() is its raw mode.
      return {
        row: (...p) => s.values(...p)[0],
        rows: (...p) => s.values(...p),
        each: (...p) => s.values(...p),
        run: (...p) => s.run(...p).changes,
      };
    },
    immediate: (fn) => db.transaction(fn).immediate(),
    close() {
      if (open) db.close();
      open = false;
    },
  };
}
