// Host edits take `ifMatch` from the host's own code, which may hand over anything: a number, an
// object, an array. Each must be refused with the typed InvalidArgumentError (not the binding's
// bare `StringExpected`), before anything is written, by put and by remove alike (issue 19.9).
// Knobs: RABOSH_FC_SEED, RABOSH_FC_RUNS (default 100).
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { InvalidArgumentError, RaboshMemoryToolHandler } from '../index.js';
import { makeTempDir, removeDir } from './tmp-dir.js';

const RUNS = Number(process.env.RABOSH_FC_RUNS ?? 100);
const SEED = process.env.RABOSH_FC_SEED === undefined ? {} : { seed: Number(process.env.RABOSH_FC_SEED) };

let dir: string;
let h: RaboshMemoryToolHandler;
beforeAll(async () => {
  dir = makeTempDir('rabosh-host-args');
  h = await RaboshMemoryToolHandler.open(dir, { history: true });
  await h.put('/memories/kept.md', 'original');
});
afterAll(async () => {
  await h.close();
  removeDir(dir);
});

/** Everything a JavaScript caller can pass that is not a string (undefined means "no precondition"). */
const notAString = fc.oneof(
  fc.double(),
  fc.integer(),
  fc.bigInt(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.string(), { maxLength: 3 }),
  fc.object({ maxDepth: 1 }),
  fc.constant(Symbol('s')),
  fc.constant(() => 'sha'),
  fc.constant(new Date(0)),
);

async function refusal(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => 'resolved',
    (e: unknown) => e,
  );
}

describe('a non-string ifMatch', () => {
  it('put and remove refuse it with InvalidArgumentError and change nothing', async () => {
    const before = await h.get('/memories/kept.md');
    await fc.assert(
      fc.asyncProperty(notAString, async (ifMatch) => {
        for (const attempt of [
          () => h.put('/memories/kept.md', 'overwritten', { ifMatch } as never),
          () => h.put('/memories/new.md', 'created', { ifMatch } as never),
          () => h.remove('/memories/kept.md', { ifMatch } as never),
        ]) {
          const e = await refusal(attempt());
          expect(e).toBeInstanceOf(InvalidArgumentError);
          expect((e as InvalidArgumentError).code).toBe('RABOSH_INVALID_ARGUMENT');
          expect((e as Error).message).toMatch(/^ifMatch must be a content hash string/);
        }
      }),
      { numRuns: RUNS, ...SEED },
    );
    expect(await h.get('/memories/kept.md')).toEqual(before);
    expect(await h.get('/memories/new.md')).toBeNull();
  });

  it('options that are not an object are refused the same way', async () => {
    for (const options of [null, 42, 'sha', true]) {
      await expect(h.put('/memories/kept.md', 'x', options as never)).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(h.remove('/memories/kept.md', options as never)).rejects.toBeInstanceOf(InvalidArgumentError);
    }
    expect((await h.get('/memories/kept.md'))?.content).toBe('original');
  });

  it('a string ifMatch still works: the right hash writes, a stale one is a precondition failure', async () => {
    const cur = (await h.get('/memories/kept.md'))!;
    await expect(h.put('/memories/kept.md', 'changed', { ifMatch: 'f'.repeat(64) })).rejects.toMatchObject({
      code: 'RABOSH_PRECONDITION_FAILED',
    });
    expect(await h.put('/memories/kept.md', 'original', { ifMatch: cur.contentSha256 })).toMatchObject({ written: false });
  });
});
