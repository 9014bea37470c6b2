// The six commands over a small transactional key/value seam, shared by the SQLite and LMDB
// alternatives so that the two differ only in storage. Each command is one transaction; every
// check runs inside it, so a read-modify-write cannot interleave with another command.

// The contract's pure parts come from the one longhand model the tests use too, written
// independently of the product: an alternative that shared our strings module could not
// disagree with us, and the run asserts that they agree.
import {
  ROOT,
  fileView,
  insertLines,
  lineCount,
  listing,
  normalise as normalisePath,
  renameTooLong,
  strReplace,
  tooLarge as tooBig,
  type Edit,
} from '../../__test__/fixtures/contract-model.js';
import type { BenchHandler } from '../handlers/types.js';

export interface Meta {
  size: number;
  lines: number;
  createdAt: number;
  updatedAt: number;
}

/** What a store must offer inside one transaction (or one read snapshot). */
export interface Tx {
  meta(path: string): Meta | undefined;
  content(path: string): string | undefined;
  /** Sizes of the memories whose path starts with `prefix`, in any order. */
  sizesUnder(prefix: string): Iterable<readonly [string, number]>;
  anyUnder(prefix: string): boolean;
  put(path: string, content: string, meta: Meta): void;
  /** Deletes the memory at `path` and every memory under `path/`; returns how many. */
  deleteTree(path: string): number;
  /** Moves the memory at `from` and everything under `from/` to `to`, keeping createdAt. */
  moveTree(from: string, to: string, now: number): void;
}

export interface TxStore {
  read<T>(fn: (tx: Tx) => T): T;
  write<T>(fn: (tx: Tx) => T): Promise<T>;
  close(): Promise<void>;
}

export interface CommandOptions {
  maxMemoryBytes: number;
  viewMaxChars: number;
}

const DEFAULTS: CommandOptions = { maxMemoryBytes: 1_048_576, viewMaxChars: 16_000 };

