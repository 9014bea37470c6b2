/**
 * The SDK's `ToolError` class of the copy whose tool runner is calling us. The runner tells a
 * `ToolError` from any other throw with `instanceof` of its own class, so a `ToolError` from a
 * second SDK copy (another version nested under this package, or the CommonJS build of the SDK
 * next to its ESM build) reaches the model as `Error: <message>` instead of the documented text.
 * The caller's file on the stack names the copy; its `lib/tools/ToolError` sits beside it in
 * every SDK version this package supports. When that cannot be worked out (a bundled SDK,
 * stack traces turned off), the copy this package resolved is used, which is then the only one.
 * That copy is imported only then: the SDK is a peer, and everything else in the library (and
 * the CLI built on it) works without it installed.
 */
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

export type ToolErrorClass = new (content: string) => Error;

// The file of a stack line, `at fn (FILE:line:column)` or `at FILE:line:column` (V8's format,
// which Bun prints too); FILE may hold spaces.
const FRAME_FILE = /(?:\(|at )([^()]+?):\d+:\d+\)?$/;
const SDK_DIR = /[\\/]@anthropic-ai[\\/]sdk[\\/]/g;

/** The SDK copy a stack line runs in: its package directory and module flavour (js or mjs). */
function sdkCopy(line: string): { root: string; ext: string } | null {
  const file = FRAME_FILE.exec(line.trim())?.[1];
  if (!file || !/\.m?js$/.test(file)) return null;
  // The last match: pnpm nests packages as .pnpm/<name>@<version>/node_modules/@anthropic-ai/sdk/.
  let end = -1;
  for (const m of file.matchAll(SDK_DIR)) end = m.index + m[0].length;
  if (end < 0) return null;
  return { root: file.slice(0, end), ext: file.endsWith('.mjs') ? 'mjs' : 'js' };
}

const byCopy = new Map<string, ToolErrorClass | null>();

/** The stack of whoever called the function that calls this (the tool's `run`). */
function callerStack(): string {
  const holder: { stack?: string } = {};
  const limit = Error.stackTraceLimit;
  try {
    if (typeof limit !== 'number' || limit < 12) Error.stackTraceLimit = 12;
    Error.captureStackTrace(holder, callerStack);
  } finally {
    Error.stackTraceLimit = limit;
  }
  return holder.stack ?? '';
}

function load(root: string, ext: string): ToolErrorClass | null {
  const dir = root.startsWith('file://') ? fileURLToPath(root) : root;
  const file = `${dir}lib/tools/ToolError.${ext}`;
  try {
    // require() of an .mjs file returns the ESM module instance the runner imported (Node 22.12+
    // and Bun share one module map), so the class is the runner's own.
    const found = (createRequire(file)(file) as { ToolError?: unknown }).ToolError;
    return typeof found === 'function' ? (found as ToolErrorClass) : null;
  } catch {
    return null;
  }
}

/** The `ToolError` of the SDK copy this package resolves: the peer dependency. */
async function resolvedToolError(): Promise<ToolErrorClass> {
  return (await import('@anthropic-ai/sdk/resources/beta/messages')).ToolError;
}

/**
 * Call at the start of `run`, before any await: the stack then still holds the runner. The
 * class is awaited only when an error is thrown, so a success never imports the SDK.
 */
export function runnerToolError(): () => Promise<ToolErrorClass> {
  let copy = null;
  for (const line of callerStack().split('\n').slice(1)) {
    copy = sdkCopy(line);
    if (copy) break;
  }
  if (!copy) return resolvedToolError;
  const key = `${copy.root}|${copy.ext}`;
  let cls = byCopy.get(key);
  if (cls === undefined) {
    cls = load(copy.root, copy.ext);
    byCopy.set(key, cls);
  }
  const found = cls;
  return found === null ? resolvedToolError : async () => found;
}
