// The store lock under contention: two child processes released at the same instant race to open
// one directory; exactly one wins each round and the other gets StoreLockedError naming the
// winner (its pid, running). A SIGKILLed holder leaves LOCK behind yet blocks nobody, and a
// second open inside one process names this process.
//
// Knob: RABOSH_LOCK_ROUNDS (default 100).
//
// The commit lock of a shared store (issue 33): every call waiting for it answers within
// `lockTimeout` — StoreBusyError naming the holder, having committed nothing — and one that gets
// it in time succeeds; the JS thread never waits meanwhile. Holders: util-linux `flock` on
// `WRITER`, and a committing Node process SIGSTOPped while it holds it (Linux).
import { spawn, spawnSync, type ChildProcess, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

import { Rabosh, RaboshMemoryToolHandler, StoreBusyError, StoreLockedError, type ToolOutput } from '../index.ts';
import { makeTempDir, removeDir } from './tmp-dir.ts';

const ROUNDS = Number(process.env['RABOSH_LOCK_ROUNDS'] ?? 100);
const CHILD = fileURLToPath(new URL('./fixtures/reliability-lock-child.mjs', import.meta.url));
const LINE_MS = 30_000;

const dirs: string[] = [];
const children: Child[] = [];
const holders: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) c.proc.kill('SIGKILL');
  for (const h of holders.splice(0)) {
    h.kill('SIGCONT');
    h.kill('SIGKILL');
  }
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

const hasFlock = process.platform === 'linux' && spawnSync('flock', ['--version']).status === 0;
/** The lock timeout of the waits below; an answer may come this much later on a loaded machine. */
const LOCK_TIMEOUT = 3000;
const LATE = 2000;

/** util-linux `flock` holding the store's commit lock until `release`. */
async function flockWriter(dir: string): Promise<{ pid: number; release(): Promise<void> }> {
  const proc = spawn('flock', [join(dir, 'WRITER'), '-c', 'echo HELD; read line'], { stdio: ['pipe', 'pipe', 'inherit'] });
  holders.push(proc);
  await new Promise<void>((resolve) => createInterface({ input: proc.stdout! }).once('line', () => resolve()));
  const closed = new Promise((resolve) => proc.once('close', resolve));
  return {
    pid: proc.pid!,
    release: async () => {
      proc.stdin!.write('\n');
      await closed;
    },
  };
}

/** A call's outcome (answer or error) and how long it took to settle. */
interface Timed {
  output: ToolOutput | null;
  error: unknown;
  ms: number;
}
function timed(call: Promise<ToolOutput>): Promise<Timed> {
  const started = performance.now();
  return call.then(
    (output) => ({ output, error: null, ms: performance.now() - started }),
    (error: unknown) => ({ output: null, error, ms: performance.now() - started }),
  );
}

function expectBusy(t: Timed, holderPid: number, what: string): void {
  expect(t.error, `${what}: ${t.output?.text}`).toBeInstanceOf(StoreBusyError);
  expect((t.error as StoreBusyError).holder.pid, what).toBe(holderPid);
  expect(t.ms, `${what} gave up early`).toBeGreaterThanOrEqual(LOCK_TIMEOUT - 100);
  expect(t.ms, `${what} answered after ${t.ms} ms (lockTimeout ${LOCK_TIMEOUT})`).toBeLessThan(LOCK_TIMEOUT + LATE);
}

/** The longest the event loop went without running a 20 ms timer while `during` ran. */
async function loopGap<T>(during: () => Promise<T>): Promise<[T, number]> {
  let last = performance.now();
  let gap = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    gap = Math.max(gap, now - last);
    last = now;
  }, 20);
  try {
    return [await during(), gap];
  } finally {
    clearInterval(timer);
  }
}

async function openHandler(dir: string): Promise<[Rabosh, RaboshMemoryToolHandler]> {
  const db = await Rabosh.open(dir, { lockTimeout: LOCK_TIMEOUT });
  return [db, new RaboshMemoryToolHandler(db)];
}

const create = (h: RaboshMemoryToolHandler, path: string) => timed(h.execute({ command: 'create', path, file_text: 'x\n' }));
const exists = async (h: RaboshMemoryToolHandler, path: string) => !(await h.execute({ command: 'view', path })).isError;

/** Another Node process runs `body` (with `h`, a handler over `dir`) through the built package. */
function inPeer(dir: string, body: string): void {
  const script = `
    import { Rabosh, RaboshMemoryToolHandler } from 'rabosh-memory';
    const db = await Rabosh.open(${JSON.stringify(dir)});
    const h = new RaboshMemoryToolHandler(db);
    ${body}
    await db.close();`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
}

/** Whether `pid` holds the `flock` on `file` (Linux: /proc/locks; a waiter's line carries "->"). */
function holdsFlock(pid: number, file: string): boolean {
  const ino = statSync(file).ino;
  return readFileSync('/proc/locks', 'utf8')
    .split('\n')
    .filter((l) => l.includes('FLOCK') && !l.includes('->'))
    .some((l) => {
      const f = l.trim().split(/\s+/);
      return Number(f[4]) === pid && Number(f[5]?.split(':')[2]) === ino;
    });
}

/** Waits (bounded) until every thread of `pid` is stopped. */
async function stopped(pid: number): Promise<void> {
  for (let i = 0; i < 500; i++) {
    const state = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0];
    if (state === 'T' || state === 't') return;
    await sleep(2);
  }
  throw new Error(`process ${pid} did not stop`);
}

