// 64 concurrent callers on one handler, mixed commands on overlapping paths. The final store must
// equal a serial replay of the successful commands in commit order, and no read-modify-write
// (str_replace, insert) may be lost to a race.
//
// Commit order is not the order the promises resolve in: writes are serialised in the store, but
// each answer travels back through the libuv pool and the microtask queue, and two commits can be
// answered in either order. So the order is derived from what the commits themselves recorded,
// and the workload is built so that it is recoverable where it matters:
//   - counter: str_replace `n=k` → `n=k+1` on one shared file succeeds only against value k, so
//     the successes are ordered by k (and a lost update would show as two successes for one k);
//   - log: every insert puts a unique line at line 0 of one shared file, so the final file lists
//     the inserts in reverse commit order (and a lost insert would be a missing line);
//   - marks: each caller bumps its own `<m{id}:{k}>` marker in one shared file, ordered by k;
//   - toggles: create/delete of a few shared paths; per path the successes must alternate, and the
//     content written is the path's own, so any alternating order replays to the same state;
//   - baton: one memory renamed between slots; a rename succeeds only from where the baton is, so
//     the successes form a trail, and any trail over the same moves ends on the same slot.
// Groups touch disjoint paths, so their relative order does not change the final state.
//
// Knobs: RABOSH_CONC_STEPS (ops per caller, default 40), RABOSH_CONC_SEED.
import { afterEach, describe, expect, it } from 'vitest';

import { Rabosh, RaboshMemoryToolHandler } from '../index.ts';
import { within } from './fixtures/reliability-watchdog.ts';
import { makeTempDir, removeDir } from './tmp-dir.ts';

const CALLERS = 64;
const STEPS = Number(process.env['RABOSH_CONC_STEPS'] ?? 40);
const SEED = Number(process.env['RABOSH_CONC_SEED'] ?? Date.now() >>> 0);
const SLOTS = 6;
const TOGGLES = 4;
const CALL_MS = 60_000;

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach(removeDir));

/** A small seeded generator per caller, so a run replays from RABOSH_CONC_SEED. */
function rng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 2 ** 32;
  };
}

type Input = Record<string, unknown>;
type Exec = (i: Input) => Promise<{ text: string; isError: boolean }>;

const marks = Array.from({ length: CALLERS }, (_, id) => `<m${id}:0>`).join('\n');
const initial: Input[] = [
  { command: 'create', path: '/memories/counter', file_text: 'n=0' },
  { command: 'create', path: '/memories/log', file_text: '' },
  { command: 'create', path: '/memories/marks', file_text: marks },
  { command: 'create', path: '/memories/slot/0', file_text: 'baton' },
];
const togglePath = (t: number) => `/memories/t/${t}`;
const toggleText = (t: number) => `toggle ${t}`;
const slotPath = (s: number) => `/memories/slot/${s}`;
const snapshotPaths = [
  '/memories',
  '/memories/counter',
  '/memories/log',
  '/memories/marks',
  '/memories/t',
  '/memories/slot',
  ...Array.from({ length: TOGGLES }, (_, t) => togglePath(t)),
  ...Array.from({ length: SLOTS }, (_, s) => slotPath(s)),
];

interface Record_ {
  counter: number[]; // k of each successful n=k → n=k+1
  inserts: string[]; // every inserted line (all must succeed)
  markBumps: number[]; // per caller, how many bumps succeeded
  toggles: { t: number; op: 'create' | 'delete' }[];
  moves: [number, number][];
}

const fileLines = (text: string) =>
  text
    .split('\n')
    .slice(1)
    .map((l) => l.slice(l.indexOf('\t') + 1));

