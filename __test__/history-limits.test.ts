// Actor limits at the facade (issue 19 item 3): an actor the version record could not hold is
// refused when the handler is built, with the numbers the Rust crate defines (exported through the
// binding), and every accepted actor is recorded whole — no accepted option makes writes fail.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { InvalidOptionError, Rabosh, RaboshMemoryToolHandler } from '../index.js';
import { MAX_ACTOR_ID_BYTES, MAX_ACTOR_TYPE_BYTES } from '../src/native.js';
import { makeTempDir, removeDir } from './tmp-dir.js';

let dir: string;
let db: Rabosh;
beforeAll(async () => {
  dir = makeTempDir('rabosh-actor');
  db = await Rabosh.open(dir, { history: true });
});
afterAll(async () => {
  await db.close();
  removeDir(dir);
});

/** A string of exactly `n` UTF-8 bytes, mixing two-byte characters in. */
function sized(n: number): string {
  return 'é'.repeat(Math.floor(n / 2)) + (n % 2 === 1 ? 'x' : '');
}

describe('actor limits', () => {
  it("are the Rust crate's numbers", () => {
    expect([MAX_ACTOR_TYPE_BYTES, MAX_ACTOR_ID_BYTES]).toEqual([255, 1024]);
  });

  it("refuse the issue's actor (an id of 65,535 bytes) at construction", () => {
    expect(() => new RaboshMemoryToolHandler(db, { actor: { type: 't', id: 'i'.repeat(65_535) } })).toThrow(InvalidOptionError);
  });

  it('accept exactly the actors every write can record', async () => {
    const near = (limit: number) => fc.integer({ min: limit - 2, max: limit + 2 });
    let n = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.integer({ min: 0, max: 3 }), near(MAX_ACTOR_TYPE_BYTES)),
        fc.oneof(fc.integer({ min: 0, max: 3 }), near(MAX_ACTOR_ID_BYTES), fc.integer({ min: 60_000, max: 70_000 })),
        async (typeBytes, idBytes) => {
          const actor = { type: sized(typeBytes), id: sized(idBytes) };
          const legal = typeBytes >= 1 && typeBytes <= MAX_ACTOR_TYPE_BYTES && idBytes <= MAX_ACTOR_ID_BYTES;
          let h: RaboshMemoryToolHandler;
          try {
            h = new RaboshMemoryToolHandler(db, { actor });
          } catch (e) {
            expect(e).toBeInstanceOf(InvalidOptionError);
            expect(legal).toBe(false);
            return;
          }
          expect(legal).toBe(true);
          const path = `/memories/${n++}/${Array(4).fill('p'.repeat(200)).join('/')}`;
          expect((await h.execute({ command: 'create', path, file_text: 'x' })).isError).toBeFalsy();
          expect((await h.execute({ command: 'delete', path })).isError).toBeFalsy();
          const page = await h.versions({ pathPrefix: path });
          expect(page.data.map((v) => v.actor)).toEqual([actor, actor]);
        },
      ),
      { numRuns: 40 },
    );
  });
});
