/**
 * Every string the model reads (contract §4), in one place. Functions of already-decided
 * outcomes: nothing here looks at the store.
 */

// ---- sizes ----------------------------------------------------------------------------------

const UNITS = ['B', 'K', 'M', 'G'] as const;

/**
 * `0B`, `512B`, `4K`, `1.2K`: the largest unit not above the value (capped at G), no decimals
 * for a whole quotient, else one decimal rounded half to even on the exact quotient (`toFixed`
 * rounds ties upward: 1280 bytes would print `1.3K`). Plain numbers, yet exact: the units are
 * powers of two, so every quotient and remainder below is an exact double for any safe integer.
 */
export function formatSize(bytes: number): string {
  if (!Number.isSafeInteger(bytes) || bytes < 0) throw new RangeError(`not a byte count: ${bytes}`);
  if (bytes < 1024) return `${bytes}B`;
  let exp = 1;
  while (exp < UNITS.length - 1 && bytes >= 1024 ** (exp + 1)) exp++;
  const unit = 1024 ** exp;
  const whole = Math.floor(bytes / unit);
  const rest = bytes - whole * unit;
  if (rest === 0) return `${whole}${UNITS[exp]}`;
  const rest10 = rest * 10; // < 10 * 2^30: exact
  const digit = Math.floor(rest10 / unit);
  const left = (rest10 - digit * unit) * 2;
  let tenths = whole * 10 + digit; // whole < 2^23 at G: exact
  if (left > unit || (left === unit && tenths % 2 === 1)) tenths += 1;
  return `${Math.floor(tenths / 10)}.${tenths % 10}${UNITS[exp]}`;
}

// ---- view -----------------------------------------------------------------------------------

export const viewNotFound = (path: string) => `The path ${path} does not exist. Please provide a valid path.`;

export const viewTooManyLines = (path: string) => `File ${path} exceeds maximum line limit of 999,999 lines.`;

const numbered = (n: number, line: string) => `${String(n).padStart(6, ' ')}\t${line}`;

/**
 * The part of a memory a file view shows, cut by the store to `view_range` and `viewMaxChars`
 * (contract §4): lines `first + 1` … `first + shown` of `lines`, joined by `\n` in `text`.
 */
export interface FileWindow {
  first: number;
  shown: number;
  lines: number;
  /** The character budget left lines of the selected range out. */
  truncated: boolean;
  text: string;
}

/** A memory with line numbers, and the truncation note when the budget cut the range. */
export function fileView(path: string, w: FileWindow): string {
  let out = `Here's the content of ${path} with line numbers:`;
  if (w.shown === 0) return out;
  const lines = w.text.split('\n');
  for (let i = 0; i < w.shown; i++) out += '\n' + numbered(w.first + i + 1, lines[i]!);
  if (w.truncated) {
    const a = w.first + 1;
    const b = w.first + w.shown;
    out += `\n[Truncated: showing lines ${a} to ${b} of ${w.lines}. Use view_range [${b + 1}, -1] to read the rest.]`;
  }
  return out;
}

/**
 * A directory's listing as the store gives it, in order: entry `i` is the `i`-th `\n`-separated
 * path in `names` (relative, no trailing `/`), of `sizes[i]` bytes, a directory when `dirs[i]` is 1.
 */
export interface Listing {
  total: number;
  names: string;
  sizes: Float64Array;
  dirs: Uint8Array;
}

/** A directory listing: total first, then the entries. */
export function dirView(path: string, l: Listing): string {
  let out =
    `Here're the files and directories up to 2 levels deep in ${path}, excluding hidden items and node_modules:` +
    `\n${formatSize(l.total)}\t${path}`;
  const under = `\t${path}/`;
  const { names, sizes, dirs } = l;
  let at = 0;
  for (let i = 0; i < sizes.length; i++) {
    let end = names.indexOf('\n', at);
    if (end === -1) end = names.length;
    out += '\n' + formatSize(sizes[i]!) + under + names.slice(at, end) + (dirs[i] === 1 ? '/' : '');
    at = end + 1;
  }
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
