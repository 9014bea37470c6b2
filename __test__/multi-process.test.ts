// Several processes, one store, through the public API with default options: N child processes
// × M concurrent callers increment counter memories by view + str_replace (retrying when another
// caller won), one process is SIGKILLed mid-run. The final counts equal the acknowledged
// increments (plus at most the killed process's in-flight ones, one per caller), every memory is
// intact, and an observer process that opened the store before it all and never reopens sees the
// final values. Children load the built package (`npm run build`).
//
// Knobs: RABOSH_MP_PROCS (3), RABOSH_MP_CALLERS (4), RABOSH_MP_TIMES (30).
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

import { RaboshMemoryToolHandler } from '../index.ts';
import { makeTempDir, removeDir } from './tmp-dir.ts';

const PROCS = Number(process.env['RABOSH_MP_PROCS'] ?? 3);
const CALLERS = Number(process.env['RABOSH_MP_CALLERS'] ?? 4);
const TIMES = Number(process.env['RABOSH_MP_TIMES'] ?? 30);
const COUNTERS = 3;
const CHILD = fileURLToPath(new URL('./fixtures/multi-process-counter.mjs', import.meta.url));

const dirs: string[] = [];
const running: ChildProcessWithoutNullStreams[] = [];
afterEach(() => {
  for (const c of running.splice(0)) c.kill('SIGKILL');
  dirs.splice(0).forEach(removeDir);
});

interface Child {
  proc: ChildProcessWithoutNullStreams;
  /** The next line it prints; `null` once its output ended. */
  next(): Promise<string | null>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>;
}

function start(args: string[]): Child {
  const proc = spawn(process.execPath, [CHILD, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  running.push(proc);
  let stderr = '';
  proc.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  const queue: (string | null)[] = [];
  const waiting: ((l: string | null) => void)[] = [];
  const put = (l: string | null) => {
    const w = waiting.shift();
    if (w) w(l);
    else queue.push(l);
  };
  const lines = createInterface({ input: proc.stdout });
  lines.on('line', put);
  lines.on('close', () => put(null));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((resolve) =>
    proc.on('close', (code, signal) => resolve({ code, signal, stderr })),
  );
  const next = () =>
    new Promise<string | null>((resolve) => {
      if (queue.length > 0) resolve(queue.shift()!);
      else waiting.push(resolve);
    });
  return { proc, next, exited };
}

/** Reads ACK lines into `acks` until DONE (true), the end of output (false) or `stopAfter` acks. */
async function countAcks(c: Child, acks: number[], stopAfter = Infinity): Promise<boolean> {
  let seen = 0;
  for (;;) {
    const line = await c.next();
    if (line === null) return false;
    if (line === 'DONE') return true;
    const k = /^ACK (\d+)$/.exec(line)?.[1];
    if (k === undefined) throw new Error(`unexpected line: ${line}`);
    acks[Number(k)]! += 1;
    if (++seen >= stopAfter) return false;
  }
}

async function ask(observer: Child): Promise<number[]> {
  observer.proc.stdin.write('?\n');
  const line = await observer.next();
  expect(line).toMatch(/^VALUES /);
  return line!.slice('VALUES '.length).split(' ').map(Number);
}

describe('several processes, one store (default options)', () => {
  it(`${PROCS} processes × ${CALLERS} callers count by view + str_replace, one SIGKILLed: no increment lost`, async () => {
    const dir = makeTempDir('rabosh-mp');
    dirs.push(dir);
    const setup = await RaboshMemoryToolHandler.open(dir);
    for (let k = 0; k < COUNTERS; k++) {
      await setup.execute({ command: 'create', path: `/memories/c${k}`, file_text: 'count: 0\n' });
    }
    // The setup handle stays open through the run: one more process-like holder of the store.
    const observer = start(['observer', dir, String(COUNTERS)]);
    expect(await observer.next()).toBe('READY');
    expect(await ask(observer)).toEqual(Array(COUNTERS).fill(0));

    const children = Array.from({ length: PROCS }, () => start(['counter', dir, String(CALLERS), String(TIMES), String(COUNTERS)]));
    const acks: number[] = Array(COUNTERS).fill(0);
    const [victim, ...survivors] = children;
    const finished = await countAcks(victim!, acks, Math.floor((CALLERS * TIMES) / 3));
    expect(finished, 'the kill lands while the victim works').toBe(false);
    victim!.proc.kill('SIGKILL');
    expect((await victim!.exited).signal).toBe('SIGKILL');
    // Lines it wrote before the kill are still in the pipe.
    await countAcks(victim!, acks);
    for (const c of survivors) {
      expect(await countAcks(c, acks), 'a surviving process finished').toBe(true);
      const { code, stderr } = await c.exited;
      expect(code, stderr).toBe(0);
    }

    const finals: number[] = [];
    for (let k = 0; k < COUNTERS; k++) {
      const { text } = await setup.execute({ command: 'view', path: `/memories/c${k}` });
      // Intact: exactly the one line, as every str_replace left it.
      expect(text).toMatch(/^Here's the content of \/memories\/c\d+ with line numbers:\n {5}1\tcount: \d+\n {5}2\t$/);
      finals.push(Number(/count: (\d+)/.exec(text)![1]));
    }
    const acked = acks.reduce((a, b) => a + b, 0);
    const total = finals.reduce((a, b) => a + b, 0);
    for (let k = 0; k < COUNTERS; k++) {
      expect(finals[k], `counter c${k}: ${acks[k]} acknowledged increments`).toBeGreaterThanOrEqual(acks[k]!);
    }
    expect(total, `${total} counted, ${acked} acknowledged, at most ${CALLERS} in flight`).toBeLessThanOrEqual(acked + CALLERS);
    expect(acked).toBeGreaterThanOrEqual((PROCS - 1) * CALLERS * TIMES);
    expect(await ask(observer), 'the long-lived observer sees the final values').toEqual(finals);
    observer.proc.stdin.end();
    expect((await observer.exited).code).toBe(0);
    await setup.close();
  });
});
