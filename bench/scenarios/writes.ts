import { closeSync, fdatasyncSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { median, nowMs, percentile } from '../stats.js';
import { body, flat, pad, subtrees } from '../workload.js';
import type { Scenario } from './types.js';

const BODY_BYTES = 4096;

async function expect(answer: Promise<string>, prefix: string, what: string): Promise<string> {
  const text = await answer;
  if (!text.startsWith(prefix)) throw new Error(`${what}: unexpected answer ${JSON.stringify(text.slice(0, 200))}`);
  return text;
}

/** Durable create, str_replace and insert, one at a time, each timed on its own. */
export const durableWrites: Scenario = async (backend, job) => {
  const ops = job.params.ops as number;
  const warmup = job.params.warmup as number;
  const h = await backend.open(job.dir);
  const answers: Record<string, string> = {};
  const lat = { create: [] as number[], str_replace: [] as number[], insert: [] as number[] };
  const round = async (tag: string, n: number, keep: boolean) => {
    const path = (i: number) => `/memories/${tag}/w${pad(i, 5)}.md`;
    const step = async (kind: keyof typeof lat, i: number, run: () => Promise<string>, ok: string) => {
      const t0 = nowMs();
      const text = await expect(run(), ok, `${kind} ${path(i)}`);
      if (keep) {
        lat[kind].push(nowMs() - t0);
        if (i < 3 || i === n - 1) answers[`${kind} #${i}`] = text;
      }
    };
    for (let i = 0; i < n; i++) {
      const file_text = body(`w${pad(i, 5)}`, BODY_BYTES);
      await step('create', i, () => h.create({ command: 'create', path: path(i), file_text }), 'File created');
    }
    for (let i = 0; i < n; i++) {
      const args = { command: 'str_replace', path: path(i), old_str: 'L0030 ', new_str: 'M0030 ' } as const;
      await step('str_replace', i, () => h.str_replace(args), 'The memory file has been edited');
    }
    for (let i = 0; i < n; i++) {
      const args = { command: 'insert', path: path(i), insert_line: 1, insert_text: `inserted ${i}\n` } as const;
      await step('insert', i, () => h.insert(args), 'The file ');
    }
  };
  try {
    await round('warm', warmup, false);
    await round('timed', ops, true);
    answers['view after edits'] = await h.view({ command: 'view', path: `/memories/timed/w${pad(0, 5)}.md` });
  } finally {
    await h.close();
  }
  return {
    metrics: {
      create_ms: median(lat.create),
      create_p99_ms: percentile(lat.create, 99),
      str_replace_ms: median(lat.str_replace),
      insert_ms: median(lat.insert),
    },
    answers,
  };
};

/**
 * The physical floor: a 4 KiB append and an fdatasync, the least a durable commit that grows its
 * file can cost here; and the same write over blocks written (and synced) before, which needs no
 * new file size journaled — what a log that writes zeros ahead of itself pays (ours, SQLite's WAL
 * once it wraps).
 */
export const rawAppendSync: Scenario = async (_backend, job) => {
  const ops = job.params.ops as number;
  const warmup = job.params.warmup as number;
  mkdirSync(job.dir, { recursive: true });
  const block = Buffer.alloc(BODY_BYTES, 0x61);
  const timed = (fd: number, write: (i: number) => void): number[] => {
    const times: number[] = [];
    try {
      for (let i = 0; i < warmup + ops; i++) {
        const t0 = nowMs();
        write(i);
        fdatasyncSync(fd);
        if (i >= warmup) times.push(nowMs() - t0);
      }
    } finally {
      closeSync(fd);
    }
    return times;
  };
  const appendFd = openSync(join(job.dir, 'append.log'), 'a');
  const appended = timed(appendFd, () => writeSync(appendFd, block));
  const overFd = openSync(join(job.dir, 'overwrite.log'), 'w');
  writeSync(overFd, Buffer.alloc(BODY_BYTES * (warmup + ops)));
  fdatasyncSync(overFd);
  const overwritten = timed(overFd, (i) => writeSync(overFd, block, 0, BODY_BYTES, i * BODY_BYTES));
  return { metrics: { append_fdatasync_ms: median(appended), overwrite_fdatasync_ms: median(overwritten) }, answers: {} };
};

/** Recursive rename, then recursive delete, of subtrees of `perTree` memories each. */
export const subtree: Scenario = async (backend, job) => {
  const trees = job.params.trees as number;
  const perTree = job.params.perTree as number;
  await backend.seed(job.dir, subtrees(trees, perTree, 64));
  const h = await backend.open(job.dir);
  const answers: Record<string, string> = {};
  const renames: number[] = [];
  const deletes: number[] = [];
  try {
    for (let j = 0; j < trees; j++) {
      const t0 = nowMs();
      const args = { command: 'rename', old_path: `/memories/t${j}`, new_path: `/memories/r${j}` } as const;
      answers[`rename t${j}`] = await expect(h.rename(args), 'Successfully renamed', `rename t${j}`);
      renames.push(nowMs() - t0);
    }
    answers['view after renames'] = await h.view({ command: 'view', path: '/memories' });
    for (let j = 0; j < trees; j++) {
      const t0 = nowMs();
      const args = { command: 'delete', path: `/memories/r${j}` } as const;
      answers[`delete r${j}`] = await expect(h.delete(args), 'Successfully deleted', `delete r${j}`);
      deletes.push(nowMs() - t0);
    }
    answers['view after deletes'] = await h.view({ command: 'view', path: '/memories' });
  } finally {
    await h.close();
  }
  return { metrics: { rename_ms: median(renames), delete_ms: median(deletes) }, answers };
};

/**
 * `callers` concurrent callers, each creating its own memory and then editing it `edits` times
 * (str_replace and insert alternately), while the event loop's delay is sampled every millisecond.
 */
export const concurrent: Scenario = async (backend, job) => {
  const callers = job.params.callers as number;
  const edits = job.params.edits as number;
  const h = await backend.open(job.dir);
  const caller = async (tag: string, k: number, n: number): Promise<string[]> => {
    const path = `/memories/${tag}/c${pad(k, 3)}.md`;
    const out = [await h.create({ command: 'create', path, file_text: body(`c${pad(k, 3)}`, BODY_BYTES) })];
    for (let e = 0; e < n; e++) {
      // A caller's next command arrives as a new event (as a tool call from the network would),
      // so a handler that works on the JS thread shows up as lag rather than one long microtask run.
      await new Promise<void>((r) => setImmediate(r));
      const token = `L${pad(3 + (e >> 1), 4)} `;
      out.push(
        e % 2 === 0
          ? await h.str_replace({ command: 'str_replace', path, old_str: token, new_str: `M${token.slice(1)}` })
          : await h.insert({ command: 'insert', path, insert_line: 0, insert_text: `edit ${e}` }),
      );
    }
    return out;
  };
  const answers: Record<string, string> = {};
  let elapsed = 0;
  const delay = monitorEventLoopDelay({ resolution: 1 });
  try {
    await Promise.all(Array.from({ length: callers }, (_, k) => caller('warm', k, 1)));
    delay.enable();
    const t0 = nowMs();
    const results = await Promise.all(Array.from({ length: callers }, (_, k) => caller('timed', k, edits)));
    elapsed = nowMs() - t0;
    // One more timer turn, so a loop that was blocked until the end records that block too.
    await new Promise<void>((r) => setTimeout(r, 2));
    delay.disable();
    results.forEach((seq, k) => {
      answers[`caller ${k}`] = seq.join('\n--\n');
    });
  } finally {
    await h.close();
  }
  return {
    metrics: {
      loop_lag_p99_ms: delay.percentile(99) / 1e6,
      ops_per_s: (callers * (edits + 1)) / (elapsed / 1000),
    },
    answers,
  };
};

/** Bulk seeding into an empty directory, until it is on stable storage. */
export const bulkSeed: Scenario = async (backend, job) => {
  const count = job.params.count as number;
  const bytes = job.params.bytes as number;
  const t0 = nowMs();
  await backend.seed(job.dir, flat(count, bytes));
  const s = (nowMs() - t0) / 1000;
  const h = await backend.open(job.dir);
  const last = `/memories/note${pad(count - 1, 5)}.md`;
  const answer = await h.view({ command: 'view', path: last, view_range: [1, 2] });
  await h.close();
  return { metrics: { seed_s: s }, answers: { [`view ${last} [1, 2] after seeding`]: answer } };
};