async function caller(id: number, exec: Exec, rec: Record_): Promise<void> {
  const rand = rng(SEED + id * 7919);
  let lastSeen = -1;
  let k = 0;
  for (let step = 0; step < STEPS; step++) {
    const r = rand();
    if (r < 0.3) {
      // Read the counter, then try to move it on from what was read.
      const v = await exec({ command: 'view', path: '/memories/counter' });
      expect(v.isError).toBe(false);
      const n = Number(/^n=(\d+)$/.exec(fileLines(v.text)[0] ?? '')?.[1]);
      expect(Number.isInteger(n), v.text).toBe(true);
      expect(n, `caller ${id}: reads of the counter never go back`).toBeGreaterThanOrEqual(lastSeen);
      lastSeen = n;
      const o = await exec({ command: 'str_replace', path: '/memories/counter', old_str: `n=${n}`, new_str: `n=${n + 1}` });
      if (!o.isError) {
        expect(o.text).toBe(
          `The memory file has been edited. Here is the snippet showing the change (with line numbers):\n     1\tn=${n + 1}`,
        );
        rec.counter.push(n);
        lastSeen = n + 1;
      } else {
        expect(o.text).toBe(`No replacement was performed, old_str \`n=${n}\` did not appear verbatim in /memories/counter.`);
      }
    } else if (r < 0.5) {
      const line = `c${id}s${step}`;
      const o = await exec({ command: 'insert', path: '/memories/log', insert_line: 0, insert_text: line });
      expect(o).toEqual({ text: 'The file /memories/log has been edited.', isError: false });
      rec.inserts.push(line);
    } else if (r < 0.65) {
      const o = await exec({ command: 'str_replace', path: '/memories/marks', old_str: `<m${id}:${k}>`, new_str: `<m${id}:${k + 1}>` });
      expect(o.isError, `caller ${id}: its own marker <m${id}:${k}> was lost: ${o.text}`).toBe(false);
      k++;
      rec.markBumps[id] = k;
    } else if (r < 0.8) {
      const t = Math.floor(rand() * TOGGLES);
      if (rand() < 0.5) {
        const o = await exec({ command: 'create', path: togglePath(t), file_text: toggleText(t) });
        if (!o.isError) rec.toggles.push({ t, op: 'create' });
        else expect(o.text).toBe(`Error: File ${togglePath(t)} already exists`);
      } else {
        const o = await exec({ command: 'delete', path: togglePath(t) });
        if (!o.isError) rec.toggles.push({ t, op: 'delete' });
        else expect(o.text).toBe(`Error: The path ${togglePath(t)} does not exist`);
      }
    } else if (r < 0.93) {
      const from = Math.floor(rand() * SLOTS);
      const to = (from + 1 + Math.floor(rand() * (SLOTS - 1))) % SLOTS;
      const o = await exec({ command: 'rename', old_path: slotPath(from), new_path: slotPath(to) });
      if (!o.isError) {
        expect(o.text).toBe(`Successfully renamed ${slotPath(from)} to ${slotPath(to)}`);
        rec.moves.push([from, to]);
      } else {
        expect([`Error: The path ${slotPath(from)} does not exist`, `Error: The destination ${slotPath(to)} already exists`]).toContain(
          o.text,
        );
      }
    } else {
      // A listing taken mid-storm is one snapshot: exactly one baton, every file present.
      const v = await exec({ command: 'view', path: '/memories/slot' });
      expect(v.isError).toBe(false);
      const batons = v.text.split('\n').filter((l) => /^5B\t\/memories\/slot\/\d$/.test(l));
      expect(batons, v.text).toHaveLength(1);
    }
  }
}

/** Hierholzer: an order of the recorded moves that walks the baton from slot 0. */
function trail(moves: [number, number][]): [number, number][] {
  const out = new Map<number, [number, number][]>();
  for (const m of moves) out.set(m[0], [...(out.get(m[0]) ?? []), m]);
  const stack: { at: number; via?: [number, number] }[] = [{ at: 0 }];
  const path: [number, number][] = [];
  while (stack.length > 0) {
    const top = stack[stack.length - 1]!;
    const next = out.get(top.at)?.pop();
    if (next) stack.push({ at: next[1], via: next });
    else {
      stack.pop();
      if (top.via) path.push(top.via);
    }
  }
  expect(path, 'the successful renames form one trail of the baton from slot 0').toHaveLength(moves.length);
  return path.reverse();
}

