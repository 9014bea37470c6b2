// Several processes, one store (issue 12): what sharing costs a durable command, and what a read
// costs when it must first catch up on another process's commit. Ours only: the same command
// (a str_replace in a 4 KiB memory) in an exclusive store, in a shared store used by this process
// alone, and in a shared store while a second process (bench/shared-peer.ts) commits at once.

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { load, type RaboshModule } from '../handlers/rabosh.js';
import { median, nowMs } from '../stats.js';
import { body } from '../workload.js';
import type { Scenario } from './types.js';

const PEER = fileURLToPath(new URL('../shared-peer.ts', import.meta.url));

interface Peer {
  send(line: string): void;
  next(): Promise<string>;
  proc: ChildProcess;
}

function startPeer(dir: string, callers: number): Peer {
  const proc = spawn(process.execPath, ['--import', 'tsx', PEER, dir, String(callers)], { stdio: ['pipe', 'pipe', 'inherit'] });
  const queue: string[] = [];
  const waiting: ((l: string) => void)[] = [];
  createInterface({ input: proc.stdout! }).on('line', (l) => {
    const w = waiting.shift();
    if (w) w(l);
    else queue.push(l);
  });
  proc.on('exit', (code) => {
    for (const w of waiting.splice(0)) w(`EXITED ${code}`);
  });
  const next = () =>
    new Promise<string>((resolve) => {
      const l = queue.shift();
      if (l !== undefined) resolve(l);
      else waiting.push(resolve);
    });
  return { proc, next, send: (l) => proc.stdin!.write(`${l}\n`) };
}

async function expectLine(peer: Peer, prefix: string): Promise<string> {
  const line = await peer.next();
  if (!line.startsWith(prefix)) throw new Error(`shared peer: expected ${prefix}, got ${line}`);
  return line;
}

/** A handler over `dir` whose callers each bump a memory of their own by str_replace. */
async function opened(mod: RaboshModule, dir: string, exclusive: boolean, callers: number, tag: string) {
  const db = await mod.Rabosh.open(dir, { durability: 'sync', exclusive });
  const h = new mod.RaboshMemoryToolHandler(db, { listingIndex: false });
  const counts = Array<number>(callers).fill(0);
  const path = (c: number) => `/memories/${tag}/c${c}.md`;
  for (let c = 0; c < callers; c++) {
    await h.create({ command: 'create', path: path(c), file_text: `v 0\n${body(`${tag}${c}`, 4096)}` });
  }
  const bump = async (c: number) => {
    const n = counts[c]!;
    const text = await h.str_replace({ command: 'str_replace', path: path(c), old_str: `v ${n}\n`, new_str: `v ${n + 1}\n` });
    if (!text.startsWith('The memory file has been edited')) throw new Error(`unexpected answer ${text.slice(0, 200)}`);
    counts[c] = n + 1;
  };
  /** `n` commands on caller 0's memory, one after another: per-command latencies. */
  const latencies = async (n: number) => {
    const out: number[] = [];
    for (let i = 0; i < n; i++) {
      const t0 = nowMs();
      await bump(0);
      out.push(nowMs() - t0);
    }
    return out;
  };
  /** Every caller makes `n` commands at once; returns commands per second. */
  const throughput = async (n: number) => {
    const t0 = nowMs();
    await Promise.all(
      Array.from({ length: callers }, async (_, c) => {
        for (let i = 0; i < n; i++) await bump(c);
      }),
    );
    return (callers * n) / ((nowMs() - t0) / 1000);
  };
  return { db, h, path, latencies, throughput };
}

export const sharedStore: Scenario = async (_backend, job) => {
  const ops = job.params.ops as number;
  const warmup = job.params.warmup as number;
  const callers = job.params.callers as number;
  const perCaller = job.params.perCaller as number;
  const mod = await load();
  mkdirSync(job.dir, { recursive: true });
  const metrics: Record<string, number> = {};

  // One process, exclusive and shared, each its own directory; commands alternate between the
  // two stores so a slow moment of the process (warm-up, another job on the machine) hits both.
  const ex = await opened(mod, join(job.dir, 'exclusive'), true, callers, 'ex');
  const sharedDir = join(job.dir, 'shared');
  const sh = await opened(mod, sharedDir, false, callers, 'sh');
  const exLat: number[] = [];
  const shLat: number[] = [];
  for (let i = 0; i < warmup + ops; i++) {
    const [e] = await ex.latencies(1);
    const [s] = await sh.latencies(1);
    if (i >= warmup) {
      exLat.push(e!);
      shLat.push(s!);
    }
  }
  metrics.excl_ms = median(exLat);
  metrics.shared_ms = median(shLat);
  const exTput: number[] = [];
  const shTput: number[] = [];
  for (let r = 0; r < 2; r++) {
    exTput.push(await ex.throughput(perCaller));
    shTput.push(await sh.throughput(perCaller));
  }
  metrics.excl_ops_per_s = median(exTput);
  metrics.shared_ops_per_s = median(shTput);
  await ex.db.close();

  // Two processes on one store, committing at the same time.
  const peer = startPeer(sharedDir, callers);
  try {
    await expectLine(peer, 'READY');
    peer.send(`LOOP ${ops + warmup}`);
    const mine = await sh.latencies(ops);
    await expectLine(peer, 'DONE ');
    metrics.shared_two_ms = median(mine);
    const t0 = nowMs();
    peer.send(`LOOP ${perCaller}`);
    await sh.throughput(perCaller);
    await expectLine(peer, 'DONE ');
    metrics.shared_two_ops_per_s = (2 * callers * perCaller) / ((nowMs() - t0) / 1000);

    // Reads: a view with nothing new, and a view right after the other process committed.
    const view = { command: 'view', path: sh.path(0) } as const;
    const idle: number[] = [];
    const caught: number[] = [];
    for (let i = 0; i < warmup + ops; i++) {
      peer.send('C');
      await expectLine(peer, 'OK');
      let t0 = nowMs();
      await sh.h.view(view);
      if (i >= warmup) caught.push(nowMs() - t0);
      t0 = nowMs();
      await sh.h.view(view);
      if (i >= warmup) idle.push(nowMs() - t0);
    }
    metrics.view_idle_ms = median(idle);
    metrics.view_catch_up_ms = median(caught);
    const closed = new Promise((resolve) => peer.proc.on('close', resolve));
    peer.send('EXIT');
    await closed;
  } finally {
    peer.proc.kill('SIGKILL');
    await sh.db.close();
  }
  return { metrics, answers: { 'view after the runs': await viewAfter(mod, sharedDir, sh.path(0)) } };
};

/** The first memory as a fresh open of the store shows it: proof the commands landed. */
async function viewAfter(mod: RaboshModule, dir: string, path: string): Promise<string> {
  const db = await mod.Rabosh.open(dir, { durability: 'sync' });
  try {
    return await new mod.RaboshMemoryToolHandler(db, { listingIndex: false }).view({ command: 'view', path });
  } finally {
    await db.close();
  }
}
