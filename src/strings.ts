/**
 * Every string the model reads (contract §4), in one place. Functions of already-decided
 * outcomes: nothing here looks at the store.
 */

// ---- sizes ----------------------------------------------------------------------------------

const UNITS = ['B', 'K', 'M', 'G'] as const;

/**
 * `0B`, `512B`, `4K`, `1.2K`: the largest unit not above the value (capped at G), no decimals
 * for a whole quotient, else one decimal rounded half to even on the exact quotient. Integer
 * arithmetic: `toFixed` rounds ties upward (1280 bytes would print `1.3K`).
 */
export function formatSize(bytes: number): string {
  if (!Number.isSafeInteger(bytes) || bytes < 0) throw new RangeError(`not a byte count: ${bytes}`);
  if (bytes === 0) return '0B';
  let exp = 0;
  while (exp < UNITS.length - 1 && bytes >= 1024 ** (exp + 1)) exp++;
  const unitName = UNITS[exp];
  const v = BigInt(bytes);
  const unit = 1024n ** BigInt(exp);
  if (v % unit === 0n) return `${v / unit}${unitName}`;
  let tenths = (v * 10n) / unit;
  const rest = (v * 10n) % unit;
  if (rest * 2n > unit || (rest * 2n === unit && tenths % 2n === 1n)) tenths += 1n;
  return `${tenths / 10n}.${tenths % 10n}${unitName}`;
}

// ---- view -----------------------------------------------------------------------------------

export const viewNotFound = (path: string) => `The path ${path} does not exist. Please provide a valid path.`;

export const viewTooManyLines = (path: string) => `File ${path} exceeds maximum line limit of 999,999 lines.`;

const numbered = (n: number, line: string) => `${String(n).padStart(6, ' ')}\t${line}`;

function isIntegerPair(r: unknown): r is [number, number] {
  return Array.isArray(r) && r.length === 2 && Number.isInteger(r[0]) && Number.isInteger(r[1]);
}

const clamp = (x: number, lo: number, hi: number) => Math.min(Math.max(x, lo), hi);

/**
 * A memory with line numbers. `viewRange` applies only as an array of exactly two integers;
 * `maxChars` bounds the numbered lines and the `\n` between them, in UTF-16 code units, never
 * cutting below one line.
 */
export function fileView(path: string, content: string, viewRange: unknown, maxChars: number): string {
  const lines = content.split('\n');
  const n = lines.length;
  let first = 0;
  let last = n;
  if (isIntegerPair(viewRange)) {
    const [start, end] = viewRange;
    first = clamp(Math.max(1, start) - 1, 0, n);
    last = end === -1 ? n : end < -1 ? clamp(n + end, 0, n) : clamp(end, 0, n);
  }
  let out = `Here's the content of ${path} with line numbers:`;
  if (last <= first) return out;
  let used = 0;
  let shown = 0;
  for (let i = first; i < last; i++) {
    const line = numbered(i + 1, lines[i]!);
    const cost = (shown === 0 ? 0 : 1) + line.length;
    if (shown > 0 && used + cost > maxChars) break;
    used += cost;
    out += '\n' + line;
    shown++;
  }
  if (first + shown < last) {
    const a = first + 1;
    const b = first + shown;
    out += `\n[Truncated: showing lines ${a} to ${b} of ${n}. Use view_range [${b + 1}, -1] to read the rest.]`;
  }
  return out;
}

export interface ListingLine {
  /** Relative to the viewed directory, no trailing `/`. */
  rel: string;
  size: number;
  isDir: boolean;
}

/** A directory listing: total first, then the entries in the order the store gave them. */
export function dirView(path: string, total: number, entries: readonly ListingLine[]): string {
  let out =
    `Here're the files and directories up to 2 levels deep in ${path}, excluding hidden items and node_modules:` +
    `\n${formatSize(total)}\t${path}`;
  for (const e of entries) out += `\n${formatSize(e.size)}\t${path}/${e.rel}${e.isDir ? '/' : ''}`;
  return out;
}

// ---- create ---------------------------------------------------------------------------------

export const createExists = (path: string) => `Error: File ${path} already exists`;
export const tooLarge = (path: string, limit: number) =>
  `Error: File ${path} exceeds the maximum memory file size of ${limit} bytes`;
export const created = (path: string) => `File created successfully at: ${path}`;

// ---- str_replace ----------------------------------------------------------------------------

export const replaceNotFound = (path: string) => `Error: The path ${path} does not exist. Please provide a valid path.`;
export const replaceNoMatch = (oldStr: string, path: string) =>
  `No replacement was performed, old_str \`${oldStr}\` did not appear verbatim in ${path}.`;
export const replaceMultiple = (oldStr: string, lines: readonly number[]) =>
  `No replacement was performed. Multiple occurrences of old_str \`${oldStr}\` in lines: ${lines.join(', ')}. Please ensure it is unique`;

/** The edited lines of the new content, numbered from `firstLine`. */
export function replaced(firstLine: number, snippet: readonly string[]): string {
  let out = 'The memory file has been edited. Here is the snippet showing the change (with line numbers):';
  snippet.forEach((line, i) => (out += '\n' + numbered(firstLine + i, line)));
  return out;
}

// ---- insert, delete, rename -----------------------------------------------------------------

/** insert, delete and rename's source: the bare prefix, no trailing sentence. */
export const pathNotFound = (path: string) => `Error: The path ${path} does not exist`;
export const invalidLine = (insertLine: string, count: number) =>
  `Error: Invalid \`insert_line\` parameter: ${insertLine}. It should be within the range of lines of the file: [0, ${count}]`;
export const inserted = (path: string) => `The file ${path} has been edited.`;

export const deleteRoot = 'Error: Cannot delete the /memories directory itself';
export const deleted = (path: string) => `Successfully deleted ${path}`;

export const destinationExists = (path: string) => `Error: The destination ${path} already exists`;
export const renameRoot = 'Error: Cannot rename the /memories directory itself';
export const renameInside = (oldPath: string, newPath: string) =>
  `Error: Cannot rename ${oldPath} to ${newPath}, which is inside it`;
export const renamed = (oldPath: string, newPath: string) => `Successfully renamed ${oldPath} to ${newPath}`;

// ---- anything else --------------------------------------------------------------------------

export const unknownCommand = (command: string) => `Error: unknown command ${command}`;
