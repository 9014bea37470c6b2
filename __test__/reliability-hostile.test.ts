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

const INPUTS = Number(process.env['RABOSH_HOSTILE_INPUTS'] ?? 100_000);
const PG_INPUTS = Math.min(INPUTS, Number(process.env['RABOSH_HOSTILE_PG_INPUTS'] ?? INPUTS));
const SEED = Number(process.env['RABOSH_HOSTILE_SEED'] ?? (Date.now() ^ (process.pid << 8)) >>> 0);
const BATCH = 1_000;
const CALL_MS = 30_000;

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach(removeDir));

// ---- the generators --------------------------------------------------------------------------

const commands = ['view', 'create', 'str_replace', 'insert', 'delete', 'rename'] as const;
const command = fc.constantFrom(...commands);

const lone = fc.constantFrom('\uD800', '\uDBFF', '\uDC00', '\uDFFF', '\uD83D');
const nasty = fc.constantFrom('\u0000', '\t', '\n', '\r', '\r\n', '\u007f', '\\', '/', '.', '%', '$&', '$1', '$`', "$'", '`', '\uFFFD', '😀');
const anyUnit = fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c));
const weird = fc.string({ unit: fc.oneof(anyUnit, lone, nasty, fc.constantFrom('a', 'b', 'n', '=')), maxLength: 24 });

const segment = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('..', '.', '', 'a', 'b.md', 'd', 'x', 'e') },
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      '%2e%2e', '%2E%2e', '%2e%2E', '%2E%2E', '%2e', '%2E', '..%2f', '%2f..', '%252e%252e', 'C:', 'c:',
      'node_modules', '.hidden', '__proto__', 'constructor', 'prototype', 'toString', ' ', '...',
      '\u0000', '\t', '\u007f', '😀', '\uD83D', '\uDE00', 'é', '\u2028', '\uFEFF',
    ),
  },
  { weight: 1, arbitrary: fc.constantFrom('x'.repeat(255), 'x'.repeat(256), 'é'.repeat(127), 'é'.repeat(128)) },
  { weight: 2, arbitrary: weird },
);
const prefix = fc.constantFrom(
  '/memories', '/memories', '/memories/', '/memories//', 'C:/memories', 'c:\\memories', '\\\\server\\share\\memories',
  '\\memories', 'memories', '', '/memoriesish', '/MEMORIES', '/memories.md', '/%2e%2e/memories', 'file:///memories',
  ' /memories', '/memories/../memories', '/memories/..', '//memories', '/./memories',
);
const separator = fc.constantFrom('/', '/', '/', '//', '\\', '/./', '/../');
const hostilePath = fc
  .tuple(prefix, fc.array(fc.tuple(separator, segment), { maxLength: 8 }))
  .map(([p, segs]) => p + segs.map(([s, g]) => s + g).join(''));
const deepPath = fc
  .tuple(fc.integer({ min: 1, max: 5_000 }), fc.constantFrom('a/', '../', './', 'a/../', 'é/', '%2e/', '/', 'ab/'))
  .map(([n, piece]) => `/memories/${piece.repeat(n)}leaf`);
const validPath = fc.constantFrom(
  '/memories', '/memories/', '/memories/a', '/memories/b.md', '/memories/d', '/memories/d/x', '/memories/d/y.md',
  '/memories/d/e', '/memories/d/e/z', '/memories/.h/q', '/memories/node_modules/m', '/memories//a', '/memories/./d/x',
  '/memories/d/../b.md', '/memories/C:/w', '/memories/😀', '/memories/d/e/f/g/deep',
);
const path = fc.oneof({ weight: 5, arbitrary: validPath }, { weight: 4, arbitrary: hostilePath }, { weight: 1, arbitrary: deepPath });

// Megabyte strings, kept rare: each costs real time. One is over 999,999 lines but under 1 MiB.
const hugeText = fc
  .tuple(fc.constantFrom(1_048_576, 1_048_577, 600_000, 3_000_000, 1_000_001), fc.constantFrom('x', '\n', 'é', '\u0000', '\uD800', 'n=0\n'))
  .map(([n, c]) => c.repeat(Math.ceil(n / c.length)));
const smallText = fc.constantFrom('', 'n=0', 'n=1', 'a\nb\n', 'line\n', '$&$1$`', 'x', 'a a', 'aaa', '\r\nz\r\n', 'é😀');
const text = fc.oneof({ weight: 6, arbitrary: smallText }, { weight: 4, arbitrary: weird }, { weight: 1, arbitrary: hostilePath });

const number = fc.oneof(
  fc.integer({ min: -5, max: 12 }),
  fc.constantFrom(NaN, Infinity, -Infinity, -0, 1.5, -1.5, 2 ** 31, 2 ** 32, 2 ** 53, 2 ** 53 + 2, 2 ** 64, -(2 ** 63), 1e21, 1e308, -1e308),
  fc.constantFrom(Number.MAX_VALUE, Number.MIN_VALUE, Number.EPSILON, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER),
  fc.double(),
);

// Values that break naive code: no usable toString, a null prototype, pollution keys, boxed and
// callable look-alikes of a command, a symbol (a template literal would throw on it).
const specials = fc.constantFrom<unknown>(
  Object.create(null),
  { toString: 1 },
  { toString: null, valueOf: null },
  { toString: () => '/memories/a' },
  [[]],
  ['/memories/a'],
  [1, 2],
  JSON.parse('{"__proto__": {"polluted": 1}}'),
  { constructor: { prototype: { polluted: 1 } } },
  Symbol('view'),
  () => 'view',
  new String('view'),
  new Number(3),
  10n,
  new Date(NaN),
  /memories/,
);

