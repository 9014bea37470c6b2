/**
 * The bases an incremental sync plans, read by key: a base by its hosted id (its own record), a
 * base by local path, hosted path or local memory id through its lookup rows (base-index.ts),
 * each kept only if it still holds the value it was found by. Reads cost what the changes name,
 * not the mapping's size.
 */

import { native } from '../errors.js';
import type { NativeMemories } from '../native.js';
import { type Base, decodeBase } from './base.js';
import { type IndexField, indexPrefix } from './base-index.js';
import type { BaseLookup } from './incremental.js';

export interface BaseRow {
  base: Base | null;
  raw: string;
}

export class IndexedBases implements BaseLookup {
  /** Every base record read, by hosted id (null: none there). */
  readonly rows = new Map<string, BaseRow | null>();

  constructor(
    readonly m: NativeMemories,
    readonly prefix: string,
  ) {}

  async byId(ids: readonly string[]): Promise<Base[]> {
    const missing = [...new Set(ids)].filter((id) => !this.rows.has(id));
    await Promise.all(
      missing.map(async (id) => {
        const tag = this.prefix + id;
        // A prefix read: ids that start with this one come too (hosted ids are of one length).
        const row = (await native(() => this.m.syncBases(tag))).find((r) => r.tag === tag);
        this.rows.set(id, row === undefined ? null : { base: decodeBase(row.value, row.tag), raw: row.value });
      }),
    );
    return ids.flatMap((id) => this.rows.get(id)?.base ?? []);
  }

  async by(field: IndexField, values: readonly string[]): Promise<Base[]> {
    const found = await Promise.all(
      values.map(async (v) => {
        const p = indexPrefix(this.prefix, field, v);
        const ids = (await native(() => this.m.syncBases(p))).map((r) => r.tag.slice(p.length));
        // A row is a hint: the base must still hold the value.
        return (await this.byId(ids)).filter((b) => b[field] === v);
      }),
    );
    return found.flat();
  }
}
