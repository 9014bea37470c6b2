// The listing index is an optimisation only: the same answers with it on or off, over random stores
// and random mutations, and zero values read by a directory view either way (sizes are metadata).
// An index turned on for a store written without one answers the same (built, not migrated).
// Knobs: RABOSH_FC_SEED, RABOSH_FC_RUNS (default 100 → 50 stores here).
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Rabosh, RaboshMemoryToolHandler } from '../index.js';
import { makeTempDir, removeDir } from './tmp-dir.js';

const RUNS = Math.max(5, Math.floor(Number(process.env.RABOSH_FC_RUNS ?? 100) / 2));
const SEED = process.env.RABOSH_FC_SEED === undefined ? undefined : Number(process.env.RABOSH_FC_SEED);

const name = fc.constantFrom('a', 'b', 'a.b', 'sub', '.h', 'node_modules', '\u{1F600}', '\uFF5E', 'Z');
const path = fc.array(name, { minLength: 1, maxLength: 5 }).map((s) => `/memories/${s.join('/')}`);
const content = fc.oneof(fc.string({ maxLength: 20 }), fc.constantFrom('x'.repeat(1280), 'y'.repeat(4096)));

type Op =
  | { kind: 'create'; path: string; text: string; viaIndexed: boolean }
  | { kind: 'delete'; path: string; viaIndexed: boolean }
  | { kind: 'rename'; from: string; to: string; viaIndexed: boolean }
  | { kind: 'edit'; path: string; viaIndexed: boolean };
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('create' as const), path, text: content, viaIndexed: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('delete' as const), path, viaIndexed: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('rename' as const), from: path, to: path, viaIndexed: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('edit' as const), path, viaIndexed: fc.boolean() }) },
);

function input(o: Op): unknown {
  switch (o.kind) {
    case 'create':
      return { command: 'create', path: o.path, file_text: o.text };
    case 'delete':
      return { command: 'delete', path: o.path };
    case 'rename':
      return { command: 'rename', old_path: o.from, new_path: o.to };
    case 'edit':
      return { command: 'insert', path: o.path, insert_line: 0, insert_text: 'more' };
  }
}

/** Every directory any of these paths implies, plus the root and a few that may not exist. */
function directories(paths: Iterable<string>): string[] {
  const dirs = new Set<string>(['/memories', '/memories/a', '/memories/nope', '/memories/.h', '/memories/node_modules']);
  for (const p of paths) {
    const segs = p.split('/');
    for (let i = 3; i <= segs.length; i++) dirs.add(segs.slice(0, i).join('/'));
  }
  return [...dirs].sort();
}

/** A view, asserting that it read no value unless it was a file view (which must read one). */
async function viewReadsNoValues(db: Rabosh, h: RaboshMemoryToolHandler, dir: string) {
  const before = db.stats().valuesRead;
  const out = await h.execute({ command: 'view', path: dir });
  const read = db.stats().valuesRead - before;
  if (out.text.startsWith("Here's the content of")) expect(read).toBeGreaterThan(0);
  else expect(read, `values read by a view of ${dir}`).toBe(0);
  return out;
}

describe('listing index', () => {
  it('gives the same answers on and off, reading zero values, under random mutations', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 40, size: 'max' }), async (ops) => {
        const dir = makeTempDir('rabosh-index');
        const db = await Rabosh.open(dir, { durability: 'buffered' });
        try {
          const indexed = new RaboshMemoryToolHandler(db, { listingIndex: true });
          const plain = new RaboshMemoryToolHandler(db, { listingIndex: false });
          const touched = new Set<string>();
          for (const o of ops) {
            // Mutations go through either handler: the index must follow every commit to the store.
            const via = o.viaIndexed ? indexed : plain;
            const other = o.viaIndexed ? plain : indexed;
            const done = await via.execute(input(o));
            if (!done.isError)
              for (const p of [o.kind === 'rename' ? o.to : o.path, o.kind === 'rename' ? o.from : '']) if (p) touched.add(p);
            const probe = o.kind === 'rename' ? o.to : o.path;
            const parent = probe.slice(0, probe.lastIndexOf('/'));
            for (const d of [parent, '/memories']) {
              expect(await viewReadsNoValues(db, other, d)).toEqual(await viewReadsNoValues(db, via, d));
            }
          }
          for (const d of directories(touched)) {
            expect(await viewReadsNoValues(db, indexed, d), d).toEqual(await viewReadsNoValues(db, plain, d));
          }
        } finally {
          await db.close();
          removeDir(dir);
        }
      }),
      { numRuns: RUNS, seed: SEED },
    );
  });

  it('turned on for an existing store, answers the same and reads no values', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 40, size: 'max' }), async (ops) => {
        const dir = makeTempDir('rabosh-index-late');
        try {
          const paths = new Set<string>();
          {
            await using h = await RaboshMemoryToolHandler.open(dir, { durability: 'buffered' });
            for (const o of ops) {
              await h.execute(input(o));
              paths.add(o.kind === 'rename' ? o.to : o.path);
            }
          }
          const answers = new Map<string, unknown>();
          {
            await using db = await Rabosh.open(dir);
            const plain = new RaboshMemoryToolHandler(db);
            for (const d of directories(paths)) answers.set(d, await plain.execute({ command: 'view', path: d }));
          }
          await using db = await Rabosh.open(dir);
          const before = db.stats().valuesRead;
          const indexed = new RaboshMemoryToolHandler(db, { listingIndex: true });
          for (const d of directories(paths)) {
            const want = answers.get(d) as { text: string };
            const got = await indexed.execute({ command: 'view', path: d });
            expect(got, d).toEqual(want);
          }
          const fileViews = [...answers.values()].filter((a) => (a as { text: string }).text.startsWith("Here's the content of")).length;
          expect(db.stats().valuesRead - before).toBe(fileViews);
        } finally {
          removeDir(dir);
        }
      }),
      { numRuns: Math.max(5, Math.floor(RUNS / 2)), seed: SEED },
    );
  });

  it('a directory view reads zero values on a large store, index on or off', async () => {
    const dir = makeTempDir('rabosh-index-big');
    try {
      await using db = await Rabosh.open(dir, { durability: 'buffered' });
      const plain = new RaboshMemoryToolHandler(db);
      for (let i = 0; i < 500; i++) {
        await plain.execute({ command: 'create', path: `/memories/p${i % 7}/q${i % 13}/r${i}/m.md`, file_text: `v${i}` });
      }
      const indexed = new RaboshMemoryToolHandler(db, { listingIndex: true });
      for (const d of ['/memories', '/memories/p3', '/memories/p3/q5', '/memories/p3/q5/r213']) {
        const before = db.stats().valuesRead;
        const a = await plain.execute({ command: 'view', path: d });
        const b = await indexed.execute({ command: 'view', path: d });
        expect(a.isError).toBe(false);
        expect(b).toEqual(a);
        expect(db.stats().valuesRead - before).toBe(0);
      }
    } finally {
      removeDir(dir);
    }
  });
});
