// Contract §4 and §7: every answer string, byte for byte, with its isError flag. Each expected
// string is written out literally from the contract; nothing here calls the facade's own string or
// path code to compute an expectation.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Rabosh, RaboshMemoryToolHandler } from '../index.js';
import { freshPgUrl } from './pg-url.js';
import { makeTempDir, removeDir } from './tmp-dir.js';

type Options = ConstructorParameters<typeof RaboshMemoryToolHandler>[1];

/** A store directory, or a PostgreSQL URL. */
let target: string;
let db: Rabosh;
let handler: RaboshMemoryToolHandler;

/**
 * Every string is checked over both backends: a fresh store directory, and a fresh schema of the
 * PostgreSQL server that scripts/with-postgres.mjs starts (`npm test` runs vitest through it).
 * Without RABOSH_PG_URL the PostgreSQL runs fail, saying how to run them; they never skip.
 */
const BACKENDS = [
  { backend: 'embedded', fresh: () => makeTempDir('rabosh-strings'), cleanup: (t: string) => removeDir(t) },
  { backend: 'PostgreSQL', fresh: () => freshPgUrl('strings'), cleanup: () => {} },
];

/** A handler with other options over the same store (and the same memories). */
function reopen(options: Options = {}) {
  handler = new RaboshMemoryToolHandler(db, options);
}

const run = (input: unknown) => handler.execute(input);
async function ok(input: unknown, text: string) {
  expect(await run(input)).toEqual({ text, isError: false });
}
async function fails(input: unknown, text: string) {
  expect(await run(input)).toEqual({ text, isError: true });
}
async function create(path: string, file_text: string) {
  await ok({ command: 'create', path, file_text }, `File created successfully at: ${path}`);
}
const view = (path: string, view_range?: unknown) =>
  view_range === undefined ? { command: 'view', path } : { command: 'view', path, view_range };

const DIR_HEADER = (p: string) => `Here're the files and directories up to 2 levels deep in ${p}, excluding hidden items and node_modules:`;
const FILE_HEADER = (p: string) => `Here's the content of ${p} with line numbers:`;

