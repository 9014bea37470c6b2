/**
 * Memories as MCP resources: `/memories/notes/a b.md` is `memory:///memories/notes/a%20b.md`.
 * Each path segment is percent-encoded on its own, so a memory's name may hold any character
 * (`%`, `?`, `#`, spaces, non-ASCII) and still round-trip through a URI.
 */

export const SCHEME = 'memory://';

export function uriOf(path: string): string {
  return SCHEME + path.split('/').map(encodeURIComponent).join('/');
}

/** The memory path a URI names, or null when it is not one of this server's URIs. */
export function pathOf(uri: unknown): string | null {
  if (typeof uri !== 'string' || !uri.startsWith(`${SCHEME}/memories/`)) return null;
  try {
    return uri.slice(SCHEME.length).split('/').map(decodeURIComponent).join('/');
  } catch {
    return null;
  }
}

/** What a client is told a memory holds: markdown for `.md`, plain text otherwise. */
export function mimeTypeOf(path: string): string {
  return path.toLowerCase().endsWith('.md') ? 'text/markdown' : 'text/plain';
}
