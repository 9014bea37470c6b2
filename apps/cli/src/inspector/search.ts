/**
 * The inspector's filter, answered a page at a time. Text that is a memory path (normalised,
 * below /memories) is read as one: the memories whose path starts with it, case as written,
 * read from where that path sorts, so the answer costs the matches it shows and the filter of
 * one path does not read the whole scope (each write elsewhere re-runs an open filter). Any
 * other text is searched for in every path, in any case (`listMemories({ contains })`), which
 * reads the scope's keys (never content) up to its last match.
 */
import { MemoryPath, type RaboshMemoryToolHandler } from 'rabosh-memory';

/** A match as the page shows it: the path and the size of its content in UTF-8 bytes. */
export interface Match {
  path: string;
  bytes: number;
}

export interface SearchPage {
  memories: Match[];
  /** Pass as `after` for the next page; null when this page holds the last match. */
  next: string | null;
}

/** Memories the first read of a path's matches asks for; each next read asks for four times more. */
const FIRST_READ = 8;

/** The path `q` names when it is one (normalised, below the root); null for any other text. */
export function pathPrefix(q: string): string | null {
  return q !== '/memories' && MemoryPath.normalise(q) === q ? q : null;
}

export async function search(handler: RaboshMemoryToolHandler, q: string, limit: number, after?: string): Promise<SearchPage> {
  const prefix = pathPrefix(q);
  if (prefix === null) {
    const page = await handler.listMemories({ contains: q, limit, ...(after === undefined ? {} : { after }) });
    return { memories: page.memories.map((m) => ({ path: m.path, bytes: m.bytes })), next: page.next };
  }
  const memories: Match[] = [];
  // The path itself first: a listing resumes after a path, never at it.
  if (after === undefined) {
    const self = await handler.get(prefix);
    if (self !== null) memories.push({ path: prefix, bytes: Buffer.byteLength(self.content, 'utf8') });
  }
  if (after !== undefined && !after.startsWith(prefix)) return { memories, next: null };
  // Every path that starts with the prefix sorts at or after it, before any that does not: read
  // on from it until a path does not start with it, or one past a full page (so the page knows
  // whether another follows). Small reads first, so a prefix that matches little reads little.
  let from = after ?? prefix;
  let chunk = FIRST_READ;
  for (;;) {
    const page = await handler.listMemories({ after: from, limit: Math.min(chunk, limit - memories.length + 1) });
    for (const m of page.memories) {
      if (!m.path.startsWith(prefix)) return { memories, next: null };
      if (memories.length === limit) return { memories, next: memories[memories.length - 1]!.path };
      memories.push({ path: m.path, bytes: m.bytes });
    }
    if (page.next === null) return { memories, next: null };
    from = page.next;
    chunk *= 4;
  }
}
