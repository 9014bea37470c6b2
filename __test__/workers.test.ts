// The addon in worker_threads, the nearest local stand-in for Electron's utility processes and
// renderer workers: loaded, used and unloaded in workers one after another and side by side
// (each worker its own napi environment), a worker terminated in the middle of writing, and then
// the main thread reopening the store and finding every acknowledged write.
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { RaboshMemoryToolHandler } from '../index.js';
import { makeTempDir, removeDir } from './tmp-dir.js';

const script = join(import.meta.dirname, 'fixtures', 'worker-memories.mjs');
// The same content the worker writes, written out again so a mix-up cannot agree with itself.
const content = (tag: string, i: number) => `${tag} memory ${i}\n${'x'.repeat(i % 53)}`;

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach(removeDir));
function tempDir(): string {
  const d = makeTempDir('rabosh-workers');
  dirs.push(d);
  return d;
}

interface Batch {
  done: number;
  view: string;
}

/** Runs a batch worker to its end: resolves with its report once it has exited cleanly. */
function batch(dir: string, tag: string, count: number): Promise<Batch> {
  return new Promise((resolve, reject) => {
    const w = new Worker(script, { workerData: { dir, mode: 'batch', count, tag } });
    let report: Batch | undefined;
    w.on('message', (m: Batch) => (report = m));
    w.on('error', reject);
    w.on('exit', (code) => (code === 0 && report ? resolve(report) : reject(new Error(`worker ${tag} exited ${code} without a report`))));
  });
}

async function holds(dir: string, tag: string, count: number): Promise<void> {
  const h = await RaboshMemoryToolHandler.open(dir);
  try {
    expect(await h.usage()).toMatchObject({ memories: count });
    for (let i = 0; i < count; i++) {
      const v = await h.execute({ command: 'view', path: `/memories/${tag}/${i}` });
      expect(
        v.text.startsWith(`Here's the content of /memories/${tag}/${i} with line numbers:\n     1\t${tag} memory ${i}`),
        `${tag}/${i}`,
      ).toBe(true);
    }
  } finally {
    await h.close();
  }
}

describe('worker_threads', () => {
  it('workers one after another on one store: each loads, writes, closes and unloads', async () => {
    const dir = tempDir();
    for (const tag of ['one', 'two', 'three']) {
      const r = await batch(dir, tag, 40);
      expect(r.done).toBe(40);
      expect(r.view).toBe(`Here's the content of /memories/${tag}/0 with line numbers:\n     1\t${tag} memory 0\n     2\t`);
    }
    const h = await RaboshMemoryToolHandler.open(dir);
    try {
      expect((await h.usage()).memories).toBe(120);
      for (const tag of ['one', 'two', 'three']) {
        for (const i of [0, 17, 39]) {
          const v = await h.execute({ command: 'view', path: `/memories/${tag}/${i}` });
          expect(v.text).toBe(
            `Here's the content of /memories/${tag}/${i} with line numbers:\n` +
              content(tag, i)
                .split('\n')
                .map((l, n) => `${String(n + 1).padStart(6)}\t${l}`)
                .join('\n'),
          );
        }
      }
    } finally {
      await h.close();
    }
  });

  it('workers side by side on different stores, while the main thread uses the addon too', async () => {
    const stores = ['a', 'b', 'c', 'd'].map((tag) => ({ tag, dir: tempDir() }));
    const mainDir = tempDir();
    const main = await RaboshMemoryToolHandler.open(mainDir);
    try {
      const mainWrites = (async () => {
        for (let i = 0; i < 40; i++) await main.execute({ command: 'create', path: `/memories/main/${i}`, file_text: content('main', i) });
      })();
      const reports = await Promise.all(stores.map(({ tag, dir }) => batch(dir, tag, 60)));
      await mainWrites;
      expect(reports.map((r) => r.done)).toEqual([60, 60, 60, 60]);
    } finally {
      await main.close();
    }
    for (const { tag, dir } of stores) await holds(dir, tag, 60);
    await holds(mainDir, 'main', 40);
  });

  it('a worker terminated mid-write: the main thread reopens the store and finds every acknowledged write', async () => {
    const dir = tempDir();
    const acked: number[] = [];
    const w = new Worker(script, { workerData: { dir, mode: 'forever', tag: 'w' } });
    const errors: unknown[] = [];
    w.on('error', (e) => errors.push(e));
    await new Promise<void>((resolve) => {
      w.on('message', (m: { ack?: number }) => {
        if (m.ack === undefined) return;
        acked.push(m.ack);
        // Terminate while the next create is in flight (the worker starts it right after posting).
        if (acked.length === 25) resolve();
      });
    });
    const code = await w.terminate();
    expect(code).toBe(1);
    expect(errors).toEqual([]);
    // Acks may still arrive between the 25th and the termination: a gapless prefix, 25 or more.
    expect(acked.length).toBeGreaterThanOrEqual(25);
    expect(acked).toEqual(Array.from({ length: acked.length }, (_, i) => i));

    // The worker's environment is gone, and with it its store: the lock is free in this process.
    const h = await RaboshMemoryToolHandler.open(dir);
    try {
      const { memories } = await h.usage();
      // Every acknowledged create is there; at most the ones in flight at termination besides.
      expect(memories).toBeGreaterThanOrEqual(acked.length);
      for (const i of acked) {
        const v = await h.execute({ command: 'view', path: `/memories/w/${i}` });
        expect(v.text.split('\n')[1], `w/${i}`).toBe(`     1\tw memory ${i}`);
      }
      for (let i = 0; i < memories; i++)
        expect((await h.execute({ command: 'view', path: `/memories/w/${i}` })).isError, `w/${i}`).toBe(false);
    } finally {
      await h.close();
    }
    // And a new worker loads the addon again after the terminated one.
    expect((await batch(dir, 'after', 5)).done).toBe(5);
  });
});
