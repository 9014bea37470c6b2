// Crash safety with real processes: a child Node process running the BUILT package (dist, via the
// package's own name) is SIGKILLed while it writes; the parent then reopens the store.
//  (a) mid-stream of creates: every acknowledged memory survives with its content, and the
//      survivors are a contiguous prefix of the attempts (the acked ones, plus at most the one in
//      flight);
//  (b) mid-rename of a 1,000-memory subtree back and forth: all 1,000 are under exactly one of the
//      two names, never a mixture.
// Each round asserts the kill landed while the child was alive and working.
// Knob: RABOSH_CRASH_ROUNDS (default 20 each).
import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { Rabosh, RaboshMemoryToolHandler } from '../index.js';
import { eachLine } from './child-lines.js';
import { makeTempDir, removeDir } from './tmp-dir.js';

const ROUNDS = Number(process.env.RABOSH_CRASH_ROUNDS ?? 20);
const fixture = (name: string) => join(import.meta.dirname, 'fixtures', name);

interface Killed {
  lines: string[];
  stderr: string;
  signal: NodeJS.Signals | null;
  code: number | null;
  aliveWhenKilled: boolean;
}

/** Runs a fixture and SIGKILLs it once `shouldKill` says so for a line of its output. */
function runAndKill(script: string, args: string[], shouldKill: (line: string, index: number) => boolean): Promise<Killed> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    const lines: string[] = [];
    let stderr = '';
    let aliveWhenKilled = false;
    let killed = false;
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    eachLine(child.stdout, (line) => {
      lines.push(line);
      if (!killed && shouldKill(line, lines.length - 1)) {
        killed = true;
        aliveWhenKilled = child.exitCode === null && child.signalCode === null;
        child.kill('SIGKILL');
      }
    });
    child.on('error', reject);
    // 'close' waits for stdout to drain: lines written before the kill are all counted.
    child.on('close', (code, signal) => resolve({ lines, stderr, signal, code, aliveWhenKilled }));
  });
}

const randomInt = (lo: number, hi: number) => lo + Math.floor(Math.random() * (hi - lo + 1));
const createdContent = (i: number) => `memory ${i}\n${'x'.repeat(i % 97)}`;
const FILE_VIEW = (p: string, content: string) =>
  `Here's the content of ${p} with line numbers:` +
  content
    .split('\n')
    .map((l, i) => `\n${String(i + 1).padStart(6, ' ')}\t${l}`)
    .join('');

describe('SIGKILL mid-stream of creates', () => {
  it(`${ROUNDS} rounds: every acknowledged create survives, survivors are a contiguous prefix`, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const dir = makeTempDir('rabosh-crash-create');
      try {
        const target = randomInt(1, 120);
        const run = await runAndKill(fixture('crash-create.mjs'), [dir], (line) => line === `ACK ${target - 1}`);
        expect(run.stderr, `round ${round}`).toBe('');
        expect(run.aliveWhenKilled, `round ${round}: the child must still be working when killed`).toBe(true);
        expect(run.signal).toBe('SIGKILL');
        const acks = run.lines.filter((l) => l.startsWith('ACK '));
        expect(acks).toEqual(Array.from({ length: acks.length }, (_, i) => `ACK ${i}`));
        expect(acks.length).toBeGreaterThanOrEqual(target);

        const handler = await RaboshMemoryToolHandler.open(dir);
        try {
          const { memories } = await handler.usage();
          expect(memories, `round ${round}`).toBeGreaterThanOrEqual(acks.length);
          expect(memories, `round ${round}: only the create in flight may survive unacknowledged`).toBeLessThanOrEqual(acks.length + 1);
          for (let i = 0; i < memories; i++) {
            const path = `/memories/c/${i}`;
            expect(await handler.execute({ command: 'view', path }), `round ${round} ${path}`).toEqual({
              text: FILE_VIEW(path, createdContent(i)),
              isError: false,
            });
          }
          expect((await handler.execute({ command: 'view', path: `/memories/c/${memories}` })).isError).toBe(true);
        } finally {
          await handler.close();
        }
      } finally {
        removeDir(dir);
      }
    }
  });
});

