// better-sqlite3 (installed under bench/peers/) behind the store's driver seam.
import { betterSqlite3 } from '../peers.js';
import type { SqlDriver } from './sql-driver.js';

export function openBetterSqlite3(file: string): SqlDriver {
  const db = new (betterSqlite3())(file);
  return {
    exec: (sql) => void db.exec(sql),
    prepare(sql) {
      const reads = /^\s*select/i.test(sql);
      const s = reads ? db.prepare(sql).raw() : db.prepare(sql);
      return {
        row: (...p) => s.get(...p) as unknown[] | undefined,
        rows: (...p) => s.all(...p) as unknown[][],
        each: (...p) => s.iterate(...p) as Iterable<unknown[]>,
        run: (...p) => s.run(...p).changes,
      };
    },
    immediate: (fn) => db.transaction(fn).immediate(),
    close() {
      if (db.open) db.close();
    },
  };
}
