/**
 * The handler's whole-scope read and one-commit write, which `export` and `import` need.
 * Neither can be built from the six model commands: a view hides dot-files and node_modules
 * and renders numbered lines, and one create per file is one commit per file.
 */
import type { RaboshMemoryToolHandler } from '../../index.js';
import { CliError } from './exit.js';

export interface MemoryFile {
  /** Normalised memory path, `/memories/...`. */
  path: string;
  content: string;
}

interface BulkHandler {
  exportMemories(): Promise<MemoryFile[]>;
  importMemories(files: MemoryFile[], options: { overwrite: boolean }): Promise<{ memories: number; bytes: number }>;
}

export function bulk(handler: RaboshMemoryToolHandler): BulkHandler {
  const h = handler as unknown as Partial<BulkHandler>;
  if (typeof h.exportMemories !== 'function' || typeof h.importMemories !== 'function') {
    throw new CliError(
      'this build of rabosh-memory has no whole-scope export/import (RaboshMemoryToolHandler.exportMemories / importMemories)',
      1,
      'CLI_UNSUPPORTED',
    );
  }
  return h as BulkHandler;
}
