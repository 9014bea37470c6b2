/**
 * Every string the model reads (contract §4), in one place but two: the file and directory views,
 * see below. Functions of already-decided outcomes: nothing here looks at the store.
 */

import { MAX_VIEW_LINES } from './native.js';

/** `n` with a comma between each group of three digits: `999,999`. */
const grouped = (n: number) => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');

/** A line of a numbered answer: its number right-aligned in six columns (more when longer), a tab. */
const numbered = (n: number, line: string) => `${String(n).padStart(6)}\t${line}`;

// ---- view -----------------------------------------------------------------------------------

export const viewNotFound = (path: string) => `The path ${path} does not exist. Please provide a valid path.`;

export const viewTooManyLines = (path: string) => `File ${path} exceeds maximum line limit of ${grouped(MAX_VIEW_LINES)} lines.`;

/*
 * The two answers that grow with what they show are rendered below the facade, by the binding,
 * where the store reads them (crates/rabosh-node/src/render/): the file view ("Here's the content
 * of … with line numbers:", numbered lines, the "[Truncated: …]" note; render/file_view.rs) and
 * the directory view ("Here're the files and directories up to 2 levels deep in …", sizes as
 * `1.2K`; render/listing.rs). A listing
 * is the answer that grows with the store: rendering 50,000 lines here cost the JS thread 3-60 ms
 * against about 1 ms to receive the text. A file view crosses as one flat string instead of a
 * window split, numbered and joined here.
 */

// ---- create ---------------------------------------------------------------------------------

export const createExists = (path: string) => `Error: File ${path} already exists`;
export const tooLarge = (path: string, limit: number) => `Error: File ${path} exceeds the maximum memory file size of ${limit} bytes`;
export const created = (path: string) => `File created successfully at: ${path}`;

// ---- str_replace ----------------------------------------------------------------------------

export const replaceNotFound = (path: string) => `Error: The path ${path} does not exist. Please provide a valid path.`;
export const replaceNoMatch = (oldStr: string, path: string) =>
  `No replacement was performed, old_str \`${oldStr}\` did not appear verbatim in ${path}.`;
export const replaceMultiple = (oldStr: string, lines: readonly number[]) =>
  `No replacement was performed. Multiple occurrences of old_str \`${oldStr}\` in lines: ${lines.join(', ')}. Please ensure it is unique`;
/** The edit's answer: the lines around it, numbered from `firstLine` as a file view numbers them. */
export const edited = (firstLine: number, snippet: readonly string[]) =>
  ['The memory file has been edited. Here is the snippet showing the change (with line numbers):']
    .concat(snippet.map((line, i) => numbered(firstLine + i, line)))
    .join('\n');

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
export const renameInside = (oldPath: string, newPath: string) => `Error: Cannot rename ${oldPath} to ${newPath}, which is inside it`;
export const renamed = (oldPath: string, newPath: string) => `Successfully renamed ${oldPath} to ${newPath}`;

// ---- anything else --------------------------------------------------------------------------

export const unknownCommand = (command: string) => `Error: unknown command ${command}`;
