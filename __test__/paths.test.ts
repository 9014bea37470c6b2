// Contract §2: path normalisation, case by case and as properties. Expected values are written out
// from the contract, never computed by the code under test.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { MemoryPath } from '../index.js';

const norm = (raw: string) => MemoryPath.normalise(raw);
const utf8 = (s: string) => Buffer.byteLength(s, 'utf8');

describe('accepted paths normalise as the contract shows', () => {
  const cases: Array<[string, string]> = [
    ['/memories', '/memories'],
    ['/memories/', '/memories'],
    ['/memories/.', '/memories'],
    ['/memories//', '/memories'],
    ['/memories/x/..', '/memories'],
    ['/memories/p/..', '/memories'],
    ['/memories//a.md', '/memories/a.md'],
    ['/memories/./a.md', '/memories/a.md'],
    ['/memories/p/../a.md', '/memories/a.md'],
    ['/memories/a.md/', '/memories/a.md'],
    ['/memories/C:/a.md', '/memories/C:/a.md'],
    ['/memories/a\uD83D\uDE00.md', '/memories/a\uD83D\uDE00.md'],
    ['/memories/%2e', '/memories/%2e'],
    ['/memories/%2E/a.md', '/memories/%2E/a.md'],
    ['/memories/%2e%2f', '/memories/%2e%2f'],
    ['/memories/...', '/memories/...'],
    ['/memories/.hidden', '/memories/.hidden'],
    ['/memories/a b.md', '/memories/a b.md'],
    // Only U+0000–U+001F and U+007F are refused; C1 controls are ordinary characters here.
    ['/memories/a\u0080\u009F.md', '/memories/a\u0080\u009F.md'],
    // No Unicode normalisation: NFD stays NFD.
    ['/memories/e\u0301', '/memories/e\u0301'],
    // `..` removes the previous segment, whichever it is; only the result is checked.
    ['/memories/../memories/a.md', '/memories/a.md'],
    ['/memories/a/b/../../c', '/memories/c'],
  ];
  for (const [raw, expected] of cases) {
    it(`${JSON.stringify(raw)} → ${JSON.stringify(expected)}`, () => {
      expect(norm(raw)).toBe(expected);
    });
  }
});

describe('rejected paths', () => {
  const cases: string[] = [
    // Windows spellings
    'C:/memories/a.md',
    'C:\\memories\\a.md',
    '\\\\server\\share\\memories',
    '\\memories\\a.md',
    '/memories\\a.md',
    '/memories/a\\b.md',
    // not under the root
    'memories/a.md',
    '',
    ' /memories/a.md',
    '/MEMORIES/a.md',
    '/memoriesish/a.md',
    '/memories.md',
    '/memoriesfoo.md',
    '/memories/..',
    '/memories/../etc',
    '/memories/a/../../x',
    '/memories/a/b/../../..',
    '/memories/../..',
    // percent-encoded traversal, any letter case, even inside a name
    '/memories/%2e%2e/etc',
    '/memories/%2E%2e/a.md',
    '/memories/%2e%2E',
    '/memories/%2E%2E/x',
    '/memories/a%2e%2eb',
    // control characters
    '/memories/a\u0000.md',
    '/memories/a\t.md',
    '/memories/a\n.md',
    '/memories/a\r.md',
    '/memories/a\u001F.md',
    '/memories/a\u007F.md',
    // unpaired surrogates, anywhere
    '/memories/a\uD800.md',
    '/memories/a\uDE00.md',
    '/memories/\uDE00\uD83D',
    '/memories/a\uD83D',
    '/memories/\uD800/../a.md',
  ];
  for (const raw of cases) {
    it(`${JSON.stringify(raw)} → null`, () => {
      expect(norm(raw)).toBeNull();
    });
  }

  it('every code unit below U+0020 and U+007F is refused; U+0020 is not', () => {
    for (let c = 0; c < 0x20; c++) {
      expect(norm(`/memories/a${String.fromCharCode(c)}b`), `U+${c.toString(16)}`).toBeNull();
    }
    expect(norm('/memories/a\u007Fb')).toBeNull();
    expect(norm('/memories/a b')).toBe('/memories/a b');
  });
});

