// Issue 9, case 10: a thousand outstanding views of one large directory. Measures the longest
// event-loop block and the peak resident memory they add, for ours imported from `module`
// (`tsx bench/many-views.ts [module]` prints the figures; __test__/many-views.test.ts bounds them).

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { nowMs } from './stats.js';

interface Handler {
  execute(input: unknown): Promise<{ text: string; isError: boolean }>;
  importMemories(files: { path: string; content: string }[]): Promise<unknown>;
}
export interface RaboshModule {
  Rabosh: { open(dir: string): Promise<{ close(): Promise<void> }> };
  RaboshMemoryToolHandler: new (db: never) => Handler;
}

export interface ManyViews {
  /** Longest gap between two turns of the event loop while the views were outstanding. */
  maxBlockMs: number;
  /** Peak resident memory while they ran, above the settled figure before. */
  rssGrowthMiB: number;
  /** From the first view issued to the last answered. */
  totalMs: number;
  /** Every answer's length, to check they all listed the whole directory. */
  lengths: Set<number>;
}

function settledRss(): number {
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage.rss();
}

export async function manyViews(mod: RaboshModule, entries: number, views: number): Promise<ManyViews> {
  const dir = mkdtempSync(join(tmpdir(), 'rabosh-many-views-'));
  const db = await mod.Rabosh.open(dir);
  try {
    const handler = new mod.RaboshMemoryToolHandler(db as never);
    const files = Array.from({ length: entries }, (_, i) => ({
      path: `/memories/big/n${String(i).padStart(6, '0')}.md`,
      content: `memory ${i}\n`,
    }));
    await handler.importMemories(files);
    // Viewed once before: the steady state of a server, where any index is already built.
    await handler.execute({ command: 'view', path: '/memories/big' });
    const before = settledRss();
    let peak = before;
    let longest = 0;
    let last = nowMs();
    let running = true;
    const tick = () => {
      const now = nowMs();
      longest = Math.max(longest, now - last);
      last = now;
      peak = Math.max(peak, process.memoryUsage.rss());
      if (running) setImmediate(tick);
    };
    setImmediate(tick);
    const t0 = nowMs();
    const lengths = new Set<number>();
    const pending: Promise<void>[] = [];
    for (let i = 0; i < views; i++) {
      // Each caller keeps only the length: what the views themselves hold is what is measured.
      pending.push(handler.execute({ command: 'view', path: '/memories/big' }).then((r) => void lengths.add(r.text.length)));
    }
    await Promise.all(pending);
    const totalMs = nowMs() - t0;
    await new Promise<void>((r) => setImmediate(r));
    running = false;
    return { maxBlockMs: longest, rssGrowthMiB: (peak - before) / 2 ** 20, totalMs, lengths };
  } finally {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const target = process.argv[2] ? pathToFileURL(resolve(process.argv[2])).href : '../index.js';
  const mod = (await import(target)) as RaboshModule;
  const r = await manyViews(mod, 20_000, 1_000);
  console.log(JSON.stringify({ maxBlockMs: r.maxBlockMs, rssGrowthMiB: r.rssGrowthMiB, totalMs: r.totalMs, lengths: [...r.lengths] }));
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.dirname ?? '', 'many-views.ts')) {
  await main();
}
