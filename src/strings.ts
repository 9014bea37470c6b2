/**
 * Every string the model reads (contract §4), in one place but one: the directory listing, see
 * below. Functions of already-decided outcomes: nothing here looks at the store.
 */

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

/*
 * The directory view ("Here're the files and directories up to 2 levels deep in …", sizes as
 * `1.2K`) is the one answer rendered below the facade, on the pool, by the binding
 * (crates/rabosh-node/src/listing_text.rs): it is the answer that grows with the store, and
 * rendering 50,000 lines here cost the JS thread 3-60 ms against about 1 ms to receive the text.
 */

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
