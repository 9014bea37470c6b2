import type { Entry } from '../workload.js';

/** The six commands as every benchmarked handler answers them: the tool-result text. */
export interface BenchHandler {
  view(input: { command: 'view'; path: string; view_range?: [number, number] }): Promise<string>;
  create(input: { command: 'create'; path: string; file_text: string }): Promise<string>;
  str_replace(input: { command: 'str_replace'; path: string; old_str: string; new_str: string }): Promise<string>;
  insert(input: { command: 'insert'; path: string; insert_line: number; insert_text: string }): Promise<string>;
  delete(input: { command: 'delete'; path: string }): Promise<string>;
  rename(input: { command: 'rename'; old_path: string; new_path: string }): Promise<string>;
  close(): Promise<void>;
}

export interface Backend {
  /** Stores of one family are interchangeable: ours with and without listingIndex share one. */
  family: string;
  /** Opens the store at `dir` with every command durable before it answers. */
  open(dir: string): Promise<BenchHandler>;
  /**
   * Bulk load: ours in buffered mode then one sync, SQLite and LMDB in one transaction, the
   * filesystem with plain writes then one sync of the file system.
   */
  seed(dir: string, entries: Iterable<Entry>): Promise<void>;
  /**
   * Writes memories a chunk at a time, each chunk one durable transaction (ours: one
   * `importMemories` over a store opened with `durability: 'sync'`): the scale run's import.
   */
  importer?(dir: string): Promise<ChunkImporter>;
  /** Loads whatever `open` would load lazily, so a memory baseline can be taken after it. */
  preload?(): Promise<void>;
}

export interface ChunkImporter {
  put(chunk: readonly Entry[]): Promise<void>;
  close(): Promise<void>;
}
