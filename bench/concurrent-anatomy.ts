// Where one command's time goes at 64 concurrent callers (issue 24's "throughput of 64 concurrent
// callers" row; findings in bench/results/concurrent.md): the bench's `concurrent` workload
// (bench/scenarios/writes.ts), longer. Per timed round, one JSON line: throughput, the JS thread's
// event-loop utilisation and CPU time per command, and, from Linux's per-thread schedstat (ns),
// the writer thread's CPU per command and the share of the wall each thread spent runnable but
// waiting for a core. Run it under `strace -f` or `perf record` for syscalls and profiles; point
// NAPI_RS_NATIVE_LIBRARY_PATH at another addon to compare two builds.
// Knobs: RABOSH_ANATOMY_CALLERS (64), RABOSH_ANATOMY_EDITS (40), RABOSH_ANATOMY_ROUNDS (3).
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { load } from './handlers/rabosh.js';
import { threadCpuMs } from './loop-block.js';

const callers = Number(process.env.RABOSH_ANATOMY_CALLERS ?? 64);
const edits = Number(process.env.RABOSH_ANATOMY_EDITS ?? 40);
const rounds = Number(process.env.RABOSH_ANATOMY_ROUNDS ?? 3);

const body = (tag: string) =>
  Array.from({ length: 64 }, (_, i) => `L${String(i).padStart(4, '0')} ${tag} ${'x'.repeat(50)}`).join('\n');

/**
 * This process's threads named `name` (or the one thread with that id: the JS thread's is the
 * pid), by id: [ns on a CPU, ns runnable and waiting for one] (Linux schedstat).
 */
function threadsCpuNs(name: string | number): Map<string, [number, number]> {
  const out = new Map<string, [number, number]>();
  if (process.platform !== 'linux') return out;
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      if (typeof name === 'number' ? tid !== String(name) : readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim() !== name) continue;
      const [run, wait] = readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').split(' ');
      out.set(tid, [Number(run), Number(wait)]);
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return out;
}

const mod = await load();
for (let round = 0; round < rounds; round++) {
  const dir = mkdtempSync(join(tmpdir(), 'rabosh-anatomy-'));
  const db = await mod.Rabosh.open(dir, { durability: 'sync' });
  const h = new mod.RaboshMemoryToolHandler(db, { listingIndex: true });
  const caller = async (tag: string, k: number, n: number) => {
    const path = `/memories/${tag}/c${String(k).padStart(3, '0')}.md`;
    await h.create({ command: 'create', path, file_text: body(`c${k}`) });
    for (let e = 0; e < n; e++) {
      await new Promise<void>((r) => setImmediate(r));
      const token = `L${String(3 + (e >> 1)).padStart(4, '0')} `;
      if (e % 2 === 0) await h.str_replace({ command: 'str_replace', path, old_str: token, new_str: `M${token.slice(1)}` });
      else await h.insert({ command: 'insert', path, insert_line: 0, insert_text: `edit ${e}` });
    }
  };
  await Promise.all(Array.from({ length: callers }, (_, k) => caller('warm', k, 1)));
  const cpu0 = threadCpuMs() ?? Number.NaN;
  const writer0 = threadsCpuNs('rabosh-writer');
  const js0 = threadsCpuNs(process.pid);
  const elu0 = performance.eventLoopUtilization();
  const t0 = performance.now();
  await Promise.all(Array.from({ length: callers }, (_, k) => caller('timed', k, edits)));
  const wall = performance.now() - t0;
  const elu = performance.eventLoopUtilization(elu0);
  const cpu = (threadCpuMs() ?? Number.NaN) - cpu0;
  const writer1 = threadsCpuNs('rabosh-writer');
  const delta = (a: Map<string, [number, number]>, b: Map<string, [number, number]>, i: 0 | 1) =>
    [...b].reduce((sum, [tid, v]) => sum + v[i] - (a.get(tid)?.[i] ?? 0), 0) / 1e6;
  const writerMs = delta(writer0, writer1, 0);
  const writerQueuedMs = delta(writer0, writer1, 1);
  const js1 = threadsCpuNs(process.pid);
  const jsQueuedMs = delta(js0, js1, 1);
  const ops = callers * (edits + 1);
  console.log(
    JSON.stringify({
      ops,
      wall_ms: +wall.toFixed(1),
      ops_per_s: Math.round(ops / (wall / 1000)),
      js_elu: +elu.utilization.toFixed(3),
      js_cpu_pct_of_wall: +((100 * cpu) / wall).toFixed(1),
      js_cpu_us_per_op: +((1000 * cpu) / ops).toFixed(1),
      wall_us_per_op: +((1000 * wall) / ops).toFixed(1),
      writer_cpu_pct_of_wall: +((100 * writerMs) / wall).toFixed(1),
      writer_cpu_us_per_op: +((1000 * writerMs) / ops).toFixed(1),
      js_runnable_not_running_pct_of_wall: +((100 * jsQueuedMs) / wall).toFixed(1),
      writer_runnable_not_running_pct_of_wall: +((100 * writerQueuedMs) / wall).toFixed(1),
    }),
  );
  await db.close();
  rmSync(dir, { recursive: true, force: true });
}
