// A full walk of a long history through the public API (issue 24's row; issue 19 item 9): a store
// with history on, one version per create, then every page of `versions()` newest first, 100 at
// a time, each from the cursor of the one before. Ours only: no peer keeps versions.
import { load } from '../handlers/rabosh.js';
import { nowMs } from '../stats.js';
import type { Scenario } from './types.js';

interface HistoryHandler {
  create(input: { command: 'create'; path: string; file_text: string }): Promise<string>;
  versions(query: { limit: number; cursor?: string }): Promise<{ data: unknown[]; nextCursor?: string }>;
}

/** In-flight creates while filling: enough to keep the libuv pool busy, not a flood. */
const WINDOW = 64;

export const historyWalk: Scenario = async (_backend, job) => {
  const p = job.params as { versions: number; pageSize: number };
  const mod = await load();
  const open = mod.Rabosh.open as (dir: string, o: { durability: 'buffered'; history: boolean }) => ReturnType<typeof mod.Rabosh.open>;
  const db = await open(job.dir, { durability: 'buffered', history: true });
  const h = new mod.RaboshMemoryToolHandler(db, { listingIndex: true }) as unknown as HistoryHandler;
  try {
    const inFlight = new Set<Promise<void>>();
    for (let n = 0; n < p.versions; n++) {
      const created: Promise<void> = h.create({ command: 'create', path: `/memories/${n % 100}/${n}.md`, file_text: 'x' }).then((a) => {
        inFlight.delete(created);
        if (!a.startsWith('File created')) throw new Error(`filling the history: ${a}`);
      });
      inFlight.add(created);
      if (inFlight.size >= WINDOW) await Promise.race(inFlight);
    }
    await Promise.all(inFlight);
    await db.sync();
    const t0 = nowMs();
    let [walked, pages, cursor] = [0, 0, undefined as string | undefined];
    do {
      const page = await h.versions({ limit: p.pageSize, ...(cursor === undefined ? {} : { cursor }) });
      walked += page.data.length;
      pages++;
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    const seconds = (nowMs() - t0) / 1000;
    if (walked !== p.versions) throw new Error(`walked ${walked} versions of ${p.versions}`);
    return { metrics: { history_walk_s: seconds }, answers: { 'versions walked, pages': `${walked}, ${pages}` } };
  } finally {
    await db.close();
  }
};
