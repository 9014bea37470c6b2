// A snapshot gives reads: handler.viewAt(snapshot, command) answers what view answered when the
// snapshot was taken, with the same strings, while the store moves on.
import { afterEach, beforeEach, expect, it } from 'vitest';
import { InvalidArgumentError, Rabosh, RaboshMemoryToolHandler } from '../index.js';
import { makeTempDir, removeDir } from './tmp-dir.js';

let dirs: string[];
let db: Rabosh;
let handler: RaboshMemoryToolHandler;

beforeEach(async () => {
  dirs = [makeTempDir('rabosh-snapview')];
  db = await Rabosh.open(dirs[0]!);
  handler = new RaboshMemoryToolHandler(db);
});
afterEach(async () => {
  await db.close();
  dirs.forEach(removeDir);
});

const FILE = (p: string) => `Here's the content of ${p} with line numbers:`;
const DIR = (p: string) => `Here're the files and directories up to 2 levels deep in ${p}, excluding hidden items and node_modules:`;

it('a snapshot view shows the old text after the memory changed, and the new view the new', async () => {
  await handler.execute({ command: 'create', path: '/memories/a.md', file_text: 'old\nline two' });
  const snap = db.snapshot();
  await handler.execute({ command: 'str_replace', path: '/memories/a.md', old_str: 'old', new_str: 'new text' });
  await handler.execute({ command: 'create', path: '/memories/b.md', file_text: 'later' });

  expect(await handler.viewAt(snap, { command: 'view', path: '/memories/a.md' })).toEqual({
    text: `${FILE('/memories/a.md')}\n     1\told\n     2\tline two`,
    isError: false,
  });
  expect(await handler.viewAt(snap, { path: '/memories/a.md', view_range: [2, -1] })).toEqual({
    text: `${FILE('/memories/a.md')}\n     2\tline two`,
    isError: false,
  });
  expect(await handler.viewAt(snap, { path: '/memories' })).toEqual({
    text: `${DIR('/memories')}\n12B\t/memories\n12B\t/memories/a.md`,
    isError: false,
  });
  expect(await handler.viewAt(snap, { path: '/memories/b.md' })).toEqual({
    text: 'The path /memories/b.md does not exist. Please provide a valid path.',
    isError: true,
  });
  expect((await handler.execute({ command: 'view', path: '/memories/a.md' })).text).toBe(
    `${FILE('/memories/a.md')}\n     1\tnew text\n     2\tline two`,
  );
  snap.release();
});

it('a released snapshot, or one of another store, is refused', async () => {
  const snap = db.snapshot();
  snap.release();
  await expect(handler.viewAt(snap, { path: '/memories' })).rejects.toBeInstanceOf(InvalidArgumentError);

  dirs.push(makeTempDir('rabosh-snapview-other'));
  const other = await Rabosh.open(dirs[1]!);
  try {
    const foreign = other.snapshot();
    await expect(handler.viewAt(foreign, { path: '/memories' })).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(handler.viewAt({ seq: 0 } as never, { path: '/memories' })).rejects.toBeInstanceOf(InvalidArgumentError);
    foreign.release();
  } finally {
    await other.close();
  }
});
