/**
 * Local `/memories/<prefix>/…` ↔ hosted `/…`, and the hosted rules a local memory must meet to be
 * pushed (from the SDK's `MemoryCreateParams.path` and `content` docs): a path of 1–20 non-empty
 * segments, none `.` or `..`, no control or format characters nor U+2028/U+2029, in NFC, at most
 * 1,024 bytes; content at most 102,400 bytes. What breaks them is skipped and reported, never
 * truncated or renamed.
 */

import { MemoryPath } from '../path.js';

export const HOSTED_MAX_CONTENT_BYTES = 102_400;
const HOSTED_MAX_PATH_BYTES = 1024;
const HOSTED_MAX_SEGMENTS = 20;
// Cc (controls), Cf (format characters), and the line and paragraph separators.
const REFUSED_CHARS = /[\p{Cc}\p{Cf}\u2028\u2029]/u;

/** Why the hosted store would refuse `remotePath`, or null when it accepts it. */
export function hostedPathProblem(remotePath: string): string | null {
  if (!remotePath.startsWith('/')) return 'does not start with /';
  const segments = remotePath.slice(1).split('/');
  if (segments.length > HOSTED_MAX_SEGMENTS) return `has ${segments.length} segments (at most ${HOSTED_MAX_SEGMENTS})`;
  if (segments.some((s) => s === '' || s === '.' || s === '..')) return 'has an empty, . or .. segment';
  if (REFUSED_CHARS.test(remotePath)) return 'holds a control or format character, or U+2028/U+2029';
  if (remotePath.normalize('NFC') !== remotePath) return 'is not in Unicode Normalization Form C';
  const bytes = Buffer.byteLength(remotePath);
  if (bytes > HOSTED_MAX_PATH_BYTES) return `is ${bytes} bytes (at most ${HOSTED_MAX_PATH_BYTES})`;
  return null;
}

/** The mapping of one sync: the local directory the hosted store lands in. */
export class PathMap {
  /** `/memories` or `/memories/<prefix>`. */
  readonly dir: string;

  constructor(prefix: string | undefined) {
    if (prefix === undefined || prefix === '' || prefix === '/') {
      this.dir = '/memories';
      return;
    }
    const trimmed = prefix.replace(/^\/+|\/+$/g, '');
    const dir = MemoryPath.normalise(trimmed.startsWith('memories/') ? `/${trimmed}` : `/memories/${trimmed}`);
    if (dir === null || dir === '/memories')
      throw new TypeError(`sync prefix ${JSON.stringify(prefix)} is not a directory below /memories`);
    this.dir = dir;
  }

  /** The hosted path of a local memory below `dir`. */
  toRemote(localPath: string): string {
    return localPath.slice(this.dir.length);
  }

  /** The local path of a hosted memory, or null when it has no normalised local form. */
  toLocal(remotePath: string): string | null {
    const local = `${this.dir}${remotePath}`;
    return MemoryPath.normalise(local) === local && local !== this.dir ? local : null;
  }
}