describe('length limits count UTF-8 bytes', () => {
  it('a result of exactly 1024 bytes is accepted, 1025 is refused', () => {
    const seg = 'a'.repeat(202);
    const exact = `/memories/${seg}/${seg}/${seg}/${seg}/${seg}`;
    expect(utf8(exact)).toBe(1024);
    expect(norm(exact)).toBe(exact);
    expect(norm(`${exact}b`)).toBeNull();
  });

  it('the 1024-byte limit is in UTF-8 bytes, not UTF-16 code units', () => {
    const seg255 = `${'é'.repeat(127)}a`;
    const exact = `/memories/${seg255}/${seg255}/${seg255}/${'é'.repeat(123)}`;
    expect(utf8(exact)).toBe(1024);
    expect(exact.length).toBeLessThan(1024);
    expect(norm(exact)).toBe(exact);
    const over = `${exact}a`;
    expect(utf8(over)).toBe(1025);
    expect(over.length).toBeLessThan(1024);
    expect(norm(over)).toBeNull();
  });

  it('a segment of 255 bytes is accepted, 256 refused (ASCII)', () => {
    expect(norm(`/memories/${'a'.repeat(255)}`)).toBe(`/memories/${'a'.repeat(255)}`);
    expect(norm(`/memories/${'a'.repeat(256)}`)).toBeNull();
    expect(norm(`/memories/${'a'.repeat(256)}/b`)).toBeNull();
  });

  it('the segment limit is in UTF-8 bytes: 128 × é (256 bytes, 128 code units) is refused', () => {
    expect(norm(`/memories/${'é'.repeat(127)}a`)).toBe(`/memories/${'é'.repeat(127)}a`);
    expect(norm(`/memories/${'é'.repeat(128)}`)).toBeNull();
    const astral = '\u{1F600}';
    expect(norm(`/memories/${astral.repeat(63)}abc`)).toBe(`/memories/${astral.repeat(63)}abc`);
    expect(norm(`/memories/${astral.repeat(64)}`)).toBeNull();
  });

  it('the limit applies to the result: a long raw path that normalises short is accepted', () => {
    expect(norm(`/memories${'/.'.repeat(600)}/a.md`)).toBe('/memories/a.md');
    expect(norm(`/memories${'/'.repeat(1500)}a.md`)).toBe('/memories/a.md');
  });
});

// Pieces chosen so random joins hit every rule: separators, dot segments, the root word, forbidden
// characters, percent spellings, surrogates and multi-byte characters.
const piece = fc.constantFrom(
  '/',
  '/',
  '/',
  'memories',
  'memories',
  '.',
  '..',
  'a',
  'b.md',
  '.h',
  'node_modules',
  '\\',
  '%2e',
  '%2E',
  '%2e%2E',
  '\u0000',
  '\u007F',
  '\t',
  '\uD800',
  '\uDE00',
  '\uD83D\uDE00',
  'é',
  ' ',
  'C:',
  '~',
);
const pathish = fc.oneof(
  fc.array(piece, { maxLength: 14 }).map((ps) => `/memories${ps.join('')}`),
  fc.array(piece, { maxLength: 14 }).map((ps) => ps.join('')),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }).map((s) => `/memories/${s}`),
);

function hasLoneSurrogate(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        i++;
        continue;
      }
      return true;
    }
    if (c >= 0xdc00 && c <= 0xdfff) return true;
  }
  return false;
}

describe('properties', () => {
  const runs = Number(process.env.RABOSH_FC_RUNS ?? 100) * 20;
  const seed = process.env.RABOSH_FC_SEED ? Number(process.env.RABOSH_FC_SEED) : undefined;

  it('normalise is idempotent and every accepted output is canonical', () => {
    fc.assert(
      fc.property(pathish, (raw) => {
        const out = norm(raw);
        if (out === null) return;
        expect(norm(out)).toBe(out);
        expect(out === '/memories' || out.startsWith('/memories/')).toBe(true);
        const segments = out.split('/').slice(1);
        for (const s of segments) {
          expect(s).not.toBe('');
          expect(s).not.toBe('.');
          expect(s).not.toBe('..');
          expect(utf8(s)).toBeLessThanOrEqual(255);
        }
        expect(utf8(out)).toBeLessThanOrEqual(1024);
        // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it looks for
        expect(/[\u0000-\u001F\u007F\\]/.test(out)).toBe(false);
        expect(hasLoneSurrogate(out)).toBe(false);
        expect(out.toLowerCase().includes('%2e%2e')).toBe(false);
      }),
      { numRuns: runs, seed },
    );
  });

  it('whatever the input, the answer is a string or null and never throws', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 300 }), (raw) => {
        const out = norm(raw);
        expect(out === null || typeof out === 'string').toBe(true);
      }),
      { numRuns: runs, seed },
    );
  });
});

// The fast path for already-normal ASCII paths (src/path.ts ALREADY_NORMAL) must answer exactly
// what the general rules do: a longhand of them for ASCII inputs, where bytes are code units.
function longhandAscii(raw: string): string | null {
  if (!raw.startsWith('/memories')) return null;
  const out: string[] = [];
  for (const seg of raw.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') {
      if (out.length === 0) return null;
      out.pop();
    } else out.push(seg);
  }
  const path = `/${out.join('/')}`;
  if (path !== '/memories' && !path.startsWith('/memories/')) return null;
  if (path.length > 1024 || out.some((s) => s.length > 255)) return null;
  return path;
}

describe('already-normal ASCII paths', () => {
  const asciiPiece = fc.oneof(
    fc.constantFrom('/', '//', '/.', '/..', '/...', '/.a', '/a.', '/-', '/_x', 'memories', '/memories', 'X'),
    fc.stringMatching(/^\/[\w.-]{1,12}$/),
    fc.stringMatching(/^\/[\w]{250,260}$/),
  );
  it('normalise equals the longhand rules on them, whatever the mix of dots, slashes and lengths', () => {
    fc.assert(
      fc.property(fc.array(asciiPiece, { maxLength: 10 }), fc.boolean(), (ps, rooted) => {
        const raw = `${rooted ? '/memories' : ''}${ps.join('')}`;
        expect(norm(raw)).toBe(longhandAscii(raw));
      }),
      { numRuns: 2000 },
    );
  });
});
