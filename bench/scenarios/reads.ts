import { longestBlock, preloadBusyProbe } from '../loop-block.js';
import { median, nowMs } from '../stats.js';
import { body } from '../workload.js';
import type { Scenario } from './types.js';

interface Loop {
  /** Warm-up calls before timing. */
  warmup: number;
  /** Timed calls at least, at most `max`. */
  min: number;
  max: number;
  budgetMs: number;
}

/**
 * Repeats `op` (whose first answer and duration are known) and returns the median time. An op
 * slower than the whole budget is not repeated: its first call is the sample (JIT warm-up is
 * noise next to seconds, and the page cache is warm from seeding and earlier runs).
 */
async function timed(op: () => Promise<string>, answer: string, firstMs: number, loop: Loop): Promise<number> {
  if (firstMs > loop.budgetMs) return firstMs;
  for (let i = 0; i < loop.warmup; i++) await op();
  const times: number[] = [];
  const start = nowMs();
  while (times.length < loop.max && (times.length < loop.min || nowMs() - start < loop.budgetMs)) {
    const t0 = nowMs();
    const again = await op();
    times.push(nowMs() - t0);
    if (again !== answer) throw new Error('the same view answered differently on a repeat');
  }
  return median(times);
}

async function first(op: () => Promise<string>): Promise<{ answer: string; ms: number }> {
  const t0 = nowMs();
  const answer = await op();
  return { answer, ms: nowMs() - t0 };
}

/** Two full, synchronous collections: what loading left behind is not collected inside a timing. */
export function collect(): void {
  // Bun has no --expose-gc; its Bun.gc(true) is the same full, synchronous collection.
  const bun = (globalThis as { Bun?: { gc(sync: boolean): void } }).Bun;
  const gc = (globalThis as { gc?: () => void }).gc ?? (bun && (() => bun.gc(true)));
  if (!gc) throw new Error('the read and open rows force a GC before they measure: run the child with --expose-gc');
  gc();
  gc();
}

function settledRss(): number {
  collect();
  return process.memoryUsage.rss();
}

/**
 * A quiet moment before a timed open, for every backend alike: Node loads a child through tsx,
 * whose compile-cache writes go out on the libuv pool just after the modules load, and their
 * completions then run on the JS thread. An open that uses the pool (ours) queued behind them
 * (measured: 6.6–9.0 ms of JS-thread CPU during the open without the wait, 3.6–5.0 with it); a
 * synchronous open (the SQLite variants) never waits for the pool. A bundled app has no such
 * traffic, so the rows time the open, not the loader.
 */
export const settle = (): Promise<unknown> => new Promise((done) => setTimeout(done, 300));

/**
 * One fresh process over a seeded store: open it and view one memory, timed with nothing else on
 * the event loop, as at an app's start. The longest block and busy turn of that stretch are
 * readStore's, in processes of their own: their probe keeps the loop turning with an immediate
 * always pending, which takes one of this machine's two cores from an open running off the JS
 * thread (ours, on the libuv pool) and nothing from one that blocks the JS thread until done
 * (every SQLite variant), so the open timed under it was not the open a host waits for
 * (docs/investigations/open-alone.md).
 */
export const openStore: Scenario = async (backend, job) => {
  const p = job.params as { firstFile: string };
  // Garbage from loading collected first, then the quiet moment, in which V8's helper threads
  // also finish sweeping after that collection instead of sharing the cores with the open.
  collect();
  await settle();
  const t0 = nowMs();
  const h = await backend.open(job.dir);
  try {
    const opened = await h.view({ command: 'view', path: p.firstFile });
    return { metrics: { open_ms: nowMs() - t0 }, answers: { [`first view ${p.firstFile}`]: opened } };
  } finally {
    await h.close();
  }
};

