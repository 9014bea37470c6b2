// The scale run's children (bench/scale-plan.ts): each is one fresh process per side, so every
// figure is what a process pays from its own start: the import's peak, a first look's open and
// the memory it leaves resident.

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { CHUNK, createCount, scaleEntries, scalePaths } from '../scale-plan.js';
import { median, nowMs } from '../stats.js';
import type { Entry } from '../workload.js';
import type { BenchHandler } from '../handlers/types.js';
import { collect, settle } from './reads.js';
import type { Scenario, ScenarioOutput } from './types.js';

/** A field of /proc/self/status in MiB (VmHWM: the peak; VmRSS: now), or undefined off Linux. */
function mib(field: 'VmHWM' | 'VmRSS'): number | undefined {
  try {
    const m = readFileSync('/proc/self/status', 'utf8').match(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm'));
    return m ? Number(m[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** What the files under `dir` take on disk (allocated blocks, as `du` counts them), in MiB. */
function diskMib(dir: string): number {
  let bytes = 0;
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) bytes += statSync(p).blocks * 512;
    }
  };
  walk(dir);
  return bytes / 2 ** 20;
}

/** Median of the last `k` chunks over the median of the first `k`: 1 when the chunk time is flat. */
function chunkRatio(ms: readonly number[]): number {
  const k = Math.min(3, Math.floor(ms.length / 2));
  return k === 0 ? 1 : median(ms.slice(-k)) / median(ms.slice(0, k));
}

export const scaleImport: Scenario = async (backend, job) => {
  const n = job.params.size as number;
  if (!backend.importer) throw new Error(`${job.backend} has no chunked import`);
  const t0 = nowMs();
  const importer = await backend.importer(job.dir);
  const chunkMs: number[] = [];
  let chunk: Entry[] = [];
  const flush = async () => {
    const t = nowMs();
    await importer.put(chunk);
    chunkMs.push(nowMs() - t);
    chunk = [];
  };
  for (const entry of scaleEntries(n)) {
    chunk.push(entry);
    if (chunk.length === CHUNK) await flush();
  }
  if (chunk.length) await flush();
  await importer.close();
  const metrics: Record<string, number> = {
    import_s: (nowMs() - t0) / 1000,
    import_chunk_ratio: chunkRatio(chunkMs),
    disk_mib: diskMib(job.dir),
  };
  const peak = mib('VmHWM');
  if (peak !== undefined) metrics.import_peak_mib = peak;
  return { metrics, answers: {} };
};

/** Opens the store and answers `path`, timed from a quiet start (as reads.ts's openStore). */
async function firstLook(
  backend: Parameters<Scenario>[0],
  dir: string,
  path: string,
): Promise<{ h: BenchHandler; answer: string; ms: number }> {
  collect();
  await settle();
  const t0 = nowMs();
  const h = await backend.open(dir);
  const answer = await h.view({ command: 'view', path });
  return { h, answer, ms: nowMs() - t0 };
}

function withRss(metrics: Record<string, number>, metric: string): Record<string, number> {
  const rss = mib('VmRSS');
  if (rss !== undefined) metrics[metric] = rss;
  return metrics;
}

/**
 * Times `path` viewed again and again after two untimed views (the JIT's first compilations are
 * not a warm view): at least 3 times, then for up to a second at a million memories, where one
 * view can take seconds, and 50 ms on a small store, where one takes microseconds. The median.
 */
async function warm(h: BenchHandler, path: string, answer: string, size: number): Promise<number> {
  const budgetMs = Math.min(1000, Math.max(50, size / 1000));
  for (let i = 0; i < 2; i++) await h.view({ command: 'view', path });
  const times: number[] = [];
  const start = nowMs();
  while (times.length < 3 || (times.length < 200 && nowMs() - start < budgetMs)) {
    const t = nowMs();
    const again = await h.view({ command: 'view', path });
    times.push(nowMs() - t);
    if (again !== answer) throw new Error(`view ${path} answered differently on a repeat`);
  }
  return median(times);
}

function firstLookScenario(which: 'file' | 'dir100', metric: string, rssMetric: string): Scenario {
  return async (backend, job): Promise<ScenarioOutput> => {
    const path = scalePaths(job.params.size as number)[which];
    const { h, answer, ms } = await firstLook(backend, job.dir, path);
    try {
      return { metrics: withRss({ [metric]: ms }, rssMetric), answers: { [`first view ${path}`]: answer } };
    } finally {
      await h.close();
    }
  };
}

export const scaleFirstView = firstLookScenario('file', 'open_view_ms', 'rss_view_mib');
export const scaleFirstList = firstLookScenario('dir100', 'open_list_ms', 'rss_list_mib');

export const scaleRoot: Scenario = async (backend, job) => {
  const size = job.params.size as number;
  const { root, dir1k } = scalePaths(size);
  const { h, answer, ms } = await firstLook(backend, job.dir, root);
  try {
    const metrics: Record<string, number> = { open_root_ms: ms, warm_root_ms: await warm(h, root, answer, size) };
    const dirAnswer = await h.view({ command: 'view', path: dir1k });
    metrics.warm_dir1k_ms = await warm(h, dir1k, dirAnswer, size);
    return { metrics: withRss(metrics, 'rss_end_mib'), answers: { [`view ${root}`]: answer, [`view ${dir1k}`]: dirAnswer } };
  } finally {
    await h.close();
  }
};

/** Durable creates of 200 B into /memories/new, then one delete of it: the store is left as found. */
export const scaleCreate: Scenario = async (backend, job) => {
  const creates = createCount(job.params.size as number);
  const h = await backend.open(job.dir);
  try {
    const times: number[] = [];
    const answers: Record<string, string> = {};
    for (let i = 0; i < creates; i++) {
      const path = `/memories/new/p${i}.md`;
      const t = nowMs();
      const answer = await h.create({ command: 'create', path, file_text: 'x'.repeat(200) });
      times.push(nowMs() - t);
      if (!answer.startsWith('File created')) throw new Error(`create ${path}: ${answer}`);
      if (i === 0) answers[`create ${path}`] = answer;
    }
    answers['delete /memories/new'] = await h.delete({ command: 'delete', path: '/memories/new' });
    return { metrics: { create_ms: median(times) }, answers };
  } finally {
    await h.close();
  }
};