describe.skipIf(!hasFlock)('waiting for the commit lock of a shared store', () => {
  it('a create answers StoreBusyError by lockTimeout and commits nothing; one queued behind it gets the lock when it is let go', async () => {
    const dir = makeTempDir('rabosh-lock-wait');
    dirs.push(dir);
    const [db, h] = await openHandler(dir);
    await h.execute({ command: 'create', path: '/memories/kept.md', file_text: 'kept\n' });
    const holder = await flockWriter(dir);
    const [[first, second], gap] = await loopGap(async () => {
      const first = create(h, '/memories/first.md');
      await sleep(LOCK_TIMEOUT / 2);
      const second = create(h, '/memories/second.md');
      const one = await first;
      // Let go half-way through the second's wait: it must get the lock, not fail with the first.
      await holder.release();
      return [one, await second];
    });
    expectBusy(first, holder.pid, 'the first create');
    expect(second.error).toBe(null);
    expect(second.output?.isError, second.output?.text).toBe(false);
    expect(second.ms, 'the second create waited past its timeout').toBeLessThan(LOCK_TIMEOUT + LATE);
    expect(gap, 'the JS thread waited for the lock').toBeLessThan(1000);
    expect(await exists(h, '/memories/first.md'), 'the refused create committed').toBe(false);
    expect(await exists(h, '/memories/second.md')).toBe(true);
    expect(await exists(h, '/memories/kept.md')).toBe(true);
    await db.close();
  });

  it('a holder that lets go before lockTimeout: the waiting create succeeds soon after', async () => {
    const dir = makeTempDir('rabosh-lock-in-time');
    dirs.push(dir);
    const db = await Rabosh.open(dir, { lockTimeout: 5000 });
    const h = new RaboshMemoryToolHandler(db);
    const holder = await flockWriter(dir);
    const waiting = create(h, '/memories/a.md');
    await sleep(1000);
    await holder.release();
    const t = await waiting;
    expect(t.error).toBe(null);
    expect(t.output?.isError, t.output?.text).toBe(false);
    expect(t.ms, 'it waited on after the release').toBeLessThan(4000);
    expect(await exists(h, '/memories/a.md')).toBe(true);
    await db.close();
  });

  it('a committing process SIGSTOPped while it holds the lock: a create answers StoreBusyError by lockTimeout', async () => {
    const dir = makeTempDir('rabosh-lock-stopped');
    dirs.push(dir);
    const [db, h] = await openHandler(dir);
    // Commits without pause, so it holds the lock through each append and fsync.
    const script = `
      import { RaboshMemoryToolHandler } from 'rabosh-memory';
      const h = await RaboshMemoryToolHandler.open(${JSON.stringify(dir)});
      console.log('READY');
      for (let i = 0; ; i++) await h.execute({ command: 'create', path: '/memories/peer' + (i % 50) + '-' + i + '.md', file_text: 'p\\n' });`;
    const peer = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    holders.push(peer);
    await new Promise<void>((resolve) => createInterface({ input: peer.stdout! }).once('line', () => resolve()));
    const pid = peer.pid!;
    let holding = false;
    for (let attempt = 0; attempt < 500 && !holding; attempt++) {
      process.kill(pid, 'SIGSTOP');
      await stopped(pid);
      holding = holdsFlock(pid, join(dir, 'WRITER'));
      if (!holding) {
        process.kill(pid, 'SIGCONT');
        await sleep(attempt % 7);
      }
    }
    expect(holding, 'the peer was never stopped while holding the lock').toBe(true);
    try {
      const [t, gap] = await loopGap(() => create(h, '/memories/mine.md'));
      expectBusy(t, pid, 'the create');
      expect(gap, 'the JS thread waited for the lock').toBeLessThan(1000);
    } finally {
      process.kill(pid, 'SIGCONT');
      peer.kill('SIGKILL');
    }
    await new Promise((resolve) => (peer.exitCode === null && peer.signalCode === null ? peer.once('exit', resolve) : resolve(null)));
    expect(await exists(h, '/memories/mine.md'), 'the refused create committed').toBe(false);
    const later = await create(h, '/memories/mine.md');
    expect(later.output?.isError, String(later.error)).toBe(false);
    await db.close();
  });

  it('a read that needs the lock, behind a waiting create, answers by its own lockTimeout', async () => {
    const dir = makeTempDir('rabosh-lock-read');
    dirs.push(dir);
    const [db, h] = await openHandler(dir);
    await h.execute({ command: 'create', path: '/memories/mine.md', file_text: 'mine\n' });
    // Opened before: another process commits and compacts (the MANIFEST is replaced, so the
    // first read here must reload under the lock), then a holder takes the lock.
    inPeer(dir, `await h.execute({ command: 'create', path: '/memories/peer.md', file_text: 'peer\\n' }); await db.compact();`);
    const holder = await flockWriter(dir);
    const [[write, read], gap] = await loopGap(async () => {
      const write = create(h, '/memories/later.md');
      await sleep(200);
      const read = timed(h.execute({ command: 'view', path: '/memories/peer.md' }));
      return [await write, await read];
    });
    expectBusy(write, holder.pid, 'the create');
    expectBusy(read, holder.pid, 'the read');
    expect(gap, 'the JS thread waited for the lock').toBeLessThan(1000);
    await holder.release();
    expect((await h.execute({ command: 'view', path: '/memories/peer.md' })).text).toContain('peer');
    expect(await exists(h, '/memories/later.md')).toBe(false);
    await db.close();
  });
});