/** The successful commands, in an order the answers prove is the commit order (see the top). */
function serialOrder(rec: Record_, logLines: string[]): Input[] {
  const cmds: Input[] = [];
  const sorted = [...rec.counter].sort((a, b) => a - b);
  expect(sorted, 'each counter value was moved on exactly once (no lost str_replace)').toEqual(sorted.map((_, i) => i));
  for (const n of sorted) cmds.push({ command: 'str_replace', path: '/memories/counter', old_str: `n=${n}`, new_str: `n=${n + 1}` });
  // Inserted at line 0: the last commit is the first line.
  for (const line of [...logLines].reverse()) cmds.push({ command: 'insert', path: '/memories/log', insert_line: 0, insert_text: line });
  rec.markBumps.forEach((bumps, id) => {
    for (let k = 0; k < bumps; k++)
      cmds.push({ command: 'str_replace', path: '/memories/marks', old_str: `<m${id}:${k}>`, new_str: `<m${id}:${k + 1}>` });
  });
  for (let t = 0; t < TOGGLES; t++) {
    const ops = rec.toggles.filter((x) => x.t === t);
    const creates = ops.filter((x) => x.op === 'create').length;
    const deletes = ops.length - creates;
    expect([0, 1], `toggle ${t}: creates and deletes alternate`).toContain(creates - deletes);
    for (let i = 0; i < ops.length; i++) {
      cmds.push(
        i % 2 === 0 ? { command: 'create', path: togglePath(t), file_text: toggleText(t) } : { command: 'delete', path: togglePath(t) },
      );
    }
  }
  for (const [from, to] of trail(rec.moves)) cmds.push({ command: 'rename', old_path: slotPath(from), new_path: slotPath(to) });
  return cmds;
}

async function stateOf(h: RaboshMemoryToolHandler): Promise<unknown> {
  const views: Record<string, unknown> = {};
  for (const p of snapshotPaths) views[p] = await h.execute({ command: 'view', path: p });
  return { views, usage: await h.usage() };
}

describe('concurrent callers on one handler', () => {
  it(`${CALLERS} callers × ${STEPS} mixed commands: final state = serial replay in commit order`, async () => {
    const dir = makeTempDir('rabosh-conc');
    const replayDir = makeTempDir('rabosh-conc-replay');
    dirs.push(dir, replayDir);
    const db = await Rabosh.open(dir);
    const replayDb = await Rabosh.open(replayDir);
    try {
      const handler = new RaboshMemoryToolHandler(db);
      const exec: Exec = (i) => within(handler.execute(i), CALL_MS, () => JSON.stringify(i));
      for (const i of initial) expect((await exec(i)).isError).toBe(false);

      const rec: Record_ = { counter: [], inserts: [], markBumps: Array(CALLERS).fill(0), toggles: [], moves: [] };
      const resolved: string[] = [];
      const logged: Exec = async (i) => {
        const o = await exec(i);
        if (i['command'] === 'insert') resolved.push(String(i['insert_text']));
        return o;
      };
      const commitsBefore = db.stats().commits;
      await Promise.all(Array.from({ length: CALLERS }, (_, id) => caller(id, logged, rec)));
      const stats = db.stats();

      // The log, read back: every insert exactly once, none lost, none doubled.
      const log = await handler.execute({ command: 'view', path: '/memories/log' });
      const logLines = fileLines(log.text).filter((l) => l !== '');
      expect([...logLines].sort()).toEqual([...rec.inserts].sort());
      expect((await handler.execute({ command: 'view', path: '/memories/counter' })).text).toMatch(
        new RegExp(`\\tn=${rec.counter.length}$`),
      );
      // Toggles are stored in the store's own order; the record here is in resolution order,
      // which only has to agree on counts (serialOrder checks they alternate).
      const order = serialOrder(rec, logLines);

      // Replay the successes one at a time into a fresh store: every one must succeed again.
      const replay = new RaboshMemoryToolHandler(replayDb);
      for (const i of [...initial, ...order]) {
        const o = await replay.execute(i);
        expect(o.isError, `replay of ${JSON.stringify(i)}: ${o.text}`).toBe(false);
      }
      expect(await stateOf(replay)).toEqual(await stateOf(handler));

      // How far resolution order strays from commit order (informational: why it is not used).
      const commitOrder = [...logLines].reverse();
      const strays = resolved.filter((l, i) => commitOrder[i] !== l).length;
      console.log(
        `concurrency: seed ${SEED}, ${CALLERS}×${STEPS} ops, ${stats.commits - commitsBefore} commits in ${stats.fsyncs} fsyncs total; ` +
          `counter ${rec.counter.length}, inserts ${rec.inserts.length} (${strays} positions where resolution order differs from commit order), ` +
          `marks ${rec.markBumps.reduce((a, b) => a + b, 0)}, toggles ${rec.toggles.length}, moves ${rec.moves.length}`,
      );
    } finally {
      await db.close();
      await replayDb.close();
    }
  });
});
