// Ours, through the public API exactly as a host would use it. The module comes from the
// TypeScript source by default; RABOSH_BENCH_MODULE points it elsewhere (e.g. a built dist).

import { pathToFileURL } from 'node:url';
import { isAbsolute, resolve } from 'node:path';
import type { Entry } from '../workload.js';
import type { Backend, BenchHandler } from './types.js';

interface Db {
  sync(): Promise<void>;
  close(): Promise<void>;
}
export interface RaboshModule {
  Rabosh: { open(dir: string, opts: { durability: 'sync' | 'buffered'; exclusive?: boolean }): Promise<Db> };
  RaboshMemoryToolHandler: new (
    db: Db,
    opts: { listingIndex: boolean },
  ) => Omit<BenchHandler, 'close'> & {
    importMemories(files: { path: string; content: string }[]): Promise<unknown>;
  };
}

/** Ours as the bench imports it (the source, or RABOSH_BENCH_MODULE). */
export async function load(): Promise<RaboshModule> {
  const override = process.env.RABOSH_BENCH_MODULE;
  if (!override) return (await import('../../index.js')) as unknown as RaboshModule;
  const target = isAbsolute(override) || override.startsWith('.') ? pathToFileURL(resolve(override)).href : override;
  return (await import(target)) as RaboshModule;
}

/** In-flight creates while seeding: enough to keep the libuv pool busy, not a flood. */
const SEED_WINDOW = 64;

export function raboshBackend(listingIndex: boolean): Backend {
  return {
    family: 'rabosh',
    async preload() {
      await load();
    },
    async open(dir) {
      const mod = await load();
      const db = await mod.Rabosh.open(dir, { durability: 'sync' });
      const handler = new mod.RaboshMemoryToolHandler(db, { listingIndex });
      return {
        view: (i) => handler.view(i),
        create: (i) => handler.create(i),
        str_replace: (i) => handler.str_replace(i),
        insert: (i) => handler.insert(i),
        delete: (i) => handler.delete(i),
        rename: (i) => handler.rename(i),
        close: () => db.close(),
      };
    },
    async importer(dir) {
      const mod = await load();
      const db = await mod.Rabosh.open(dir, { durability: 'sync' });
      const handler = new mod.RaboshMemoryToolHandler(db, { listingIndex });
      return {
        put: async (chunk) => void (await handler.importMemories(chunk.map(([path, content]) => ({ path, content })))),
        close: () => db.close(),
      };
    },
    async seed(dir: string, entries: Iterable<Entry>) {
      const mod = await load();
      const db = await mod.Rabosh.open(dir, { durability: 'buffered' });
      const handler = new mod.RaboshMemoryToolHandler(db, { listingIndex });
      const inFlight = new Set<Promise<void>>();
      for (const [path, file_text] of entries) {
        const p: Promise<void> = handler.create({ command: 'create', path, file_text }).then((answer) => {
          inFlight.delete(p);
          if (!answer.startsWith('File created')) throw new Error(`seeding ${path}: ${answer}`);
        });
        inFlight.add(p);
        if (inFlight.size >= SEED_WINDOW) await Promise.race(inFlight);
      }
      await Promise.all(inFlight);
      await db.sync();
      await db.close();
    },
  };
}
