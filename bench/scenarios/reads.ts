import { median, nowMs } from '../stats.js';
import { noteName, type Dataset } from '../workload.js';
import type { Scenario } from './types.js';

/** Repeats `op` after `warmup` calls until `budgetMs` has passed (at least `min`, at most `max` times). */
async function timed(
  op: () => Promise<string>,
  { warmup, min, max, budgetMs }: { warmup: number; min: number; max: number; budgetMs: number },
): Promise<{ ms: number; answer: string }> {
  const answer = await op();
  for (let i = 1; i < warmup; i++) await op();
  const times: number[] = [];
  const start = nowMs();
  while (times.length < max && (times.length < min || nowMs() - start < budgetMs)) {
    const t0 = nowMs();
    const again = await op();
    times.push(nowMs() - t0);
    if (again !== answer) throw new Error('the same view answered differently on a repeat');
  }
  return { ms: median(times), answer };
}

/** Directory view of `path` in a seeded store. */
export const listing: Scenario = async (backend, job) => {
  const path = job.params.path as string;
  const h = await backend.open(job.dir);
  try {
    const r = await timed(() => h.view({ command: 'view', path }), {
      warmup: 2,
      min: 3,
      max: 200,
      budgetMs: 1500,
    });
    return { metrics: { view_ms: r.ms }, answers: { [`view ${path}`]: r.answer } };
  } finally {
    await h.close();
  }
};

/** A 4 KiB memory viewed whole and with view_range [10, 20]. */
export const fileView: Scenario = async (backend, job) => {
  const path = job.params.path as string;
  const h = await backend.open(job.dir);
  try {
    const opts = { warmup: 50, min: 50, max: 5000, budgetMs: 800 };
    const whole = await timed(() => h.view({ command: 'view', path }), opts);
    const ranged = await timed(() => h.view({ command: 'view', path, view_range: [10, 20] }), opts);
    return {
      metrics: { view_file_ms: whole.ms, view_range_ms: ranged.ms },
      answers: { [`view ${path}`]: whole.answer, [`view ${path} [10, 20]`]: ranged.answer },
    };
  } finally {
    await h.close();
  }
};

/** From nothing to a store that has answered its first file view. */
export const openTime: Scenario = async (backend, job) => {
  const path = `/memories/${noteName(0)}`;
  const t0 = nowMs();
  const h = await backend.open(job.dir);
  const answer = await h.view({ command: 'view', path });
  const ms = nowMs() - t0;
  await h.close();
  return { metrics: { open_ms: ms }, answers: { [`first view ${path}`]: answer } };
};

function settledRss(): number {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('the rss scenario needs --expose-gc');
  gc();
  gc();
  return process.memoryUsage.rss();
}

/**
 * Resident memory the open store adds after one file view and one listing of the whole store,
 * scaled to 100,000 memories. The engine module is loaded before the baseline.
 */
export const rss: Scenario = async (backend, job) => {
  const ds = job.params.dataset as Dataset;
  const before = settledRss();
  const h = await backend.open(job.dir);
  const file = await h.view({ command: 'view', path: `/memories/${noteName(0)}` });
  const list = await h.view({ command: 'view', path: '/memories' });
  const after = settledRss();
  await h.close();
  return {
    metrics: { rss_mib_per_100k: ((after - before) / 2 ** 20) * (100_000 / ds.count) },
    answers: { 'rss file view': file, 'rss root view': list },
  };
};
