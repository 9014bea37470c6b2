// The store every surface of a surfaces run looks at: `size` memories of bench/scale-plan.ts's
// shape, written with `importMemories` in its chunks, built once per run in the run's own
// temporary directory (never committed). The sync's copy has history on (db.sync needs it).

import { Rabosh, RaboshMemoryToolHandler } from '../../index.js';
import { CHUNK, scaleEntries } from '../scale-plan.js';
import { nowMs } from '../stats.js';

/** Builds the store at `dir`; how long the import took, in seconds. */
export async function buildStore(dir: string, size: number, history: boolean): Promise<number> {
  const t0 = nowMs();
  const db = await Rabosh.open(dir, { durability: 'sync', ...(history ? { history: true } : {}) });
  try {
    const h = new RaboshMemoryToolHandler(db);
    let chunk: { path: string; content: string }[] = [];
    for (const [path, content] of scaleEntries(size)) {
      chunk.push({ path, content });
      if (chunk.length === CHUNK) {
        await h.importMemories(chunk);
        chunk = [];
      }
    }
    if (chunk.length) await h.importMemories(chunk);
  } finally {
    await db.close();
  }
  return (nowMs() - t0) / 1000;
}
