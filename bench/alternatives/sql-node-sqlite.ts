// Node's built-in SQLite (`node:sqlite`, DatabaseSync) behind the store's driver seam. Loaded
// only in a child that runs under an official Node 24 binary (the bench's default Node may lack it).
import { createRequire } from 'node:module';
import { immediateByHand, type SqlDriver } from './sql-driver.js';

type SqlParam = null | number | bigint | string | NodeJS.ArrayBufferView;

export function openNodeSqlite(file: string): SqlDriver {
  // createRequire, not a static import: this repo's @types/node predates node:sqlite.
  const { DatabaseSync } = createRequire(import.meta.url)('node:sqlite') as {
    DatabaseSync: new (
      file: string,
    ) => {
      exec(sql: string): void;
      prepare(sql: string): {
        setReturnArrays(on: boolean): void;
        get(...p: SqlParam[]): unknown;
        all(...p: SqlParam[]): unknown[];
        iterate(...p: SqlParam[]): Iterable<unknown>;
        run(...p: SqlParam[]): { changes: number | bigint };
      };
      close(): void;
      isOpen: boolean;
    };
  };
  const db = new DatabaseSync(file);
  const exec = (sql: string) => db.exec(sql);
  return {
    exec,
    prepare(sql) {
      const s = db.prepare(sql);
      s.setReturnArrays(true);
      const p = (xs: unknown[]) => xs as SqlParam[];
      return {
        row: (...xs) => s.get(...p(xs)) as unknown[] | undefined,
        rows: (...xs) => s.all(...p(xs)) as unknown[][],
        each: (...xs) => s.iterate(...p(xs)) as Iterable<unknown[]>,
        run: (...xs) => Number(s.run(...p(xs)).changes),
      };
    },
    immediate: (fn) => immediateByHand(exec, fn),
    close() {
      if (db.isOpen) db.close();
    },
  };
}
