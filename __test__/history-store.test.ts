// History is a property of the store (issue 20): written once into the store, read by every
// opener and every handler, whatever options they were built with; what each `history` option
// does on a store with and without history.
import { afterEach, describe, expect, it } from 'vitest';

import { InvalidOptionError, Rabosh, RaboshMemoryToolHandler } from '../index.js';
import { makeTempDir, removeDir } from './tmp-dir.js';

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach(removeDir));

function tmp(): string {
  const dir = makeTempDir('rabosh-history-store');
  dirs.push(dir);
  return dir;
}

const create = (h: RaboshMemoryToolHandler, path: string) => h.execute({ command: 'create', path, file_text: path });
const operations = async (h: RaboshMemoryToolHandler) => (await h.versions()).data.map((v) => v.operation).reverse();

describe("history is the store's", () => {
  it('once on, every later opener records, and history: false is refused', async () => {
    const dir = tmp();
    const first = await Rabosh.open(dir, { history: { maxVersionsPerMemory: 5 } });
    await create(new RaboshMemoryToolHandler(first), '/memories/a.md');
    await first.close();

    const plain = await Rabosh.open(dir); // no option: the store's setting
    const h = new RaboshMemoryToolHandler(plain);
    await create(h, '/memories/b.md');
    expect(await operations(h)).toEqual(['created', 'created']);
    expect(plain.stats().history).toEqual({ versions: 2, bytes: 28, since: expect.any(Date) });
    await expect(Rabosh.open(dir, { history: false })).rejects.toThrow(InvalidOptionError);
    await expect(Rabosh.open(dir, { history: false })).rejects.toThrow(/stays on for every opener/);
    await plain.close();
  });

  it('turning it on is recorded in the store: handlers of an earlier open record from then on', async () => {
    const dir = tmp();
    const before = await Rabosh.open(dir);
    const h = new RaboshMemoryToolHandler(before);
    await create(h, '/memories/early.md');
    expect(await operations(h)).toEqual([]);
    const on = await Rabosh.open(dir, { history: true });
    await create(h, '/memories/late.md'); // the handler of the open without history
    expect(await operations(h)).toEqual(['created']);
    expect((await h.versions()).data[0]?.path).toBe('/memories/late.md');
    await on.close();
    await before.close();
  });

  it('at() says what history did not record instead of inventing it', async () => {
    const dir = tmp();
    const before = await Rabosh.open(dir);
    const h = new RaboshMemoryToolHandler(before);
    await create(h, '/memories/old.md');
    const on = await Rabosh.open(dir, { history: true });
    const mid = new Date(); // after history was turned on, before the edit
    await new Promise((r) => setTimeout(r, 5));
    await h.execute({ command: 'str_replace', path: '/memories/old.md', old_str: '/memories/old.md', new_str: 'new' });
    const past = await h.at(mid);
    // Then the memory held content written before history: no version has it, the live one
    // has changed since. Not recorded, said so; never the edit's content, never absent.
    expect((await past.execute({ command: 'view', path: '/memories/old.md' })).text).toMatch(/did not record/);
    const listing = await past.execute({ command: 'view', path: '/memories' });
    expect(listing).toMatchObject({ isError: true });
    expect(listing.text).toMatch(/^Error: history did not record \/memories as of /);
    const now = await h.at(new Date(Date.now() + 1000));
    expect(await now.view({ path: '/memories/old.md' })).toContain('new');
    await on.close();
    await before.close();
  });
});
