/**
 * The versioned format of the records the sync keeps in the store's reserved key space (bases,
 * conflict records, push records; docs/sync.md, "Record format"). A record is a JSON object
 * `{"v": 2, "kind": …, …}`: `v` is the format version, `kind` what the record is. Format 1 (the
 * records written before the version tag existed) is a JSON array whose first element is a small
 * number; it is still read, never written.
 *
 * A record of a version this build does not know is refused with `UnsupportedFormatError`, never
 * guessed at: a newer build may have changed what a field means, and a misread base turns into a
 * wrong push or pull. A record that is no format at all (not JSON, fields missing) is read as
 * absent, as before: the sync rewrites it from both sides.
 */

import { UnsupportedFormatError } from '../errors.js';

/** The format this build writes. */
export const RECORD_VERSION = 2;

export type RecordKind = 'base' | 'conflict' | 'push' | 'done' | 'cursor';

/** What a record's bytes hold: format 1's array, format 2's object, or nothing readable. */
export type Parsed = { version: 1; fields: unknown[] } | { version: 2; body: Record<string, unknown> } | null;

/**
 * Parses a record of `kind` (tag: for the error message). `legacy`: the leading numbers format 1
 * used for this kind.
 */
export function parseRecord(tag: string, raw: string, kind: RecordKind, legacy: readonly number[]): Parsed {
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch {
    return null;
  }
  if (Array.isArray(v)) {
    if (typeof v[0] !== 'number') return null;
    if (legacy.includes(v[0])) return { version: 1, fields: v };
    throw unknownVersion(tag, kind, `an array led by ${v[0]}`);
  }
  if (typeof v !== 'object' || v === null) return null;
  const body = v as Record<string, unknown>;
  if (!('v' in body)) return null;
  if (body['v'] !== RECORD_VERSION) throw unknownVersion(tag, kind, `version ${JSON.stringify(body['v'])}`);
  return body['kind'] === kind ? { version: 2, body } : null;
}

function unknownVersion(tag: string, kind: RecordKind, what: string): UnsupportedFormatError {
  const shown = JSON.stringify(tag.replaceAll('\0', '/'));
  return new UnsupportedFormatError(
    `the sync record ${shown} (a ${kind} record) is in ${what}; this build reads formats 1 and ${RECORD_VERSION}: a newer rabosh-memory wrote it, so sync with that one`,
  );
}

/** The record as format 2 bytes. */
export function writeRecord(kind: RecordKind, fields: Record<string, unknown>): string {
  return JSON.stringify({ v: RECORD_VERSION, kind, ...fields });
}

export const isString = (x: unknown): x is string => typeof x === 'string';
export const isStringOrNull = (x: unknown): x is string | null => x === null || typeof x === 'string';