/**
 * One fresh process over a seeded store: open it and view one memory under the loop-block probe
 * (the longest block and busy turn of an open; its time is openStore's), list the directory once
 * (the resident memory the open store then holds, per 100,000 memories), then time the directory
 * view and, when asked, views of one memory with and without view_range.
 */
export const readStore: Scenario = async (backend, job) => {
  const p = job.params as { list: string; firstFile: string; count: number; fileView?: string; budgetMs: number };
  let opened = '';
  preloadBusyProbe(); // before the RSS baseline and the open, which it is not part of
  await settle();
  const before = settledRss();
  const {
    value: h,
    blockMs: openBlockMs,
    busyMs: openBusyMs,
  } = await longestBlock(async () => {
    const h = await backend.open(job.dir);
    opened = await h.view({ command: 'view', path: p.firstFile });
    return h;
  });
  const metrics: Record<string, number> = { open_block_ms: openBlockMs };
  // Absent where the busy-turn measure does not exist (off Linux): the table shows no number.
  if (openBusyMs !== null) metrics.open_busy_ms = openBusyMs;
  const answers: Record<string, string> = { [`first view ${p.firstFile}`]: opened };
  try {
    const list = () => h.view({ command: 'view', path: p.list });
    const { value: listed, blockMs: listBlockMs, busyMs: listBusyMs } = await longestBlock(() => first(list));
    metrics.list_block_ms = listBlockMs;
    if (listBusyMs !== null) metrics.list_busy_ms = listBusyMs;
    metrics.rss_mib_per_100k = ((settledRss() - before) / 2 ** 20) * (100_000 / p.count);
    answers[`view ${p.list}`] = listed.answer;
    metrics.view_ms = await timed(list, listed.answer, listed.ms, { warmup: 2, min: 3, max: 200, budgetMs: p.budgetMs });
    if (p.fileView) {
      const path = p.fileView;
      const loop = { warmup: 50, min: 50, max: 5000, budgetMs: p.budgetMs / 2 };
      for (const [metric, range] of [
        ['view_file_ms', undefined],
        ['view_range_ms', [10, 20]],
      ] as const) {
        const op = () => h.view(range ? { command: 'view', path, view_range: [...range] } : { command: 'view', path });
        const once = await first(op);
        answers[`view ${path}${range ? ` [${range.join(', ')}]` : ''}`] = once.answer;
        metrics[metric] = await timed(op, once.answer, once.ms, loop);
      }
    }
  } finally {
    await h.close();
  }
  return { metrics, answers };
};

/**
 * A memory of 1 MiB (16,384 lines of 64 bytes) in an empty store, viewed whole: the longest
 * event-loop block over `views` views (each cut at viewMaxChars). The answers compared across
 * handlers are a view_range window, which every handler renders alike (the SDK's tool never
 * truncates, so the whole view's text is its own).
 */
export const bigFile: Scenario = async (backend, job) => {
  const views = job.params.views as number;
  const path = '/memories/big.md';
  preloadBusyProbe();
  const h = await backend.open(job.dir);
  try {
    const created = await h.create({ command: 'create', path, file_text: body('big', 1 << 20) });
    if (!created.startsWith('File created')) throw new Error(`create ${path}: ${created.slice(0, 200)}`);
    const idle = await longestBlock(() => new Promise((resolve) => setTimeout(resolve, 300)));
    const viewed = await longestBlock(async () => {
      for (let i = 0; i < views; i++) await h.view({ command: 'view', path });
    });
    const window = await h.view({ command: 'view', path, view_range: [16_000, 16_010] });
    const metrics: Record<string, number> = { view_1mib_block_ms: viewed.blockMs, idle_block_ms: idle.blockMs };
    if (viewed.busyMs !== null) metrics.view_1mib_busy_ms = viewed.busyMs;
    if (idle.busyMs !== null) metrics.idle_busy_ms = idle.busyMs;
    return {
      metrics,
      answers: { [`view ${path} [16000, 16010]`]: window },
    };
  } finally {
    await h.close();
  }
};
