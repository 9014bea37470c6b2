// lmdb-js as a user chasing speed would write it for this tool: a size database and a content
// database (plain numbers and strings, no encoded records), a view of a memory that is one
// `get` plus the file-view template, a directory view that is one range read over the sizes into
// the single-pass listing builder, and every write one `transaction()` across both databases,
// answered after `flushed` so it is as durable as ours. The other commands are the shared
// handler's over the same two databases.

import type { Database, RootDatabase } from 'lmdb';
import { fileView, normalise, ROOT } from '../../__test__/fixtures/contract-model.js';
import type { BenchHandler } from '../handlers/types.js';
import { anyKeyUnder, durably, keysAt, openEnv, removeKeys, txStoreOver, under } from './lmdb-env.js';
import { KvMemoryHandler, type Tx, type TxStore, withView } from './memory-commands.js';
import { tunedListing } from './tuned-listing.js';

const VIEW_MAX_CHARS = 16_000;

interface Direct {
  env: RootDatabase;
  sizes: Database<number, string>;
  bodies: Database<string, string>;
}

function openDirect(dir: string): Direct {
  const env = openEnv(dir);
  return {
    env,
    sizes: env.openDB({ name: 'size', encoding: 'ordered-binary' }),
    bodies: env.openDB({ name: 'content', encoding: 'string' }),
  };
}

/** The seam the shared handler needs, over the two databases (only the size is kept as metadata). */
function txStore({ env, sizes, bodies }: Direct): TxStore {
  const tx: Tx = {
    meta(path) {
      const size = sizes.get(path);
      return size === undefined ? undefined : { size, lines: 0, createdAt: 0, updatedAt: 0 };
    },
    content: (path) => bodies.get(path),
    *sizesUnder(prefix) {
      for (const { key, value } of sizes.getRange(under(prefix))) yield [key, value] as const;
    },
    anyUnder: (prefix) => anyKeyUnder(sizes, prefix),
    put(path, content, m) {
      sizes.putSync(path, m.size);
      bodies.putSync(path, content);
    },
    deleteTree: (path) => removeKeys(keysAt(sizes, path), sizes, bodies),
    moveTree(from, to) {
      for (const key of keysAt(sizes, from)) {
        const size = sizes.get(key)!;
        const body = bodies.get(key)!;
        sizes.removeSync(key);
        bodies.removeSync(key);
        sizes.putSync(to + key.slice(from.length), size);
        bodies.putSync(to + key.slice(from.length), body);
      }
    },
  };
  return txStoreOver(env, tx);
}

export function openLmdbDirect(dir: string): BenchHandler {
  const d = openDirect(dir);
  const kv = new KvMemoryHandler(txStore(d));
  return withView(kv, async (input) => {
    const path = normalise(typeof input.path === 'string' ? input.path : '');
    if (path === null) return kv.view(input);
    if (path !== ROOT) {
      const body = d.bodies.get(path);
      if (body !== undefined) return fileView(path, body, input.view_range, VIEW_MAX_CHARS).text;
    }
    const rows: [string, number][] = [];
    for (const { key, value } of d.sizes.getRange(under(`${path}/`))) rows.push([key, value]);
    return tunedListing(path, path === ROOT, rows) ?? kv.view(input);
  });
}

/** Bulk load in one transaction, the way the other alternatives seed. */
export async function seedLmdbDirect(dir: string, entries: Iterable<readonly [string, string]>): Promise<void> {
  const { env, sizes, bodies } = openDirect(dir);
  await durably(env, () => {
    for (const [path, content] of entries) {
      sizes.putSync(path, Buffer.byteLength(content));
      bodies.putSync(path, content);
    }
  });
  await env.close();
}
