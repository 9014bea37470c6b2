// What a user would hand-write over node-postgres (`pg`): one table in a schema of its own,
// paths in the "C" collation (byte order, so a subtree is one index range), a covering index
// (path) INCLUDE (size) so a listing is an index-only scan that never reads content. Every
// command is one statement or one transaction; edits lock their row (SELECT … FOR UPDATE), a
// rename locks the table against other writers. The strings come from the longhand contract
// model, as for the embedded alternatives.
import pg from 'pg';
import {
  ROOT,
  fileView,
  insertLines,
  normalise,
  renameTooLong,
  stored,
  strReplace,
  tooLarge,
  type Edit,
} from '../../__test__/fixtures/contract-model.js';
import type { BenchHandler } from '../handlers/types.js';
import { tunedListing } from './tuned-listing.js';

const MAX_MEMORY_BYTES = 1_048_576;
const VIEW_MAX_CHARS = 16_000;

const text = (v: unknown): string => (typeof v === 'string' ? v : '');
const upper = (prefix: string): string => `${prefix.slice(0, -1)}0`;

export interface PgHandler extends BenchHandler {
  /** Bulk load in one statement (the peer of ours' importMemories). */
  importMemories(files: readonly { path: string; content: string }[]): Promise<void>;
}

export async function openPgHandler(url: string, schema: string, poolSize = 10): Promise<PgHandler> {
  const pool = new pg.Pool({ connectionString: url, max: poolSize });
  const t = `"${schema}".memories`;
  await pool.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
  await pool.query(`CREATE TABLE IF NOT EXISTS ${t} (path text COLLATE "C" PRIMARY KEY, size integer NOT NULL, content text NOT NULL)`);
  await pool.query(`CREATE INDEX IF NOT EXISTS memories_listing ON ${t} (path) INCLUDE (size)`);

  async function inTx<T>(fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
    const c = await pool.connect();
    try {
      await c.query('BEGIN');
      const r = await fn(c);
      await c.query('COMMIT');
      return r;
    } catch (err) {
      await c.query('ROLLBACK').catch(() => {});
      throw err;
    } finally {
      c.release();
    }
  }

  /** Reads the memory at `path` for update, applies `edit`, writes it back: one transaction. */
  function editOne(path: string, missing: string, edit: (content: string) => Edit): Promise<string> {
    return inTx(async (c) => {
      const r = await c.query<{ content: string }>(`SELECT content FROM ${t} WHERE path = $1 FOR UPDATE`, [path]);
      if (r.rowCount === 0) return missing;
      const e = edit(r.rows[0]!.content);
      if (!e.ok) return e.answer;
      const size = Buffer.byteLength(e.content);
      if (size > MAX_MEMORY_BYTES) return tooLarge(path, MAX_MEMORY_BYTES);
      await c.query(`UPDATE ${t} SET size = $2, content = $3 WHERE path = $1`, [path, size, e.content]);
      return e.answer;
    });
  }

  return {
    async view(input) {
      const raw = text(input.path);
      const path = normalise(raw);
      const missing = `The path ${path ?? raw} does not exist. Please provide a valid path.`;
      if (path === null) return missing;
      // One statement, so one snapshot: the memory itself or everything under it.
      const prefix = `${path}/`;
      const r = await pool.query({
        text: `SELECT path, size, CASE WHEN path = $1 THEN content END AS content FROM ${t} WHERE path = $1 OR (path >= $2 AND path < $3) ORDER BY path`,
        values: [path, prefix, upper(prefix)],
        rowMode: 'array',
      });
      const rows = r.rows as [string, number, string | null][];
      if (path !== ROOT && rows[0]?.[0] === path) return fileView(path, rows[0][2]!, input.view_range, VIEW_MAX_CHARS).text;
      return tunedListing(path, path === ROOT, rows as unknown as [string, number][]) ?? missing;
    },
    async create(input) {
      const raw = text(input.path);
      const path = normalise(raw);
      if (path === null) return `Error: File ${raw} already exists`;
      if (path === ROOT) return `Error: File ${ROOT} already exists`;
      const body = stored(text(input.file_text));
      const size = Buffer.byteLength(body);
      if (size > MAX_MEMORY_BYTES) return tooLarge(path, MAX_MEMORY_BYTES);
      const r = await pool.query(`INSERT INTO ${t} (path, size, content) VALUES ($1, $2, $3) ON CONFLICT (path) DO NOTHING`, [
        path,
        size,
        body,
      ]);
      return r.rowCount === 0 ? `Error: File ${path} already exists` : `File created successfully at: ${path}`;
    },
    async str_replace(input) {
      const raw = text(input.path);
      const path = normalise(raw);
      const missing = `Error: The path ${path ?? raw} does not exist. Please provide a valid path.`;
      if (path === null || path === ROOT) return missing;
      return editOne(path, missing, (content) => strReplace(path, content, text(input.old_str), text(input.new_str)));
    },
    async insert(input) {
      const raw = text(input.path);
      const path = normalise(raw);
      const missing = `Error: The path ${path ?? raw} does not exist`;
      if (path === null || path === ROOT) return missing;
      return editOne(path, missing, (content) => insertLines(path, content, input.insert_line, text(input.insert_text)));
    },
    async delete(input) {
      const raw = text(input.path);
      const path = normalise(raw);
      const missing = `Error: The path ${path ?? raw} does not exist`;
      if (path === null) return missing;
      if (path === ROOT) return 'Error: Cannot delete the /memories directory itself';
      const r = await pool.query(`DELETE FROM ${t} WHERE path = $1 OR (path >= $2 AND path < $3)`, [path, `${path}/`, upper(`${path}/`)]);
      return r.rowCount === 0 ? missing : `Successfully deleted ${path}`;
    },
    async rename(input) {
      const rawOld = text(input.old_path);
      const rawNew = text(input.new_path);
      const from = normalise(rawOld);
      if (from === null) return `Error: The path ${rawOld} does not exist`;
      const to = normalise(rawNew);
      if (to === null) return `Error: The destination ${rawNew} already exists`;
      if (from === ROOT) return 'Error: Cannot rename the /memories directory itself';
      if (to === ROOT || to === from) return `Error: The destination ${to} already exists`;
      if (to.startsWith(`${from}/`)) return `Error: Cannot rename ${from} to ${to}, which is inside it`;
      return inTx(async (c) => {
        await c.query(`LOCK TABLE ${t} IN SHARE ROW EXCLUSIVE MODE`);
        const under = (p: string) => [p, `${p}/`, upper(`${p}/`)];
        const moving = (await c.query<{ path: string }>(`SELECT path FROM ${t} WHERE path = $1 OR (path >= $2 AND path < $3)`, under(from)))
          .rows;
        if (moving.length === 0) return `Error: The path ${from} does not exist`;
        if (
          renameTooLong(
            from,
            to,
            moving.map((r) => r.path),
          )
        )
          return `Error: The destination ${to} already exists`;
        const taken = await c.query(`SELECT 1 FROM ${t} WHERE path = $1 OR (path >= $2 AND path < $3) LIMIT 1`, under(to));
        if (taken.rowCount !== 0) return `Error: The destination ${to} already exists`;
        await c.query(`UPDATE ${t} SET path = $4 || substr(path, length($1) + 1) WHERE path = $1 OR (path >= $2 AND path < $3)`, [
          ...under(from),
          to,
        ]);
        return `Successfully renamed ${from} to ${to}`;
      });
    },
    async importMemories(files) {
      await pool.query(
        `INSERT INTO ${t} (path, size, content) SELECT * FROM unnest($1::text[], $2::int[], $3::text[]) ON CONFLICT (path) DO NOTHING`,
        [files.map((f) => f.path), files.map((f) => Buffer.byteLength(f.content)), files.map((f) => f.content)],
      );
    },
    async close() {
      await pool.end();
    },
  };
}
