// Issue 19 item 2: an unknown or misspelt store option is refused with InvalidOptionError naming
// it, by Rabosh.open and RaboshMemoryToolHandler.open alike, before anything is written; the
// known ones still open.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { InvalidOptionError, Rabosh, RaboshMemoryToolHandler } from '../index.js';
import { STORE_OPTION_KEYS } from '../src/store.js';
import { makeTempDir, removeDir } from './tmp-dir.js';

let tmp: string;
beforeEach(() => {
  tmp = makeTempDir('rabosh-store-options');
});
afterEach(() => removeDir(tmp));

const HANDLER_KEYS = ['scope', 'maxMemoryBytes', 'viewMaxChars', 'createOverwrites', 'trackAccess', 'listingIndex', 'actor'];

async function refusal(open: Promise<unknown>): Promise<InvalidOptionError> {
  const err = await open.then(
    (opened) => {
      void (opened as { close(): Promise<void> }).close();
      return undefined;
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(InvalidOptionError);
  return err as InvalidOptionError;
}

describe('unknown store options', () => {
  it('the issue’s three: encryption.kee, durabilty, exclusiv — refused naming the key, nothing written', async () => {
    const cases: [string, Record<string, unknown>][] = [
      // `encryption` is an option now (issue 21); a misspelt key inside it is refused the same way.
      ['encryption.kee', { encryption: { kee: 'k'.repeat(32) } }],
      ['durabilty', { durabilty: 'sync' }],
      ['exclusiv', { exclusiv: true }],
    ];
    for (const [key, options] of cases) {
      const dir = join(tmp, key);
      for (const open of [Rabosh.open(dir, options as never), RaboshMemoryToolHandler.open(dir, options as never)]) {
        const err = await refusal(open);
        expect(err.message).toMatch(new RegExp(`^invalid option ${key}: .*unknown option`));
        // The key's value may be a secret: it is shown as a value only, never as a key's name.
        expect(err.code).toBe('RABOSH_INVALID_OPTION');
      }
    }
    expect(readdirSync(tmp)).toEqual([]);
  });

  it('a non-object options argument is refused', async () => {
    await refusal(Rabosh.open(join(tmp, 's'), 'sync' as never));
  });

  it('fast-check: any misspelling of a store option is refused by name; the real keys open', async () => {
    const known = new Set<string>([...STORE_OPTION_KEYS, ...HANDLER_KEYS]);
    const misspelt = fc
      .tuple(fc.constantFrom(...STORE_OPTION_KEYS), fc.nat(), fc.string({ minLength: 1, maxLength: 2 }), fc.boolean())
      .map(([key, at, extra, drop]) => {
        const i = at % (key.length + 1);
        return drop ? key.slice(0, i) + key.slice(i + 1) + extra : key.slice(0, i) + extra + key.slice(i);
      })
      .filter((k) => !known.has(k) && k !== '__proto__');
    let n = 0;
    await fc.assert(
      fc.asyncProperty(misspelt, fc.constantFrom<unknown>(true, 'sync', 1, { key: 'x' }), async (key, value) => {
        const dir = join(tmp, `s${n++}`);
        const options = { [key]: value };
        for (const open of [Rabosh.open(dir, options as never), RaboshMemoryToolHandler.open(dir, options as never)]) {
          const err = await refusal(open);
          expect(err.message.startsWith(`invalid option ${key}: `)).toBe(true);
        }
      }),
      { numRuns: 60 },
    );
    expect(readdirSync(tmp)).toEqual([]);
    const db = await Rabosh.open(join(tmp, 'ok'), { durability: 'sync', create: true, exclusive: false, history: false });
    await db.close();
  });
});