describe.each(BACKENDS)('over the $backend store', ({ fresh, cleanup }) => {
  beforeEach(async () => {
    target = fresh();
    db = await Rabosh.open(target);
    handler = new RaboshMemoryToolHandler(db);
  });
  afterEach(async () => {
    await db?.close();
    cleanup(target);
  });

  describe('view', () => {
    it('a rejected path echoes the raw path, with no Error: prefix', async () => {
      await fails(view('/memories/../etc'), 'The path /memories/../etc does not exist. Please provide a valid path.');
    });

    it('a missing path echoes the empty string (two spaces)', async () => {
      await fails({ command: 'view' }, 'The path  does not exist. Please provide a valid path.');
    });

    it('a non-string path is treated as the empty string', async () => {
      await fails({ command: 'view', path: 5 }, 'The path  does not exist. Please provide a valid path.');
    });

    it('an accepted path with nothing there echoes the normalised path', async () => {
      await fails(view('/memories//nope/./'), 'The path /memories/nope does not exist. Please provide a valid path.');
    });

    it('the empty root lists', async () => {
      await ok(view('/memories'), `${DIR_HEADER('/memories')}\n0B\t/memories`);
    });

    it('the root spelled /memories/ lists as /memories', async () => {
      await ok(view('/memories/'), `${DIR_HEADER('/memories')}\n0B\t/memories`);
    });

    it('a file view numbers lines in 6 columns and keeps a trailing empty line', async () => {
      await create('/memories/a.md', 'hello\nworld\n');
      await ok(view('/memories/a.md'), `${FILE_HEADER('/memories/a.md')}\n     1\thello\n     2\tworld\n     3\t`);
    });

    it('a file view echoes the normalised path', async () => {
      await create('/memories/a.md', 'x');
      await ok(view('/memories/./a.md'), `${FILE_HEADER('/memories/a.md')}\n     1\tx`);
    });

    it('an empty memory shows one empty line', async () => {
      await create('/memories/e.md', '');
      await ok(view('/memories/e.md'), `${FILE_HEADER('/memories/e.md')}\n     1\t`);
    });

    it('CRLF content is split on \\n only; the \\r stays part of the line', async () => {
      await create('/memories/crlf.md', 'a\r\nb');
      await ok(view('/memories/crlf.md'), `${FILE_HEADER('/memories/crlf.md')}\n     1\ta\r\n     2\tb`);
    });

    it('a memory that is itself hidden can be viewed directly', async () => {
      await create('/memories/.h.md', 'secret');
      await ok(view('/memories/.h.md'), `${FILE_HEADER('/memories/.h.md')}\n     1\tsecret`);
    });

    it('a 6-digit line number fills the 6 columns', async () => {
      await create('/memories/n.md', `${'\n'.repeat(123455)}last`);
      await ok(view('/memories/n.md', [123456, -1]), `${FILE_HEADER('/memories/n.md')}\n123456\tlast`);
    });
  });

  describe('view_range', () => {
    const FILE = 'l1\nl2\nl3\nl4\nl5';
    const lines = (...ns: number[]) => ns.map((n) => `\n     ${n}\tl${n}`).join('');
    const expectRange = async (range: unknown, shown: number[]) => {
      await create('/memories/r.md', FILE);
      await ok(view('/memories/r.md', range), `${FILE_HEADER('/memories/r.md')}${lines(...shown)}`);
    };

    it('[2, 4] shows lines 2 to 4', () => expectRange([2, 4], [2, 3, 4]));
    it('[0, 2] clamps the start to line 1', () => expectRange([0, 2], [1, 2]));
    it('[-5, 2] clamps the start to line 1', () => expectRange([-5, 2], [1, 2]));
    it('[4, -1] reads to the end', () => expectRange([4, -1], [4, 5]));
    it('[2, -2] counts a negative end from the end', () => expectRange([2, -2], [2, 3]));
    it('[1, 100] clamps the end to the file', () => expectRange([1, 100], [1, 2, 3, 4, 5]));
    it('[1, -10] selects nothing: header alone', () => expectRange([1, -10], []));
    it('[4, 2] selects nothing: header alone', () => expectRange([4, 2], []));
    it('[6, 10] starts past the end: header alone', () => expectRange([6, 10], []));
    it('[3, 0] ends at 0: header alone', () => expectRange([3, 0], []));
    it('[2.0, 3] is two integers', () => expectRange([2.0, 3], [2, 3]));
    it('[1] is ignored', () => expectRange([1], [1, 2, 3, 4, 5]));
    it('[1, 2, 3] is ignored', () => expectRange([1, 2, 3], [1, 2, 3, 4, 5]));
    it('["2", "3"] is ignored', () => expectRange(['2', '3'], [1, 2, 3, 4, 5]));
    it('[1.5, 3] is ignored', () => expectRange([1.5, 3], [1, 2, 3, 4, 5]));
    it('a string view_range is ignored', () => expectRange('2,3', [1, 2, 3, 4, 5]));
    it('a null view_range is ignored', () => expectRange(null, [1, 2, 3, 4, 5]));
    it('an object view_range is ignored', () => expectRange({ 0: 2, 1: 3, length: 2 }, [1, 2, 3, 4, 5]));
    it('huge integers clamp', () => expectRange([-1e15, 1e15], [1, 2, 3, 4, 5]));
  });

  describe('line limit and truncation', () => {
    it('more than 999,999 lines answers the line-limit string (a failure outcome)', async () => {
      await create('/memories/big.md', '\n'.repeat(999_999));
      await fails(view('/memories/big.md'), 'File /memories/big.md exceeds maximum line limit of 999,999 lines.');
    });

    it('exactly 999,999 lines renders, truncated at 16,000 chars by default', async () => {
      await create('/memories/big.md', '\n'.repeat(999_998));
      const r = await run(view('/memories/big.md'));
      expect(r.isError).toBe(false);
      // each line renders as 6 columns + tab = 7 chars; 2,000 lines + 1,999 newlines = 15,999 ≤ 16,000
      const body = Array.from({ length: 2000 }, (_, i) => `\n${String(i + 1).padStart(6, ' ')}\t`).join('');
      expect(r.text).toBe(
        `${FILE_HEADER('/memories/big.md')}${body}\n` +
          '[Truncated: showing lines 1 to 2000 of 999999. Use view_range [2001, -1] to read the rest.]',
      );
    });

    it('truncation stops before the line that would exceed viewMaxChars', async () => {
      await reopen({ viewMaxChars: 20 });
      await create('/memories/t.md', 'aaaa\nbbbb\ncccc');
      await ok(
        view('/memories/t.md'),
        `${FILE_HEADER('/memories/t.md')}\n     1\taaaa\n` +
          '[Truncated: showing lines 1 to 1 of 3. Use view_range [2, -1] to read the rest.]',
      );
    });

    it('lines that exactly fill the budget are shown (the \\n between lines counts)', async () => {
      await reopen({ viewMaxChars: 23 });
      await create('/memories/t.md', 'aaaa\nbbbb\ncccc');
      await ok(
        view('/memories/t.md'),
        `${FILE_HEADER('/memories/t.md')}\n     1\taaaa\n     2\tbbbb\n` +
          '[Truncated: showing lines 1 to 2 of 3. Use view_range [3, -1] to read the rest.]',
      );
    });

    it('at least one line is rendered even when it alone exceeds the budget', async () => {
      await reopen({ viewMaxChars: 5 });
      await create('/memories/t.md', 'aaaa\nbbbb');
      await ok(
        view('/memories/t.md'),
        `${FILE_HEADER('/memories/t.md')}\n     1\taaaa\n` +
          '[Truncated: showing lines 1 to 1 of 2. Use view_range [2, -1] to read the rest.]',
      );
    });

    it('truncation applies after view_range and reports the real line numbers', async () => {
      await reopen({ viewMaxChars: 20 });
      await create('/memories/t.md', 'aaaa\nbbbb\ncccc\ndddd');
      await ok(
        view('/memories/t.md', [2, 3]),
        `${FILE_HEADER('/memories/t.md')}\n     2\tbbbb\n` +
          '[Truncated: showing lines 2 to 2 of 4. Use view_range [3, -1] to read the rest.]',
      );
    });

    it('the budget is measured in UTF-16 code units: 21 cuts, 22 does not', async () => {
      // line 1 = 7 + 6 code units (3 astral chars) = 13; line 2 = 8; 13 + 1 + 8 = 22
      await reopen({ viewMaxChars: 21 });
      await create('/memories/u.md', '\u{1F600}\u{1F600}\u{1F600}\nx');
      await ok(
        view('/memories/u.md'),
        `${FILE_HEADER('/memories/u.md')}\n     1\t\u{1F600}\u{1F600}\u{1F600}\n` +
          '[Truncated: showing lines 1 to 1 of 2. Use view_range [2, -1] to read the rest.]',
      );
      await reopen({ viewMaxChars: 22 });
      await ok(view('/memories/u.md'), `${FILE_HEADER('/memories/u.md')}\n     1\t\u{1F600}\u{1F600}\u{1F600}\n     2\tx`);
    });

    it('a range that selects nothing answers the header alone, with no truncation note', async () => {
      await reopen({ viewMaxChars: 5 });
      await create('/memories/t.md', 'aaaa\nbbbb');
      await ok(view('/memories/t.md', [2, 1]), FILE_HEADER('/memories/t.md'));
    });
  });

  describe('directory view', () => {
    it('lists two levels deep with sums, rolling deeper content into depth-2 sizes', async () => {
      await create('/memories/a.md', 'hello');
      await create('/memories/dir/b.md', 'b'.repeat(1280));
      await create('/memories/dir/sub/c.md', 'c'.repeat(1331));
      await create('/memories/dir/sub/deep/d.md', 'd'.repeat(4096));
      await ok(
        view('/memories'),
        `${DIR_HEADER('/memories')}\n6.6K\t/memories\n5B\t/memories/a.md\n6.5K\t/memories/dir/\n` +
          '1.2K\t/memories/dir/b.md\n5.3K\t/memories/dir/sub/',
      );
    });

    it('a subdirectory lists relative to itself, depth first', async () => {
      await create('/memories/dir/b.md', 'b'.repeat(1280));
      await create('/memories/dir/sub/c.md', 'c'.repeat(1331));
      await create('/memories/dir/sub/deep/d.md', 'd'.repeat(4096));
      await create('/memories/dir/z.md', 'z');
      await ok(
        view('/memories/dir/'),
        `${DIR_HEADER('/memories/dir')}\n6.6K\t/memories/dir\n1.2K\t/memories/dir/b.md\n5.3K\t/memories/dir/sub/\n` +
          '1.3K\t/memories/dir/sub/c.md\n4K\t/memories/dir/sub/deep/\n1B\t/memories/dir/z.md',
      );
    });

    const sizeCases: Array<[number, string]> = [
      [0, '0B'],
      [1, '1B'],
      [512, '512B'],
      [1023, '1023B'],
      [1024, '1K'],
      [1025, '1.0K'],
      [1280, '1.2K'],
      [1331, '1.3K'],
      [1536, '1.5K'],
      [1792, '1.8K'],
      [2304, '2.2K'],
      [4096, '4K'],
      [1_048_575, '1024.0K'],
      [1_048_576, '1M'],
    ];
    for (const [bytes, text] of sizeCases) {
      it(`a ${bytes}-byte memory lists as ${text}`, async () => {
        await create('/memories/s.md', 'x'.repeat(bytes));
        await ok(view('/memories'), `${DIR_HEADER('/memories')}\n${text}\t/memories\n${text}\t/memories/s.md`);
      });
    }

    it('sizes count UTF-8 bytes', async () => {
      await create('/memories/e.md', 'é\u{1F600}');
      await ok(view('/memories'), `${DIR_HEADER('/memories')}\n6B\t/memories\n6B\t/memories/e.md`);
    });

    it('directory sizes are sums, reaching M with one decimal (1.5M)', async () => {
      await create('/memories/m/a', 'a'.repeat(786_432));
      await create('/memories/m/b', 'b'.repeat(786_432));
      await ok(
        view('/memories'),
        `${DIR_HEADER('/memories')}\n1.5M\t/memories\n1.5M\t/memories/m/\n768K\t/memories/m/a\n768K\t/memories/m/b`,
      );
    });

    it('names sort by UTF-16 code units, not UTF-8 bytes (U+1F600 before U+FF5E)', async () => {
      await create('/memories/\uFF5E', 'x');
      await create('/memories/\u{1F600}', 'y');
      await ok(view('/memories'), `${DIR_HEADER('/memories')}\n2B\t/memories\n1B\t/memories/\u{1F600}\n1B\t/memories/\uFF5E`);
    });

    it('names sort by code unit: upper case before lower case', async () => {
      await create('/memories/b', '1');
      await create('/memories/B', '2');
      await create('/memories/a', '3');
      await ok(view('/memories'), `${DIR_HEADER('/memories')}\n3B\t/memories\n1B\t/memories/B\n1B\t/memories/a\n1B\t/memories/b`);
    });

    it('a directory sorts by its name, not by its key (a/ before a.b although "/" > ".")', async () => {
      await create('/memories/a.b', '1');
      await create('/memories/a/x', '22');
      await ok(view('/memories'), `${DIR_HEADER('/memories')}\n3B\t/memories\n2B\t/memories/a/\n2B\t/memories/a/x\n1B\t/memories/a.b`);
    });

    it('hidden names and node_modules are excluded everywhere, also from totals', async () => {
      await create('/memories/.h.md', 'hidden!!!!');
      await create('/memories/node_modules/x.md', 'nm');
      await create('/memories/d/.git/c', 'ccc');
      await create('/memories/d/ok.md', 'ok');
      await create('/memories/d/node_modules/y', 'yyyy');
      await create('/memories/d/e/.f', 'fffff');
      await create('/memories/node_modulesx/z.md', 'z');
      await ok(
        view('/memories'),
        `${DIR_HEADER('/memories')}\n3B\t/memories\n2B\t/memories/d/\n2B\t/memories/d/ok.md\n` +
          '1B\t/memories/node_modulesx/\n1B\t/memories/node_modulesx/z.md',
      );
    });

    it('a hidden directory viewed directly lists its contents', async () => {
      await create('/memories/.h/a.md', 'abc');
      await ok(view('/memories/.h'), `${DIR_HEADER('/memories/.h')}\n3B\t/memories/.h\n3B\t/memories/.h/a.md`);
    });

    it('a directory holding only hidden memories does not exist (not the root)', async () => {
      await create('/memories/only/.x', 'x');
      await fails(view('/memories/only'), 'The path /memories/only does not exist. Please provide a valid path.');
    });

    it('the root lists even when it holds only hidden memories', async () => {
      await create('/memories/.x', 'x');
      await ok(view('/memories'), `${DIR_HEADER('/memories')}\n0B\t/memories`);
    });

    it('a memory and a directory at the same path both list; the memory line first', async () => {
      await create('/memories/a', 'file');
      await create('/memories/a/b.md', 'xy');
      await ok(view('/memories'), `${DIR_HEADER('/memories')}\n6B\t/memories\n4B\t/memories/a\n2B\t/memories/a/\n2B\t/memories/a/b.md`);
    });

    it('viewing a path that is both a memory and a directory shows the memory (file first)', async () => {
      await create('/memories/a', 'file');
      await create('/memories/a/b.md', 'xy');
      await ok(view('/memories/a/'), `${FILE_HEADER('/memories/a')}\n     1\tfile`);
    });

    it('a depth-2 name that is both a memory and a directory lists both', async () => {
      await create('/memories/p/q', '1');
      await create('/memories/p/q/r', '22');
      await ok(view('/memories'), `${DIR_HEADER('/memories')}\n3B\t/memories\n3B\t/memories/p/\n1B\t/memories/p/q\n2B\t/memories/p/q/`);
    });

    it('directory listings are not truncated', async () => {
      await reopen({ viewMaxChars: 10 });
      await create('/memories/a', 'x');
      await create('/memories/b', 'x');
      await ok(view('/memories'), `${DIR_HEADER('/memories')}\n2B\t/memories\n1B\t/memories/a\n1B\t/memories/b`);
    });
  });

  describe('create', () => {
    it('a rejected path echoes the raw path', async () => {
      await fails({ command: 'create', path: '/memories/../x', file_text: 'a' }, 'Error: File /memories/../x already exists');
    });

    it('a missing path echoes the empty string', async () => {
      await fails({ command: 'create', file_text: 'a' }, 'Error: File  already exists');
    });

    it('the root is refused', async () => {
      await fails({ command: 'create', path: '/memories/', file_text: 'a' }, 'Error: File /memories already exists');
      await fails({ command: 'create', path: '/memories/x/..', file_text: 'a' }, 'Error: File /memories already exists');
    });

    it('the root check comes before the size check', async () => {
      await reopen({ maxMemoryBytes: 1 });
      await fails({ command: 'create', path: '/memories', file_text: 'toolong' }, 'Error: File /memories already exists');
    });

    it('content over 1 MiB is refused with the limit in plain digits', async () => {
      await fails(
        { command: 'create', path: '/memories/big.md', file_text: 'a'.repeat(1_048_577) },
        'Error: File /memories/big.md exceeds the maximum memory file size of 1048576 bytes',
      );
    });

    it('exactly maxMemoryBytes is allowed', async () => {
      await create('/memories/big.md', 'a'.repeat(1_048_576));
    });

    it('the limit counts UTF-8 bytes: 5 × é (10 bytes) fits 10, 6 × é (12 bytes) does not', async () => {
      await reopen({ maxMemoryBytes: 10 });
      await create('/memories/e.md', 'é'.repeat(5));
      await fails(
        { command: 'create', path: '/memories/f.md', file_text: 'é'.repeat(6) },
        'Error: File /memories/f.md exceeds the maximum memory file size of 10 bytes',
      );
    });

    it('the size check comes before the exists check', async () => {
      await reopen({ maxMemoryBytes: 3 });
      await create('/memories/a.md', 'abc');
      await fails(
        { command: 'create', path: '/memories/a.md', file_text: 'abcd' },
        'Error: File /memories/a.md exceeds the maximum memory file size of 3 bytes',
      );
    });

    it('an existing memory is not overwritten by default', async () => {
      await create('/memories/a.md', 'one');
      await fails({ command: 'create', path: '/memories//a.md', file_text: 'two' }, 'Error: File /memories/a.md already exists');
      await ok(view('/memories/a.md'), `${FILE_HEADER('/memories/a.md')}\n     1\tone`);
    });

    it('createOverwrites replaces the memory', async () => {
      await reopen({ createOverwrites: true });
      await create('/memories/a.md', 'one');
      await create('/memories/a.md', 'two');
      await ok(view('/memories/a.md'), `${FILE_HEADER('/memories/a.md')}\n     1\ttwo`);
    });

    it('success echoes the normalised path', async () => {
      await ok({ command: 'create', path: '/memories//x/./a.md', file_text: 'a' }, 'File created successfully at: /memories/x/a.md');
    });

    it('a memory may be created where a directory exists, and under a memory', async () => {
      await create('/memories/a/b', '1');
      await create('/memories/a', '2');
      await create('/memories/a/b/c', '3');
    });

    it('a missing or non-string file_text creates an empty memory', async () => {
      await create('/memories/m.md', undefined as unknown as string);
      await ok({ command: 'create', path: '/memories/n.md', file_text: 42 }, 'File created successfully at: /memories/n.md');
      await ok(view('/memories'), `${DIR_HEADER('/memories')}\n0B\t/memories\n0B\t/memories/m.md\n0B\t/memories/n.md`);
    });
  });

  describe('str_replace', () => {
    const sr = (path: unknown, old_str: unknown, new_str?: unknown) =>
      new_str === undefined ? { command: 'str_replace', path, old_str } : { command: 'str_replace', path, old_str, new_str };

    it('a rejected path echoes the raw path', async () => {
      await fails(sr('/memoriesfoo.md', 'a', 'b'), 'Error: The path /memoriesfoo.md does not exist. Please provide a valid path.');
    });

    it('the root answers does-not-exist with the normalised path', async () => {
      await fails(sr('/memories/', 'a', 'b'), 'Error: The path /memories does not exist. Please provide a valid path.');
    });

    it('a missing memory answers does-not-exist', async () => {
      await fails(sr('/memories/./nope.md', 'a', 'b'), 'Error: The path /memories/nope.md does not exist. Please provide a valid path.');
    });

    it('a directory is not a memory', async () => {
      await create('/memories/d/a.md', 'a');
      await fails(sr('/memories/d', 'a', 'b'), 'Error: The path /memories/d does not exist. Please provide a valid path.');
    });

    it('an empty old_str is not found', async () => {
      await create('/memories/a.md', 'abc');
      await fails(sr('/memories/a.md', '', 'x'), 'No replacement was performed, old_str `` did not appear verbatim in /memories/a.md.');
    });

    it('a missing old_str is the empty string', async () => {
      await create('/memories/a.md', 'abc');
      await fails(
        { command: 'str_replace', path: '/memories/a.md', new_str: 'x' },
        'No replacement was performed, old_str `` did not appear verbatim in /memories/a.md.',
      );
    });

    it('old_str not found', async () => {
      await create('/memories/a.md', 'abc');
      await fails(sr('/memories/a.md', 'zz', 'x'), 'No replacement was performed, old_str `zz` did not appear verbatim in /memories/a.md.');
    });

    it('two occurrences on one line count as two (lines: 1, 1)', async () => {
      await create('/memories/a.md', 'ab ab');
      await fails(
        sr('/memories/a.md', 'ab', 'x'),
        'No replacement was performed. Multiple occurrences of old_str `ab` in lines: 1, 1. Please ensure it is unique',
      );
    });

    it('multiple occurrences report each start line', async () => {
      await create('/memories/a.md', 'x\ny\nx');
      await fails(
        sr('/memories/a.md', 'x', 'z'),
        'No replacement was performed. Multiple occurrences of old_str `x` in lines: 1, 3. Please ensure it is unique',
      );
    });

    it('a self-overlapping old_str that occurs once without overlaps is replaced ("aa" in "aaa")', async () => {
      await create('/memories/a.md', 'aaa');
      await ok(
        sr('/memories/a.md', 'aa', 'b'),
        'The memory file has been edited. Here is the snippet showing the change (with line numbers):\n     1\tba',
      );
    });

    it('overlapping occurrences are listed with overlaps ("aa" in "aaaa": lines 1, 1, 1)', async () => {
      await create('/memories/a.md', 'aaaa');
      await fails(
        sr('/memories/a.md', 'aa', 'b'),
        'No replacement was performed. Multiple occurrences of old_str `aa` in lines: 1, 1, 1. Please ensure it is unique',
      );
    });

    it('the edited content over maxMemoryBytes is refused; exactly the limit is allowed', async () => {
      await reopen({ maxMemoryBytes: 10 });
      await create('/memories/a.md', 'abc');
      await fails(sr('/memories/a.md', 'b', 'x'.repeat(9)), 'Error: File /memories/a.md exceeds the maximum memory file size of 10 bytes');
      await ok(
        sr('/memories/a.md', 'b', 'x'.repeat(8)),
        'The memory file has been edited. Here is the snippet showing the change (with line numbers):\n     1\taxxxxxxxxc',
      );
    });

    const SEVEN = 'l1\nl2\nl3\nl4\nl5\nl6\nl7';
    const EDITED = 'The memory file has been edited. Here is the snippet showing the change (with line numbers):';

    it('success shows the changed line ± 2 of the new content', async () => {
      await create('/memories/a.md', SEVEN);
      await ok(sr('/memories/a.md', 'l4', 'L4'), `${EDITED}\n     2\tl2\n     3\tl3\n     4\tL4\n     5\tl5\n     6\tl6`);
    });

    it('the snippet clamps at the start of the file', async () => {
      await create('/memories/a.md', SEVEN);
      await ok(sr('/memories/a.md', 'l1', 'L1'), `${EDITED}\n     1\tL1\n     2\tl2\n     3\tl3`);
    });

    it('the snippet clamps at the end of the file', async () => {
      await create('/memories/a.md', SEVEN);
      await ok(sr('/memories/a.md', 'l7', 'L7'), `${EDITED}\n     5\tl5\n     6\tl6\n     7\tL7`);
    });

    it('a multi-line new_str: the snippet is around the line where the occurrence started', async () => {
      await create('/memories/a.md', 'l1\nl2\nl3');
      await ok(sr('/memories/a.md', 'l2', 'a\nb'), `${EDITED}\n     1\tl1\n     2\ta\n     3\tb\n     4\tl3`);
    });

    it('an old_str spanning several lines matches', async () => {
      await create('/memories/a.md', SEVEN);
      await ok(sr('/memories/a.md', 'l3\nl4\nl5', 'X'), `${EDITED}\n     1\tl1\n     2\tl2\n     3\tX\n     4\tl6\n     5\tl7`);
    });

    it("$&, $', $` and $1 in new_str are inserted literally", async () => {
      await create('/memories/a.md', 'pre X post');
      await ok(sr('/memories/a.md', 'X', "$&$'$`$1$$"), `${EDITED}\n     1\tpre $&$'$\`$1$$ post`);
      await ok(view('/memories/a.md'), `${FILE_HEADER('/memories/a.md')}\n     1\tpre $&$'$\`$1$$ post`);
    });

    it('a missing new_str deletes old_str and never writes "undefined"', async () => {
      await create('/memories/a.md', 'keep DROP keep');
      await ok(sr('/memories/a.md', 'DROP '), `${EDITED}\n     1\tkeep keep`);
      await ok(view('/memories/a.md'), `${FILE_HEADER('/memories/a.md')}\n     1\tkeep keep`);
    });

    it('the edit echoes the normalised path and persists', async () => {
      await create('/memories/a.md', 'one');
      await ok(sr('/memories//a.md', 'one', 'two'), `${EDITED}\n     1\ttwo`);
      await db.close();
      db = await Rabosh.open(target);
      reopen();
      await ok(view('/memories/a.md'), `${FILE_HEADER('/memories/a.md')}\n     1\ttwo`);
    });
  });

  describe('insert', () => {
    const ins = (path: unknown, insert_line: unknown, insert_text: unknown) => ({ command: 'insert', path, insert_line, insert_text });
    const INVALID = (v: string, count: number) =>
      `Error: Invalid \`insert_line\` parameter: ${v}. It should be within the range of lines of the file: [0, ${count}]`;

    it('a rejected path echoes the raw path (no trailing sentence)', async () => {
      await fails(ins('/memories/../a', 0, 'x'), 'Error: The path /memories/../a does not exist');
    });

    it('the root is refused with the normalised path', async () => {
      await fails(ins('/memories/.', 0, 'x'), 'Error: The path /memories does not exist');
    });

    it('a missing memory is refused', async () => {
      await fails(ins('/memories/nope', 0, 'x'), 'Error: The path /memories/nope does not exist');
    });

    it('the path check comes before the line check', async () => {
      await fails(ins('/memories/nope', 'x', 'x'), 'Error: The path /memories/nope does not exist');
    });

    it('insert_line past the end is invalid', async () => {
      await create('/memories/a.md', 'a\nb\n');
      await fails(ins('/memories/a.md', 3, 'x'), INVALID('3', 2));
    });

    it('a negative insert_line is invalid', async () => {
      await create('/memories/a.md', 'a\nb\n');
      await fails(ins('/memories/a.md', -1, 'x'), INVALID('-1', 2));
    });

    it('a fractional insert_line renders with String()', async () => {
      await create('/memories/a.md', 'a\nb\n');
      await fails(ins('/memories/a.md', 1.5, 'x'), INVALID('1.5', 2));
    });

    it('a string insert_line is invalid even when it spells an integer', async () => {
      await create('/memories/a.md', 'a\nb\n');
      await fails(ins('/memories/a.md', '1', 'x'), INVALID('1', 2));
    });

    it('a null insert_line renders as null', async () => {
      await create('/memories/a.md', 'a\nb\n');
      await fails(ins('/memories/a.md', null, 'x'), INVALID('null', 2));
    });

    it('a missing insert_line renders as undefined', async () => {
      await create('/memories/a.md', 'a\nb\n');
      await fails({ command: 'insert', path: '/memories/a.md', insert_text: 'x' }, INVALID('undefined', 2));
    });

    it('empty content has zero lines', async () => {
      await create('/memories/a.md', '');
      await fails(ins('/memories/a.md', 1, 'x'), INVALID('1', 0));
    });

    const expectAfter = async (before: string, line: number, text: string, after: string) => {
      await create('/memories/a.md', before);
      await ok(ins('/memories/a.md', line, text), 'The file /memories/a.md has been edited.');
      const numbered = after
        .split('\n')
        .map((l, i) => `\n${String(i + 1).padStart(6, ' ')}\t${l}`)
        .join('');
      await ok(view('/memories/a.md'), `${FILE_HEADER('/memories/a.md')}${numbered}`);
    };

    it('insert at 0 prepends', () => expectAfter('a\nb\n', 0, 'X', 'X\na\nb\n'));
    it('insert at the count appends', () => expectAfter('a\nb\n', 2, 'X', 'a\nb\nX\n'));
    it('one trailing \\n of insert_text is dropped', () => expectAfter('a\nb\n', 1, 'X\n', 'a\nX\nb\n'));
    it('insert into empty content', () => expectAfter('', 0, 'X', 'X\n'));
    it('content without a trailing newline gains one', () => expectAfter('a', 1, 'X', 'a\nX\n'));
    it('an empty line inserted at the end of "a\\n" gives "a\\n"', () => expectAfter('a\n', 1, '', 'a\n'));
    it('a blank last line of the original is lost', () => expectAfter('a\n\n', 0, 'X', 'X\na\n'));
    it('multi-line insert_text', () => expectAfter('a\nb', 1, 'X\nY', 'a\nX\nY\nb\n'));
    it('a missing insert_text inserts an empty line', async () => {
      await create('/memories/a.md', 'a\nb');
      await ok({ command: 'insert', path: '/memories/a.md', insert_line: 1 }, 'The file /memories/a.md has been edited.');
      await ok(view('/memories/a.md'), `${FILE_HEADER('/memories/a.md')}\n     1\ta\n     2\t\n     3\tb\n     4\t`);
    });

    it('over maxMemoryBytes is refused; exactly the limit is allowed', async () => {
      await reopen({ maxMemoryBytes: 6 });
      await create('/memories/a.md', 'abc');
      await fails(ins('/memories/a.md', 1, 'de'), 'Error: File /memories/a.md exceeds the maximum memory file size of 6 bytes');
      await ok(ins('/memories/a.md', 1, 'd'), 'The file /memories/a.md has been edited.');
    });

    it('success echoes the normalised path', async () => {
      await create('/memories/a.md', 'a');
      await ok(ins('/memories//a.md', 0, 'x'), 'The file /memories/a.md has been edited.');
    });
  });

  describe('delete', () => {
    const del = (path: unknown) => ({ command: 'delete', path });

    it('a rejected path echoes the raw path', async () => {
      await fails(del('/memories/../x'), 'Error: The path /memories/../x does not exist');
    });

    for (const root of ['/memories', '/memories/', '/memories/.', '/memories//', '/memories/x/..']) {
      it(`${root} is the root and is refused`, async () => {
        await create('/memories/keep.md', 'k');
        await fails(del(root), 'Error: Cannot delete the /memories directory itself');
        await ok(view('/memories/keep.md'), `${FILE_HEADER('/memories/keep.md')}\n     1\tk`);
      });
    }

    it('nothing at or under the path', async () => {
      await fails(del('/memories//nope'), 'Error: The path /memories/nope does not exist');
    });

    it('deletes a memory', async () => {
      await create('/memories/a.md', 'a');
      await ok(del('/memories/./a.md'), 'Successfully deleted /memories/a.md');
      await fails(view('/memories/a.md'), 'The path /memories/a.md does not exist. Please provide a valid path.');
    });

    it('deletes a subtree, hidden memories included, and only that subtree', async () => {
      await create('/memories/a/x', '1');
      await create('/memories/a/.h/y', '2');
      await create('/memories/a/node_modules/z', '3');
      await create('/memories/ab', '4');
      await ok(del('/memories/a'), 'Successfully deleted /memories/a');
      expect(await handler.usage()).toEqual({ memories: 1, bytes: 1 });
      await ok(view('/memories'), `${DIR_HEADER('/memories')}\n1B\t/memories\n1B\t/memories/ab`);
    });

    it('deletes a memory and the directory at the same path together', async () => {
      await create('/memories/a', 'file');
      await create('/memories/a/b', 'x');
      await ok(del('/memories/a'), 'Successfully deleted /memories/a');
      expect(await handler.usage()).toEqual({ memories: 0, bytes: 0 });
    });

    it('a directory holding only hidden memories can be deleted', async () => {
      await create('/memories/d/.h', 'x');
      await ok(del('/memories/d'), 'Successfully deleted /memories/d');
    });
  });

  describe('rename', () => {
    const ren = (old_path: unknown, new_path: unknown) => ({ command: 'rename', old_path, new_path });

    it('a rejected old_path', async () => {
      await fails(ren('/memoriesx', '/memories/b'), 'Error: The path /memoriesx does not exist');
    });

    it('a rejected new_path', async () => {
      await create('/memories/a', 'a');
      await fails(ren('/memories/a', '/etc/x'), 'Error: The destination /etc/x already exists');
    });

    it('both rejected: old_path answers first', async () => {
      await fails(ren('C:/memories/a', '\\memories\\b'), 'Error: The path C:/memories/a does not exist');
    });

    it('missing fields are empty, hence rejected', async () => {
      await fails({ command: 'rename' }, 'Error: The path  does not exist');
      await create('/memories/a', 'a');
      await fails({ command: 'rename', old_path: '/memories/a' }, 'Error: The destination  already exists');
    });

    for (const root of ['/memories', '/memories/', '/memories/.', '/memories//', '/memories/x/..']) {
      it(`old_path ${root} is the root and is refused`, async () => {
        await create('/memories/a', 'a');
        await fails(ren(root, '/memories/b'), 'Error: Cannot rename the /memories directory itself');
      });
    }

    it('new_path the root is refused', async () => {
      await create('/memories/a', 'a');
      await fails(ren('/memories/a', '/memories/x/..'), 'Error: The destination /memories already exists');
    });

    it('new_path equal to old_path is refused (even when old_path holds nothing)', async () => {
      await fails(ren('/memories/a.md', '/memories/./a.md'), 'Error: The destination /memories/a.md already exists');
    });

    it('new_path inside old_path is refused', async () => {
      await create('/memories/a/x', 'a');
      await fails(ren('/memories/a', '/memories/a//b'), 'Error: Cannot rename /memories/a to /memories/a/b, which is inside it');
    });

    it('a sibling sharing a prefix is not inside (a → ab)', async () => {
      await create('/memories/a', 'a');
      await ok(ren('/memories/a', '/memories/ab'), 'Successfully renamed /memories/a to /memories/ab');
    });

    it('nothing at old_path; the source is checked before the destination', async () => {
      await create('/memories/b', 'b');
      await fails(ren('/memories/nope', '/memories/b'), 'Error: The path /memories/nope does not exist');
    });

    it('a memory at new_path is refused', async () => {
      await create('/memories/a', 'a');
      await create('/memories/b.md', 'b');
      await fails(ren('/memories/a', '/memories/b.md'), 'Error: The destination /memories/b.md already exists');
    });

    it('memories under new_path are refused', async () => {
      await create('/memories/a', 'a');
      await create('/memories/d/.hidden', 'b');
      await fails(ren('/memories/a', '/memories/d'), 'Error: The destination /memories/d already exists');
    });

    it('moves a memory and its subtree, hidden included, to the same relative places', async () => {
      await create('/memories/a', 'file');
      await create('/memories/a/b', 'bb');
      await create('/memories/a/.h/c', 'ccc');
      await create('/memories/ab', 'x');
      await ok(ren('/memories//a', '/memories/n/m/'), 'Successfully renamed /memories/a to /memories/n/m');
      await fails(view('/memories/a'), 'The path /memories/a does not exist. Please provide a valid path.');
      await ok(view('/memories/n/m'), `${FILE_HEADER('/memories/n/m')}\n     1\tfile`);
      await ok(view('/memories/n/m/.h/c'), `${FILE_HEADER('/memories/n/m/.h/c')}\n     1\tccc`);
      await ok(view('/memories/ab'), `${FILE_HEADER('/memories/ab')}\n     1\tx`);
      expect(await handler.usage()).toEqual({ memories: 4, bytes: 10 });
    });

    it('renames into a directory that is a prefix of the source (d/a → d)', async () => {
      await create('/memories/d/a', 'x');
      await fails(ren('/memories/d/a', '/memories/d'), 'Error: The destination /memories/d already exists');
    });
  });

  describe('unknown command', () => {
    const cases: Array<[string, unknown, string]> = [
      ['null input', null, 'undefined'],
      ['undefined input', undefined, 'undefined'],
      ['a string input', 'view', 'undefined'],
      ['a number input', 42, 'undefined'],
      ['an array input', ['view'], 'undefined'],
      ['no command', {}, 'undefined'],
      ['an upper-case command', { command: 'VIEW', path: '/memories' }, 'VIEW'],
      ['a number command', { command: 5 }, '5'],
      ['a null command', { command: null }, 'null'],
      ['an object command', { command: {} }, '[object Object]'],
      ['an array command that stringifies to a real one', { command: ['view'], path: '/memories' }, 'view'],
      ['a boolean command', { command: true }, 'true'],
      ['an empty command', { command: '' }, ''],
      ['the string "undefined"', { command: 'undefined' }, 'undefined'],
      ['a prototype name', { command: 'constructor' }, 'constructor'],
      ['__proto__', { command: '__proto__' }, '__proto__'],
    ];
    for (const [name, input, rendered] of cases) {
      it(name, async () => {
        await fails(input, `Error: unknown command ${rendered}`);
      });
    }
  });

  describe('traps', () => {
    it('/memoriesfoo.md is rejected, not stored under /memories', async () => {
      await fails({ command: 'create', path: '/memoriesfoo.md', file_text: 'x' }, 'Error: File /memoriesfoo.md already exists');
      expect(await handler.usage()).toEqual({ memories: 0, bytes: 0 });
    });

    it('no answer ever contains the host filesystem path or the store URL', async () => {
      const inputs: unknown[] = [
        { command: 'create', path: '/memories/a', file_text: 'x' },
        { command: 'view', path: '/memories' },
        { command: 'view', path: '/memories/a' },
        { command: 'view', path: '/memories/../../etc/passwd' },
        { command: 'view', path: target },
        { command: 'create', path: target, file_text: 'x' },
        { command: 'rename', old_path: '/memories/a', new_path: `/memories/${'x'.repeat(300)}` },
        { command: 'delete', path: '/memories/zz' },
        { command: 'str_replace', path: '/memories/a', old_str: 'q', new_str: 'r' },
        { command: 'insert', path: '/memories/a', insert_line: 9, insert_text: 'r' },
      ];
      for (const input of inputs) {
        const { text } = await run(input);
        // The model's own input may be echoed (a not-found path is), the host's never. Compared as
        // values: JSON would double a Windows path's backslashes (found under Wine).
        const echoed = Object.values(input as Record<string, unknown>).some((v) => typeof v === 'string' && v.includes(target));
        if (!echoed) expect(text).not.toContain(target);
        expect(text).not.toContain(process.cwd());
      }
    });

    it('the typed methods answer the same strings as execute', async () => {
      expect(await handler.create({ command: 'create', path: '/memories/t', file_text: 'abc' })).toBe(
        'File created successfully at: /memories/t',
      );
      expect(await handler.view({ command: 'view', path: '/memories/t' })).toBe(`${FILE_HEADER('/memories/t')}\n     1\tabc`);
      expect(await handler.view({ command: 'view', path: '/memories/nope' })).toBe(
        'The path /memories/nope does not exist. Please provide a valid path.',
      );
      expect(await handler.str_replace({ command: 'str_replace', path: '/memories/t', old_str: 'b', new_str: 'B' })).toBe(
        'The memory file has been edited. Here is the snippet showing the change (with line numbers):\n     1\taBc',
      );
      expect(await handler.insert({ command: 'insert', path: '/memories/t', insert_line: 1, insert_text: 'x' })).toBe(
        'The file /memories/t has been edited.',
      );
      expect(await handler.rename({ command: 'rename', old_path: '/memories/t', new_path: '/memories/u' })).toBe(
        'Successfully renamed /memories/t to /memories/u',
      );
      expect(await handler.delete({ command: 'delete', path: '/memories/u' })).toBe('Successfully deleted /memories/u');
    });
  });

  describe('an old_str that stored text cannot hold', () => {
    // Content is stored as UTF-8: a lone surrogate in file_text becomes U+FFFD. An old_str holding
    // one must never match that U+FFFD (nor anything else), and the path is still checked first.
    it('an unpaired surrogate does not match, and the memory is left as it was', async () => {
      await create('/memories/s.md', 'a\uD800b');
      for (const old_str of ['\uD800', '\uDC00', 'a\uD800', '\uD800b']) {
        await fails(
          { command: 'str_replace', path: '/memories/s.md', old_str, new_str: 'X' },
          `No replacement was performed, old_str \`${old_str}\` did not appear verbatim in /memories/s.md.`,
        );
      }
      await ok(view('/memories/s.md'), `${FILE_HEADER('/memories/s.md')}\n     1\ta\uFFFDb`);
      await fails(
        { command: 'str_replace', path: '/memories/none.md', old_str: '\uD800', new_str: 'X' },
        'Error: The path /memories/none.md does not exist. Please provide a valid path.',
      );
    });

    it('a surrogate pair is an ordinary character and matches', async () => {
      await create('/memories/p.md', 'a\uD83D\uDE00b');
      const r = await run({ command: 'str_replace', path: '/memories/p.md', old_str: '\uD83D\uDE00', new_str: '-' });
      expect(r.isError).toBe(false);
      await ok(view('/memories/p.md'), `${FILE_HEADER('/memories/p.md')}\n     1\ta-b`);
    });
  });
});
