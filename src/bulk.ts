/**
 * Whole-scope export and one-commit import, for hosts and tools that move memories to and from
 * plain files. Not model commands: an export includes hidden memories, and a refused import is
 * an exception for the host, not a string for the model.
 */

import { InvalidArgumentError, native } from './errors.js';
import type { NativeMemories, NativeMemoryFile } from './native.js';
import type { Same } from './same-shape.js';
import { MemoryPath } from './path.js';

/** One memory as plain data. */
export interface MemoryFile {
  /** The memory's path; normalised on export, normalised by the import. */
  path: string;
  /** The content, as stored. */
  content: string;
}

// The public shape is the binding's, documented here for hosts (the compiler holds them together).
const memoryFileMatchesBinding: Same<MemoryFile, NativeMemoryFile> = true;
void memoryFileMatchesBinding;

/** A memory as exported, with its timestamps. */
export interface ExportedMemory extends MemoryFile {
  /** When the memory was first created. */
  createdAt: Date;
  /** When the memory was last changed. */
  updatedAt: Date;
}

/** How an import treats memories that already exist. */
export interface ImportOptions {
  /** Replace existing memories (keeping their createdAt) instead of refusing the import. */
  overwrite?: boolean;
}

/** What an import wrote. */
export interface ImportResult {
  /** How many memories were written. */
  memories: number;
  /** Their total content in UTF-8 bytes. */
  bytes: number;
}

export async function exportFrom(m: NativeMemories): Promise<ExportedMemory[]> {
  const files = await native(() => m.exportMemories());
  return files.map((f) => ({
    path: f.path,
    content: f.content,
    createdAt: new Date(f.createdAt),
    updatedAt: new Date(f.updatedAt),
  }));
}

/** The conflict's advice to a caller of the API; the CLI restates it as its own flag. */
export const OVERWRITE_HINT = 'pass overwrite: true to replace existing memories';

export async function importInto(m: NativeMemories, files: readonly MemoryFile[], options: ImportOptions = {}): Promise<ImportResult> {
  const normalised = files.map((f, i) => {
    const path = typeof f?.path === 'string' ? MemoryPath.normalise(f.path) : null;
    if (path === null) {
      throw new InvalidArgumentError(`cannot import file ${i}: ${JSON.stringify(f?.path)} is not a memory path`);
    }
    if (typeof f.content !== 'string') {
      throw new InvalidArgumentError(`cannot import ${path}: content must be a string`);
    }
    return { path, content: f.content };
  });
  const r = await native(() => m.importMemories(normalised, options.overwrite === true));
  switch (r.type) {
    case 'Imported':
      return { memories: r.memories, bytes: r.bytes };
    case 'Exists':
      throw new InvalidArgumentError(`nothing imported: ${r.path} already exists (${OVERWRITE_HINT})`);
    case 'Duplicate':
      throw new InvalidArgumentError(`nothing imported: ${r.path} appears more than once`);
    case 'TooLarge':
      throw new InvalidArgumentError(`nothing imported: ${r.path} exceeds the maximum memory size of ${r.limit} bytes`);
  }
}
