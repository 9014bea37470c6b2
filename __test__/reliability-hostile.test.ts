// Hostile tool input through handler.execute: generated inputs with wrong types in every field,
// missing fields, huge strings, lone surrogates, NULs and control characters, deep paths,
// traversal spellings, absurd view_range / insert_line values, non-object inputs and unknown
// commands. Every answer must be exactly the contract's answer for that input against a longhand
// model (fed only by the answers), nothing may throw or hang, and afterwards — and after a
// reopen — the store holds exactly what the model holds. It runs on both backends, the
// embedded store and PostgreSQL (a fresh schema on RABOSH_PG_URL), from the same seed: the
// PostgreSQL run is the first RABOSH_HOSTILE_PG_INPUTS (default: all) of the same inputs, so on
// those the two give the same answers byte for byte.
//
// Knobs: RABOSH_HOSTILE_INPUTS (default 100,000), RABOSH_HOSTILE_PG_INPUTS, RABOSH_HOSTILE_SEED
// (replay a run).
import { inspect } from 'node:util';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';

import { Rabosh, RaboshMemoryToolHandler } from '../index.ts';
import {
  ROOT,
  bytesOf,
  expectedAnswer as expect1,
  sameAnswer,
  type Expected,
  type Limits,
  type Memories,
} from './fixtures/contract-model.ts';
import { startWatchdog, within } from './fixtures/reliability-watchdog.ts';
import { makeTempDir, removeDir } from './tmp-dir.ts';
import { freshPgUrl } from './pg-url.ts';
import { commands, input } from './fixtures/hostile-inputs.ts';

const INPUTS = Number(process.env['RABOSH_HOSTILE_INPUTS'] ?? 100_000);
const PG_INPUTS = Math.min(INPUTS, Number(process.env['RABOSH_HOSTILE_PG_INPUTS'] ?? INPUTS));
const SEED = Number(process.env['RABOSH_HOSTILE_SEED'] ?? (Date.now() ^ (process.pid << 8)) >>> 0);
const BATCH = 1_000;
const CALL_MS = 30_000;
// The watchdog above is the hang detector: a stuck call fails within 2 × CALL_MS and names its
// input. A limit on the whole run adds nothing but a failure on a busy machine, where the run
// (tens of seconds alone) took over 20 minutes; so none (vitest: 0 disables it).
const NO_WHOLE_RUN_LIMIT = 0;

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach(removeDir));

// ---- the run ---------------------------------------------------------------------------------

const describeInput = (v: unknown) =>
  inspect(v, { depth: 3, maxStringLength: 300, maxArrayLength: 10, breakLength: Infinity, showHidden: false });

function mismatch(n: number, v: unknown, want: Expected, got: unknown): string {
  return [
    `input #${n} (replay: RABOSH_HOSTILE_SEED=${SEED} RABOSH_HOSTILE_INPUTS=${n + 1}):`,
    `  input    ${describeInput(v)}`,
    `  expected ${describeInput({ text: want.text, isError: want.isError })}`,
    `  got      ${describeInput(got)}`,
  ].join('\n');
}

/** The store equals the model: usage, the root listing, and every memory read back whole. */
async function assertStoreIs(db: Rabosh, model: Memories, where: string): Promise<void> {
  const reader = new RaboshMemoryToolHandler(db, { viewMaxChars: 2 ** 40 });
  const wide: Limits = { maxMemoryBytes: 1_048_576, viewMaxChars: 2 ** 40 };
  let bytes = 0;
  for (const v of model.values()) bytes += bytesOf(v);
  expect(await reader.usage(), `${where}: usage`).toEqual({ memories: model.size, bytes });
  const root = await reader.execute({ command: 'view', path: ROOT });
  expect(root.text, `${where}: root listing`).toBe(
    expect1({ command: 'view', path: ROOT }, model, { maxMemoryBytes: 1, viewMaxChars: 1 }).text,
  );
  for (const p of model.keys()) {
    const want = expect1({ command: 'view', path: p }, model, wide);
    const got = await reader.execute({ command: 'view', path: p });
    if (!sameAnswer(got, want)) expect.fail(`${where}: ${mismatch(-1, { path: p }, want, got)}`);
  }
  await reader.close();
}

/** `target`: a directory or a PostgreSQL URL; `inputs` of the seed's sequence, from the first. */
async function hostileRun(target: string, inputs: number, durability: 'sync' | 'buffered', label: string): Promise<void> {
  const INPUTS = inputs;
  const dir = target;
  {
    const lim: Limits = { maxMemoryBytes: 1_048_576, viewMaxChars: 16_000 };
    const protoBefore = Object.getOwnPropertyNames(Object.prototype).sort();
    const model: Memories = new Map();
    const tally = new Map<string, number>();
    const dog = startWatchdog(CALL_MS * 2, `hostile seed ${SEED}`);
    let db = await Rabosh.open(dir, { durability });
    const handler = new RaboshMemoryToolHandler(db);
    let n = 0;
    try {
      for (let batch = 0; n < INPUTS; batch++) {
        const inputs = fc.sample(input, { seed: SEED + batch, numRuns: Math.min(BATCH, INPUTS - n) });
        for (const v of inputs) {
          const want = expect1(v, model, lim);
          dog.beat();
          let got: unknown;
          try {
            got = await within(handler.execute(v), CALL_MS, () => describeInput(v));
          } catch (e) {
            expect.fail(`${mismatch(n, v, want, { threw: e })}`);
          } finally {
            dog.idle();
          }
          if (!sameAnswer(got as { text: string; isError: boolean }, want)) expect.fail(mismatch(n, v, want, got));
          want.apply?.(model);
          const c = typeof v === 'object' && v !== null ? (v as { command?: unknown }).command : undefined;
          const kind = `${want.isError ? 'refused' : 'ok'} ${(commands as readonly unknown[]).includes(c) ? c : '(unknown)'}`;
          tally.set(kind, (tally.get(kind) ?? 0) + 1);
          n++;
        }
      }
      await assertStoreIs(db, model, 'after the run');
      await handler.close();
      await db.sync();
      await db.close();
      db = await Rabosh.open(dir);
      await assertStoreIs(db, model, 'after reopen');
    } finally {
      await dog.stop();
      await db.close();
    }
    // Nothing the inputs carried (own __proto__ keys, constructor.prototype …) reached a prototype.
    expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(protoBefore);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
    expect(({} as Record<string, unknown>)['path']).toBeUndefined();
    const summary = [...tally]
      .sort()
      .map(([k, c]) => `${k}=${c}`)
      .join(' ');
    console.log(`hostile (${label}): seed ${SEED}, ${n} inputs; ${summary}; model holds ${model.size} memories`);
    expect(n).toBe(INPUTS);
  }
}

describe('hostile tool input', () => {
  it(
    `${INPUTS} generated inputs: exactly the contract answer each, no throw, no hang, store = model`,
    async () => {
      const dir = makeTempDir('rabosh-hostile');
      dirs.push(dir);
      // Buffered: this test is about answers, not durability; the reopen syncs first.
      await hostileRun(dir, INPUTS, 'buffered', 'embedded');
    },
    NO_WHOLE_RUN_LIMIT,
  );

  it(
    `the first ${PG_INPUTS} of the same inputs on PostgreSQL: the same answers, store = model`,
    async () => {
      await hostileRun(freshPgUrl('hostile'), PG_INPUTS, 'sync', 'postgres');
    },
    NO_WHOLE_RUN_LIMIT,
  );
});
