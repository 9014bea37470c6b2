/**
 * The lookup rows of the bases: per base, one row per field the planner pairs by (local path,
 * hosted path, local memory id), tagged `{store}\0{dir}\0%{field}\0{value}\0{hosted id}` and
 * written in the same commit as the base they describe. An incremental sync finds the bases a
 * change names through them (a prefix read per value) instead of reading every base. `%` starts
 * no hosted id and is none of the other marks (`!`, `>`, `#`, `@`).
 *
 * A row is a hint: the base it names is read and kept only if it still holds the value (a row
 * left by an interrupted backfill or a base an older build rewrote names one that moved on). What
 * must hold is the converse: every base has its rows. The cursor says so (`ix`, cursor.ts): a sync
 * trusts the rows only when the cursor it starts from was written by one that kept them; any other
 * reads every base once, writes the missing rows and drops the stale ones (docs/guide/sync.md,
 * "Record format").
 */

import { type Base, decodeBase } from './base.js';

export const INDEX_MARK = '%';
/** A row's bytes: only its tag is read. */
export const INDEX_VALUE = '1';

export type IndexField = 'lp' | 'rp' | 'lm';
const FIELD_MARK: Record<IndexField, string> = { lp: 'l', rp: 'r', lm: 'm' };

export interface Write {
  tag: string;
  value?: string | undefined;
  expect?: string | undefined;
}

/** The tag prefix of the rows for `field` = `value` (the hosted ids follow). */
export function indexPrefix(prefix: string, field: IndexField, value: string): string {
  return `${prefix}${INDEX_MARK}${FIELD_MARK[field]}\0${value}\0`;
}

/** The tags of `b`'s rows. */
export function indexTags(prefix: string, b: Base): string[] {
  const tags = [indexPrefix(prefix, 'lp', b.lp) + b.id, indexPrefix(prefix, 'rp', b.rp) + b.id];
  if (b.lm !== null) tags.push(indexPrefix(prefix, 'lm', b.lm) + b.id);
  return tags;
}

/** Whether `tag` (below `prefix`) is a base's own record, not a mark's. */
export function isBaseTag(prefix: string, tag: string): boolean {
  if (!tag.startsWith(prefix) || tag.length === prefix.length) return false;
  return !'!>#@%'.includes(tag[prefix.length] as string);
}

const baseOf = (raw: string | undefined, tag: string): Base | null => (raw === undefined ? null : decodeBase(raw, tag));

/**
 * The row writes that keep the rows in step with `writes` (their base records' changes), each
 * conditional on the row being there or not as the base's expected bytes say. `current`: rows
 * known to be otherwise (read after a commit refused one), by tag.
 */
export function indexWrites(prefix: string, writes: readonly Write[], current?: ReadonlyMap<string, string | undefined>): Write[] {
  const out = new Map<string, Write>();
  for (const w of writes) {
    if (!isBaseTag(prefix, w.tag)) continue;
    const before = new Set(indexTags(prefix, baseOf(w.expect, w.tag) ?? NONE).filter(real));
    const after = new Set(indexTags(prefix, baseOf(w.value, w.tag) ?? NONE).filter(real));
    for (const t of before) if (!after.has(t)) out.set(t, { tag: t, value: undefined, expect: INDEX_VALUE });
    for (const t of after) if (!before.has(t)) out.set(t, { tag: t, value: INDEX_VALUE, expect: undefined });
  }
  if (current !== undefined) for (const [t, w] of out) if (current.has(t)) w.expect = current.get(t);
  // A row already as wanted needs no write (a refused commit re-read it so).
  return [...out.values()].filter((w) => w.value !== w.expect);
}

// A base that holds none: no rows (its id is empty, so `real` drops them).
const NONE: Base = { id: '', rp: '', lp: '', sha: '', lm: null, rv: '' };
const real = (t: string) => !t.endsWith('\0');

/** What the rows should be for `bases` against the rows there are: the writes that make them so. */
export function backfill(prefix: string, bases: readonly Base[], rows: ReadonlyMap<string, string>): Write[] {
  const want = new Set(bases.flatMap((b) => indexTags(prefix, b)));
  const out: Write[] = [];
  for (const t of want) if (rows.get(t) !== INDEX_VALUE) out.push({ tag: t, value: INDEX_VALUE, expect: rows.get(t) });
  for (const [t, v] of rows) if (!want.has(t)) out.push({ tag: t, value: undefined, expect: v });
  return out;
}
