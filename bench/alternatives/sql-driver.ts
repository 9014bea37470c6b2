// The few calls the SQLite store makes, so one store (same schema, same statements, same covering
// index) runs over better-sqlite3, Node's built-in `node:sqlite` and Bun's `bun:sqlite`, and the
// three columns differ only in the binding. Rows are arrays (each driver's raw mode), never objects.

export interface SqlStatement {
  /** The first row, or undefined. */
  row(...params: unknown[]): unknown[] | undefined;
  rows(...params: unknown[]): unknown[][];
  each(...params: unknown[]): Iterable<unknown[]>;
  /** Runs a write; returns how many rows it changed. */
  run(...params: unknown[]): number;
}

export interface SqlDriver {
  exec(sql: string): void;
  prepare(sql: string): SqlStatement;
  /** Runs `fn` in one BEGIN IMMEDIATE … COMMIT, rolled back when it throws. */
  immediate<T>(fn: () => T): T;
  close(): void;
}

/** A driver's transaction where the binding has no helper for it (node:sqlite). */
export function immediateByHand<T>(exec: (sql: string) => void, fn: () => T): T {
  exec('BEGIN IMMEDIATE');
  let result: T;
  try {
    result = fn();
  } catch (err) {
    exec('ROLLBACK');
    throw err;
  }
  exec('COMMIT');
  return result;
}