describe('the lock across processes', () => {
  it('a live writer process holds the store (shared): an exclusive open fails naming it; once killed, the store opens', async () => {
    const dir = makeTempDir('rabosh-crash-lock');
    try {
      const child = spawn(process.execPath, [fixture('crash-create.mjs'), dir], { stdio: ['ignore', 'pipe', 'pipe'] });
      const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('close', (_code, signal) => resolve(signal)));
      await new Promise<void>((resolve, reject) => {
        let seen = '';
        child.stdout.on('data', (d: Buffer) => {
          seen += d.toString();
          if (seen.includes('ACK 3\n')) resolve();
        });
        child.on('error', reject);
        child.on('close', (code) => reject(new Error(`the writer exited (${code}) before ACK 3: ${seen}`)));
      });
      let locked: any;
      try {
        await (await Rabosh.open(dir, { exclusive: true })).close();
      } catch (e) {
        locked = e;
      }
      expect(child.exitCode).toBeNull();
      child.kill('SIGKILL');
      expect(await exited).toBe('SIGKILL');
      expect(locked?.code).toBe('RABOSH_STORE_LOCKED');
      expect(locked.holder).toMatchObject({ pid: child.pid, isRunning: true, thisProcess: false });
      // the dead holder's lock does not block: no lock file to delete by hand
      const handler = await RaboshMemoryToolHandler.open(dir, { exclusive: true });
      expect((await handler.usage()).memories).toBeGreaterThanOrEqual(4);
      await handler.close();
    } finally {
      removeDir(dir);
    }
  });
});

describe('SIGKILL mid-rename of a 1,000-memory subtree', () => {
  const N = 1000;
  const rel = (i: number) => `/d${i % 10}/m${i}.md`;
  const body = (i: number) => `memory number ${i}`;

  /** How many of the subtree's memories a listing of `root` shows, checking each size. */
  async function countUnder(handler: RaboshMemoryToolHandler, root: string): Promise<number> {
    const { text, isError } = await handler.execute({ command: 'view', path: root });
    if (isError) {
      expect(text).toBe(`The path ${root} does not exist. Please provide a valid path.`);
      return 0;
    }
    let n = 0;
    for (const line of text.split('\n')) {
      const m = /^(\d+)B\t(.*)\/d\d\/m(\d+)\.md$/.exec(line);
      if (!m) continue;
      expect(m[2]).toBe(root);
      expect(Number(m[1])).toBe(Buffer.byteLength(body(Number(m[3]))));
      n++;
    }
    return n;
  }

  it(`${ROUNDS} rounds: all old or all new, never a mixture`, async () => {
    const dir = makeTempDir('rabosh-crash-rename');
    try {
      {
        // Setup without an fsync per memory; close makes it durable.
        await using db = await Rabosh.open(dir, { durability: 'buffered' });
        const h = new RaboshMemoryToolHandler(db);
        for (let i = 0; i < N; i++) {
          await h.execute({ command: 'create', path: `/memories/tree${rel(i)}`, file_text: body(i) });
        }
        expect(await h.usage()).toEqual({
          memories: N,
          bytes: Array.from({ length: N }, (_, i) => body(i).length).reduce((a, b) => a + b),
        });
      }
      let renamesSeen = 0;
      for (let round = 0; round < ROUNDS; round++) {
        const target = randomInt(1, 4);
        const run = await runAndKill(fixture('crash-rename.mjs'), [dir], (line) => line.startsWith(`R ${target} `));
        expect(run.stderr, `round ${round}`).toBe('');
        expect(run.aliveWhenKilled, `round ${round}: the child must still be working when killed`).toBe(true);
        expect(run.signal).toBe('SIGKILL');
        renamesSeen += run.lines.filter((l) => l.startsWith('R ')).length;

        const handler = await RaboshMemoryToolHandler.open(dir);
        try {
          const atTree = await countUnder(handler, '/memories/tree');
          const atMoved = await countUnder(handler, '/memories/moved');
          expect([atTree, atMoved], `round ${round}`).toSatisfy(([a, b]: number[]) => (a === N && b === 0) || (a === 0 && b === N));
          const root = atTree === N ? '/memories/tree' : '/memories/moved';
          expect(await handler.usage()).toMatchObject({ memories: N });
          // every memory's content, in the last round (listing sizes are checked every round)
          if (round === ROUNDS - 1) {
            for (let i = 0; i < N; i++) {
              const path = `${root}${rel(i)}`;
              expect(await handler.execute({ command: 'view', path })).toEqual({ text: FILE_VIEW(path, body(i)), isError: false });
            }
          }
        } finally {
          await handler.close();
        }
      }
      expect(renamesSeen).toBeGreaterThanOrEqual(ROUNDS);
    } finally {
      removeDir(dir);
    }
  });
});