function text(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

/** A handler with the SDK's MemoryToolHandlers shape that answers in the contract's strings. */
export class KvMemoryHandler {
  readonly #store: TxStore;
  readonly #opts: CommandOptions;
  constructor(store: TxStore, opts: Partial<CommandOptions> = {}) {
    this.#store = store;
    this.#opts = { ...DEFAULTS, ...opts };
  }

  close(): Promise<void> {
    return this.#store.close();
  }

  async view(input: { path?: unknown; view_range?: unknown }): Promise<string> {
    const raw = text(input.path);
    const path = normalisePath(raw);
    const missing = `The path ${path ?? raw} does not exist. Please provide a valid path.`;
    if (path === null) return missing;
    const viewMaxChars = this.#opts.viewMaxChars;
    return this.#store.read((tx) => {
      if (path !== ROOT) {
        const meta = tx.meta(path);
        if (meta) return fileView(path, tx.content(path)!, input.view_range, viewMaxChars).text;
      }
      const prefix = `${path}/`;
      const rel = function* () {
        for (const [p, size] of tx.sizesUnder(prefix)) yield [p.slice(prefix.length), size] as const;
      };
      return listing(path, rel()) ?? missing;
    });
  }

  async create(input: { path?: unknown; file_text?: unknown }): Promise<string> {
    const raw = text(input.path);
    const path = normalisePath(raw);
    if (path === null) return `Error: File ${raw} already exists`;
    if (path === ROOT) return `Error: File ${ROOT} already exists`;
    const body = text(input.file_text);
    const size = Buffer.byteLength(body);
    if (size > this.#opts.maxMemoryBytes) return tooBig(path, this.#opts.maxMemoryBytes);
    return this.#store.write((tx) => {
      if (tx.meta(path)) return `Error: File ${path} already exists`;
      const now = Date.now();
      tx.put(path, body, { size, lines: lineCount(body), createdAt: now, updatedAt: now });
      return `File created successfully at: ${path}`;
    });
  }

  async str_replace(input: { path?: unknown; old_str?: unknown; new_str?: unknown }): Promise<string> {
    const raw = text(input.path);
    const path = normalisePath(raw);
    const missing = `Error: The path ${path ?? raw} does not exist. Please provide a valid path.`;
    if (path === null || path === ROOT) return missing;
    return this.#store.write((tx) => {
      const meta = tx.meta(path);
      if (!meta) return missing;
      const edit = strReplace(path, tx.content(path)!, text(input.old_str), text(input.new_str));
      return this.#commitEdit(tx, path, meta, edit);
    });
  }

  async insert(input: { path?: unknown; insert_line?: unknown; insert_text?: unknown }): Promise<string> {
    const raw = text(input.path);
    const path = normalisePath(raw);
    const missing = `Error: The path ${path ?? raw} does not exist`;
    if (path === null || path === ROOT) return missing;
    return this.#store.write((tx) => {
      const meta = tx.meta(path);
      if (!meta) return missing;
      const edit = insertLines(path, tx.content(path)!, input.insert_line, text(input.insert_text));
      return this.#commitEdit(tx, path, meta, edit);
    });
  }

  #commitEdit(tx: Tx, path: string, meta: Meta, edit: Edit): string {
    if (!edit.ok) return edit.answer;
    const size = Buffer.byteLength(edit.content);
    if (size > this.#opts.maxMemoryBytes) return tooBig(path, this.#opts.maxMemoryBytes);
    tx.put(path, edit.content, {
      size,
      lines: lineCount(edit.content),
      createdAt: meta.createdAt,
      updatedAt: Date.now(),
    });
    return edit.answer;
  }

  async delete(input: { path?: unknown }): Promise<string> {
    const raw = text(input.path);
    const path = normalisePath(raw);
    const missing = `Error: The path ${path ?? raw} does not exist`;
    if (path === null) return missing;
    if (path === ROOT) return 'Error: Cannot delete the /memories directory itself';
    return this.#store.write((tx) => (tx.deleteTree(path) === 0 ? missing : `Successfully deleted ${path}`));
  }

  async rename(input: { old_path?: unknown; new_path?: unknown }): Promise<string> {
    const rawOld = text(input.old_path);
    const rawNew = text(input.new_path);
    const from = normalisePath(rawOld);
    if (from === null) return `Error: The path ${rawOld} does not exist`;
    const to = normalisePath(rawNew);
    if (to === null) return `Error: The destination ${rawNew} already exists`;
    if (from === ROOT) return 'Error: Cannot rename the /memories directory itself';
    if (to === ROOT || to === from) return `Error: The destination ${to} already exists`;
    if (to.startsWith(`${from}/`)) return `Error: Cannot rename ${from} to ${to}, which is inside it`;
    return this.#store.write((tx) => {
      if (!tx.meta(from) && !tx.anyUnder(`${from}/`)) return `Error: The path ${from} does not exist`;
      const moving = [...(tx.meta(from) ? [from] : []), ...[...tx.sizesUnder(`${from}/`)].map(([p]) => p)];
      if (renameTooLong(from, to, moving)) return `Error: The destination ${to} already exists`;
      if (tx.meta(to) || tx.anyUnder(`${to}/`)) return `Error: The destination ${to} already exists`;
      tx.moveTree(from, to, Date.now());
      return `Successfully renamed ${from} to ${to}`;
    });
  }
}

/** `kv` as a benchmarked handler whose views `view` answers (a tuned read path); the rest are kv's. */
export function withView(kv: KvMemoryHandler, view: BenchHandler['view']): BenchHandler {
  return {
    view,
    create: (i) => kv.create(i),
    str_replace: (i) => kv.str_replace(i),
    insert: (i) => kv.insert(i),
    delete: (i) => kv.delete(i),
    rename: (i) => kv.rename(i),
    close: () => kv.close(),
  };
}