const anything = fc.anything({ maxDepth: 2, withNullPrototype: true, withBigInt: true, withBoxedValues: true, withObjectString: true });
const hostileValue = fc.oneof(
  { weight: 2, arbitrary: anything },
  { weight: 2, arbitrary: number },
  { weight: 3, arbitrary: path },
  { weight: 2, arbitrary: text },
  { weight: 2, arbitrary: specials },
  { weight: 1, arbitrary: fc.constantFrom(undefined, null, true, false) },
);
const maybe = <T,>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined, freq: 5 });

const viewRange = fc.oneof(
  fc.tuple(fc.integer({ min: -4, max: 12 }), fc.integer({ min: -4, max: 12 })),
  fc.tuple(number, number),
  fc.array(hostileValue, { maxLength: 3 }),
  hostileValue,
);
const insertLine = fc.oneof(fc.integer({ min: -2, max: 6 }), number, hostileValue);
const oldStr = fc.oneof({ weight: 3, arbitrary: fc.constantFrom('n=0', 'n=', 'a', 'b', 'x', '\n', '', 'line', 'aa', '\uD800', '\uFFFD') }, { weight: 1, arbitrary: text });

// Well-formed commands on a small pool of paths, so the store actually changes and collides.
const valid = fc.oneof(
  fc.record({ command: fc.constant('view'), path: validPath, view_range: maybe(fc.tuple(fc.integer({ min: -3, max: 9 }), fc.integer({ min: -3, max: 9 }))) }),
  fc.record({ command: fc.constant('create'), path: validPath, file_text: smallText }),
  fc.record({ command: fc.constant('str_replace'), path: validPath, old_str: oldStr, new_str: smallText }),
  fc.record({ command: fc.constant('insert'), path: validPath, insert_line: fc.integer({ min: -1, max: 4 }), insert_text: smallText }),
  fc.record({ command: fc.constant('delete'), path: validPath }),
  fc.record({ command: fc.constant('rename'), old_path: validPath, new_path: validPath }),
);

// A known command with every field missing, mistyped or hostile.
const fieldHostile = fc.record(
  {
    command,
    path: fc.oneof(path, hostileValue),
    file_text: fc.oneof(text, hostileValue),
    old_str: fc.oneof(oldStr, hostileValue),
    new_str: fc.oneof(text, hostileValue),
    insert_line: insertLine,
    insert_text: fc.oneof(text, hostileValue),
    view_range: viewRange,
    old_path: fc.oneof(path, hostileValue),
    new_path: fc.oneof(path, hostileValue),
  },
  { requiredKeys: ['command'] },
);

const hostileCommand = fc.oneof(
  fc.constantFrom<unknown>(
    'View', ' view', 'view\u0000', 'str-replace', 'strReplace', '__proto__', 'constructor', 'toString',
    'hasOwnProperty', 'valueOf', '', 'undefined', 'delete ', 'RENAME',
  ),
  hostileValue,
);

// The whole input is wrong: not an object, an unknown command, own __proto__ keys, inherited fields.
const shapeHostile = fc.oneof(
  hostileValue,
  fc.record({ command: hostileCommand, path: fc.oneof(path, hostileValue) }),
  fc.tuple(command, path, text).map(([c, p, t]) =>
    JSON.parse(
      `{"command":${JSON.stringify(c)},"__proto__":{"path":"/memories/polluted","file_text":"p"},"path":${JSON.stringify(p)},"file_text":${JSON.stringify(t)},"old_path":${JSON.stringify(p)},"new_path":"/memories/n"}`,
    ),
  ),
  fc.tuple(command, validPath).map(([c, p]) =>
    Object.create({ command: c, path: p, old_path: p, new_path: '/memories/inherited', file_text: 'inherited', old_str: 'n', new_str: 'm', insert_line: 0, insert_text: 'i' }),
  ),
  fc.array(fc.oneof(command, hostileValue), { maxLength: 3 }),
);

const input = fc.oneof(
  { weight: 30, arbitrary: valid },
  { weight: 45, arbitrary: fieldHostile },
  { weight: 24, arbitrary: shapeHostile },
  { weight: 1, arbitrary: fc.record({ command, path: validPath, file_text: hugeText, old_str: fc.constantFrom('x', 'n=0'), new_str: hugeText, insert_line: fc.constantFrom(0, 1), insert_text: hugeText }) },
);

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
  expect(root.text, `${where}: root listing`).toBe(expect1({ command: 'view', path: ROOT }, model, { maxMemoryBytes: 1, viewMaxChars: 1 }).text);
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
    const summary = [...tally].sort().map(([k, c]) => `${k}=${c}`).join(' ');
    console.log(`hostile (${label}): seed ${SEED}, ${n} inputs; ${summary}; model holds ${model.size} memories`);
    expect(n).toBe(INPUTS);
  }
}

describe('hostile tool input', () => {
  it(`${INPUTS} generated inputs: exactly the contract answer each, no throw, no hang, store = model`, async () => {
    const dir = makeTempDir('rabosh-hostile');
    dirs.push(dir);
    // Buffered: this test is about answers, not durability; the reopen syncs first.
    await hostileRun(dir, INPUTS, 'buffered', 'embedded');
  });

  it(`the first ${PG_INPUTS} of the same inputs on PostgreSQL: the same answers, store = model`, async () => {
    await hostileRun(freshPgUrl('hostile'), PG_INPUTS, 'sync', 'postgres');
  });
});
