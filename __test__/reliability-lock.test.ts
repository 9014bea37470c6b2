// The store lock under contention: two child processes released at the same instant race to open
// one directory; exactly one wins each round and the other gets StoreLockedError naming the
// winner (its pid, running). A SIGKILLed holder leaves LOCK behind yet blocks nobody, and a
// second open inside one process names this process.
//
// Knob: RABOSH_LOCK_ROUNDS (default 100).
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

import { Rabosh, StoreLockedError } from '../index.ts';
import { makeTempDir, removeDir } from './tmp-dir.ts';

const ROUNDS = Number(process.env['RABOSH_LOCK_ROUNDS'] ?? 100);
const CHILD = fileURLToPath(new URL('./fixtures/reliability-lock-child.mjs', import.meta.url));
const LINE_MS = 30_000;

const dirs: string[] = [];
const children: Child[] = [];
afterEach(() => {
  for (const c of children.splice(0)) c.proc.kill('SIGKILL');
  dirs.splice(0).forEach(removeDir);
});

interface Child {
  proc: ChildProcessWithoutNullStreams;
  pid: number;
  /** The next line the child prints. */
  next(): Promise<string>;
  send(line: string): void;
  exited: Promise<number | null>;
}

async function spawnChild(dir: string, mode: 'exclusive' | 'shared' = 'exclusive'): Promise<Child> {
  const proc = spawn(process.execPath, [CHILD, dir, mode], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  proc.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  const queue: string[] = [];
  const waiting: ((l: string) => void)[] = [];
  createInterface({ input: proc.stdout }).on('line', (l) => {
    const w = waiting.shift();
    if (w) w(l);
    else queue.push(l);
  });
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  const next = () =>
    new Promise<string>((resolve, reject) => {
      const l = queue.shift();
      if (l !== undefined) return resolve(l);
      const timer = setTimeout(() => reject(new Error(`child ${proc.pid}: no line within ${LINE_MS} ms; stderr: ${stderr}`)), LINE_MS);
      waiting.push((line) => {
        clearTimeout(timer);
        resolve(line);
      });
    });
  const child: Child = { proc, pid: proc.pid!, next, send: (l) => proc.stdin.write(`${l}\n`), exited };
  children.push(child);
  const ready = await next();
  expect(ready).toBe(`READY ${proc.pid}`);
  return child;
}

interface Verdict {
  winner: Child;
  loser: Child;
}

/** Releases both children at once and checks the round: one winner, the other names it. */
async function race(a: Child, b: Child, round: number): Promise<Verdict> {
  // One write each, back to back: both are parked on a stdin read, so they wake together.
  a.send('GO');
  b.send('GO');
  const [la, lb] = await Promise.all([a.next(), b.next()]);
  const won = [la, lb].filter((l) => l.startsWith('WON '));
  expect(won, `round ${round}: exactly one winner (answers: ${la} | ${lb})`).toHaveLength(1);
  const [winner, loser, lost] = la.startsWith('WON ') ? [a, b, lb] : [b, a, la];
  expect(won[0]).toBe(`WON ${winner.pid}`);
  expect(lost, `round ${round}: the loser gets StoreLockedError`).toMatch(/^LOCKED /);
  const holder = JSON.parse(lost.slice('LOCKED '.length));
  expect(holder, `round ${round}: the holder is the winner, running, not the loser itself`).toMatchObject({
    pid: winner.pid,
    isRunning: true,
    thisProcess: false,
  });
  expect(holder.host).toBe(hostname());
  expect(Number.isNaN(Date.parse(holder.startedAt))).toBe(false);
  return { winner, loser };
}

describe('the store lock under contention', () => {
  it(`two processes race for one directory, ${ROUNDS} rounds; the holder always exits, a SIGKILLed one blocks nobody`, async () => {
    const dir = makeTempDir('rabosh-lock');
    dirs.push(dir);
    // Each round the winner leaves (exits, or is SIGKILLed every fourth round) and a fresh process
    // takes its place; the loser, which never held the lock, races again. Process start-up is the
    // cost of a round, so replacements start a few rounds ahead.
    let [a, b] = await Promise.all([spawnChild(dir), spawnChild(dir)]);
    const spares = Array.from({ length: Math.min(3, ROUNDS) }, () => spawnChild(dir));
    for (let round = 0; round < ROUNDS; round++) {
      const { winner, loser } = await race(a, b, round);
      if (round % 4 === 3) {
        winner.proc.kill('SIGKILL');
        expect(await winner.exited).toBe(null);
        expect(existsSync(join(dir, 'LOCK')), 'the lock file stays').toBe(true);
      } else {
        winner.send('EXIT');
        expect(await winner.exited).toBe(0);
      }
      [a, b] = [loser, await spares.shift()!];
      if (round + spares.length + 1 < ROUNDS) spares.push(spawnChild(dir));
    }
    a.send('EXIT');
    b.send('EXIT');
    expect(await a.exited).toBe(0);
    expect(await b.exited).toBe(0);
  });

  it('a process that closed the store and lives on is never named as the holder', async () => {
    const dir = makeTempDir('rabosh-lock-alive');
    dirs.push(dir);
    const a = await spawnChild(dir);
    const b = await spawnChild(dir);
    const rounds = ROUNDS;
    for (let round = 0; round < rounds; round++) {
      const { winner } = await race(a, b, round);
      winner.send('CLOSE');
      expect(await winner.next()).toBe('CLOSED');
    }
    a.send('EXIT');
    b.send('EXIT');
    expect(await a.exited).toBe(0);
    expect(await b.exited).toBe(0);
  });

  it('after the holder is SIGKILLed, an open succeeds and LOCK is still there', async () => {
    const dir = makeTempDir('rabosh-lock-kill');
    dirs.push(dir);
    const holder = await spawnChild(dir);
    holder.send('GO');
    expect(await holder.next()).toBe(`WON ${holder.pid}`);
    // The holder is exclusive: even a default (shared) open is refused, naming it.
    const err = await Rabosh.open(dir).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(StoreLockedError);
    expect((err as StoreLockedError).holder).toMatchObject({ pid: holder.pid, isRunning: true, thisProcess: false });
    holder.proc.kill('SIGKILL');
    expect(await holder.exited).toBe(null);
    expect(existsSync(join(dir, 'LOCK'))).toBe(true);
    const db = await Rabosh.open(dir);
    expect(existsSync(join(dir, 'LOCK'))).toBe(true);
    await db.close();
  });

  it('a shared holder in another process: default opens share the store, an exclusive open is refused naming it', async () => {
    const dir = makeTempDir('rabosh-lock-shared');
    dirs.push(dir);
    const holder = await spawnChild(dir, 'shared');
    holder.send('GO');
    expect(await holder.next()).toBe(`WON ${holder.pid}`);
    const err = await Rabosh.open(dir, { exclusive: true }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(StoreLockedError);
    expect((err as StoreLockedError).holder).toMatchObject({ pid: holder.pid, isRunning: true, thisProcess: false });
    const db = await Rabosh.open(dir);
    await db.close();
    holder.send('CLOSE');
    expect(await holder.next()).toBe('CLOSED');
    // The other direction: this process holds it exclusively, the child's shared open is refused.
    const exclusive = await Rabosh.open(dir, { exclusive: true });
    try {
      holder.send('GO');
      const answer = await holder.next();
      expect(answer).toMatch(/^LOCKED /);
      expect(JSON.parse(answer.slice('LOCKED '.length))).toMatchObject({ pid: process.pid, isRunning: true });
    } finally {
      await exclusive.close();
    }
    holder.send('EXIT');
    expect(await holder.exited).toBe(0);
  });

  it('a second open in the same process names this process', async () => {
    const dir = makeTempDir('rabosh-lock-self');
    dirs.push(dir);
    const db = await Rabosh.open(dir, { exclusive: true });
    try {
      const err = await Rabosh.open(dir).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(StoreLockedError);
      expect((err as StoreLockedError).code).toBe('RABOSH_STORE_LOCKED');
      expect((err as StoreLockedError).holder).toMatchObject({ pid: process.pid, isRunning: true, thisProcess: true });
      // The refused open did not disturb the open store.
      expect(db.stats().commits).toBeGreaterThanOrEqual(0);
    } finally {
      await db.close();
    }
    // And once closed, the same process opens it again.
    const again = await Rabosh.open(dir);
    await again.close();
  });
});
