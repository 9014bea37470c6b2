// Whole-scope export and one-commit import through the handler (host API, not model commands).
import { afterEach, beforeEach, expect, it } from 'vitest';
import { InvalidArgumentError, Rabosh, RaboshMemoryToolHandler } from '../index.js';
import { makeTempDir, removeDir } from './tmp-dir.js';

let dir: string;
let db: Rabosh;
beforeEach(async () => {
  dir = makeTempDir('rabosh-bulk');
  db = await Rabosh.open(dir);
});
afterEach(async () => {
  await db.close();
  removeDir(dir);
});

it('imports in one commit, normalising paths, and exports hidden memories too', async () => {
  const h = new RaboshMemoryToolHandler(db);
  const before = db.stats().commits;
  const r = await h.importMemories([
    { path: '/memories//a.md', content: 'alpha\r\n' },
    { path: '/memories/.hidden/x', content: '' },
    { path: '/memories/node_modules/é', content: 'é' },
  ]);
  expect(r).toEqual({ memories: 3, bytes: 7 + 0 + 2 });
  expect(db.stats().commits - before).toBe(1);
  const out = await h.exportMemories();
  expect(out.map((m) => [m.path, m.content])).toEqual([
    ['/memories/.hidden/x', ''],
    ['/memories/a.md', 'alpha\r\n'],
    ['/memories/node_modules/é', 'é'],
  ]);
  expect(out.every((m) => m.createdAt instanceof Date && m.updatedAt.getTime() > 0)).toBe(true);
});

it('refuses a whole import naming the offending path, writing nothing', async () => {
  const h = new RaboshMemoryToolHandler(db, { maxMemoryBytes: 4 });
  await h.create({ command: 'create', path: '/memories/b.md', file_text: 'old' });
  const before = db.stats().commits;
  const cases: Array<[Array<{ path: string; content: string }>, RegExp]> = [
    [
      [
        { path: '/memories/a', content: 'x' },
        { path: '/memories/b.md', content: 'x' },
      ],
      /\/memories\/b\.md already exists/,
    ],
    [
      [
        { path: '/memories/a', content: '1' },
        { path: '/memories/./a', content: '2' },
      ],
      /\/memories\/a appears more than once/,
    ],
    [[{ path: '/memories/big', content: '12345' }], /\/memories\/big exceeds the maximum memory size of 4 bytes/],
    [[{ path: '../etc/passwd', content: 'x' }], /"\.\.\/etc\/passwd" is not a memory path/],
    [[{ path: '/memories', content: 'x' }], /\/memories already exists/],
  ];
  for (const [files, message] of cases) {
    const e = await h.importMemories(files).then(
      () => null,
      (err: unknown) => err,
    );
    expect(e).toBeInstanceOf(InvalidArgumentError);
    expect((e as Error).message).toMatch(message);
  }
  expect(db.stats().commits).toBe(before);
  expect(await h.view({ command: 'view', path: '/memories/a' })).toBe('The path /memories/a does not exist. Please provide a valid path.');
  const r = await h.importMemories([{ path: '/memories/b.md', content: 'new' }], { overwrite: true });
  expect(r).toEqual({ memories: 1, bytes: 3 });
});
