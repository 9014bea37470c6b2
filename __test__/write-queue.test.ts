// The embedded store's write queue (crates/rabosh-node/src/write_queue.rs), end to end:
//  (a) commands that commit do not wait for the libuv pool: with every pool thread held, 64
//      durable creates still complete (on the pool they could not even start, and at most 4
//      commits could share one fsync there);
//  (b) 64 concurrent callers SIGKILLed mid-stream: every acknowledged create survives with its
//      content, and each caller's survivors are its acknowledged ones plus at most the one it had
//      in flight.
// The queue's failed-fsync and power-loss tests are Rust (write_queue/tests.rs: FaultFs, SimFs).
// Knob: RABOSH_CRASH_ROUNDS (default 5 here).
import { execFileSync, spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Rabosh, RaboshMemoryToolHandler } from '../index.js';
import { eachLine } from './child-lines.js';
import { makeTempDir, removeDir } from './tmp-dir.js';

const ROUNDS = Number(process.env.RABOSH_CRASH_ROUNDS ?? 5);
const CALLERS = 64;
const content = (c: number, i: number) => `caller ${c} memory ${i}\n${'y'.repeat((c * 7 + i) % 89)}`;
const FILE_VIEW = (p: string, text: string) =>
  `Here's the content of ${p} with line numbers:` +
  text
    .split('\n')
    .map((l, i) => `\n${String(i + 1).padStart(6, ' ')}\t${l}`)
    .join('');

describe('the write queue is not bounded by the libuv pool', () => {
  it('64 durable creates complete while every libuv pool thread is blocked', { timeout: 60_000 }, async () => {
    const dir = makeTempDir('rabosh-write-queue');
    try {
      const db = await Rabosh.open(join(dir, 'store'), { durability: 'sync' });
      const handler = new RaboshMemoryToolHandler(db);
      // Opening a FIFO for reading holds a pool thread until a writer opens the FIFO.
      const pool = Number(process.env['UV_THREADPOOL_SIZE'] ?? 4);
      const fifos = Array.from({ length: pool }, (_, i) => join(dir, `fifo${i}`));
      for (const f of fifos) execFileSync('mkfifo', [f]);
      const held = fifos.map((f) => open(f, 'r'));
      try {
        const answers = await Promise.all(
          Array.from({ length: CALLERS }, (_, i) =>
            handler.execute({ command: 'create', path: `/memories/n${i}.md`, file_text: `note ${i}\n` }),
          ),
        );
        expect(answers.map((a) => a.text)).toEqual(
          Array.from({ length: CALLERS }, (_, i) => `File created successfully at: /memories/n${i}.md`),
        );
      } finally {
        // Free the pool from this thread (the pool is what is full): a writer on each FIFO.
        const writers = fifos.map((f) => openSync(f, 'w'));
        await Promise.all((await Promise.all(held)).map((h) => h.close()));
        for (const w of writers) closeSync(w);
      }
      await db.close();
      const again = await RaboshMemoryToolHandler.open(join(dir, 'store'));
      expect(await again.usage()).toMatchObject({ memories: CALLERS });
      await again.close();
    } finally {
      removeDir(dir);
    }
  });
});

interface Killed {
  acks: [number, number][];
  stderr: string;
  signal: NodeJS.Signals | null;
  aliveWhenKilled: boolean;
}

/** Runs the 64-caller child and SIGKILLs it once it has printed `target` acknowledgements. */
function runAndKill(dir: string, target: number): Promise<Killed> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(import.meta.dirname, 'fixtures', 'crash-concurrent.mjs'), dir], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const acks: [number, number][] = [];
    let stderr = '';
    let killed = false;
    let aliveWhenKilled = false;
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    eachLine(child.stdout, (line) => {
      const m = /^ACK (\d+) (\d+)$/.exec(line);
      if (!m) return;
      acks.push([Number(m[1]), Number(m[2])]);
      if (!killed && acks.length >= target) {
        killed = true;
        aliveWhenKilled = child.exitCode === null && child.signalCode === null;
        child.kill('SIGKILL');
      }
    });
    child.on('error', reject);
    // 'close' waits for stdout to drain: every line written before the kill is counted.
    child.on('close', (_code, signal) => resolve({ acks, stderr, signal, aliveWhenKilled }));
  });
}

describe('SIGKILL while 64 callers create through the write queue', () => {
  it(`${ROUNDS} rounds: every acknowledged create survives`, { timeout: 600_000 }, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const dir = makeTempDir('rabosh-crash-queue');
      try {
        const target = CALLERS + Math.floor(Math.random() * 10 * CALLERS);
        const run = await runAndKill(dir, target);
        expect(run.stderr, `round ${round}`).toBe('');
        expect(run.aliveWhenKilled, `round ${round}: the child must still be working when killed`).toBe(true);
        expect(run.signal).toBe('SIGKILL');
        // Per caller, acknowledgements arrive in order: 0, 1, 2 …
        const acked = Array.from({ length: CALLERS }, () => 0);
        for (const [c, i] of run.acks) {
          expect(i, `round ${round}: caller ${c}`).toBe(acked[c]);
          acked[c] = i + 1;
        }
        const handler = await RaboshMemoryToolHandler.open(dir);
        try {
          let survivors = 0;
          for (let c = 0; c < CALLERS; c++) {
            const ackedHere = acked[c]!;
            // Every acknowledged create, and at most the one in flight, whole.
            let i = 0;
            for (; ; i++) {
              const path = `/memories/k${c}/${i}`;
              const v = await handler.execute({ command: 'view', path });
              if (i >= ackedHere && v.isError) break;
              expect(v, `round ${round} ${path} (acknowledged: ${i < ackedHere})`).toEqual({
                text: FILE_VIEW(path, content(c, i)),
                isError: false,
              });
            }
            expect(i, `round ${round} caller ${c}: only its create in flight may survive unacknowledged`).toBeLessThanOrEqual(
              ackedHere + 1,
            );
            survivors += i;
          }
          expect(await handler.usage()).toMatchObject({ memories: survivors });
        } finally {
          await handler.close();
        }
      } finally {
        removeDir(dir);
      }
    }
  });
});
