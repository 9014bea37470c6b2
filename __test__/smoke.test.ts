// The package as a consumer sees it: both entries from dist (through the exports map, in a
// child Node process), and a create → view round trip through the source entry.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

import { RaboshMemoryToolHandler } from '../index.js';
import { makeTempDir, removeDir } from './tmp-dir.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach(removeDir));

// Runs in the child: open, create, view, close; prints the view's text and isError.
const roundTrip = (load: string) => `
${load}
const dir = process.argv.at(-1);
const h = await m.RaboshMemoryToolHandler.open(dir);
const c = await h.execute({ command: 'create', path: '/memories/a.md', file_text: 'hello\\nworld' });
const v = await h.execute({ command: 'view', path: '/memories/a.md' });
await h.close();
console.log(JSON.stringify({ c, v, names: Object.keys(m).sort() }));
`;

function child(script: string, inputType: 'module' | 'commonjs'): { c: unknown; v: unknown; names: string[] } {
  const dir = makeTempDir('rabosh-smoke');
  dirs.push(dir);
  const body = inputType === 'module' ? script : `(async () => {${script}})().catch((e) => { console.error(e); process.exit(1); });`;
  const out = execFileSync(process.execPath, ['--input-type', inputType, '-e', body, join(dir, 'store')], {
    cwd: root,
    encoding: 'utf8',
  });
  return JSON.parse(out);
}

const expected = {
  c: { text: 'File created successfully at: /memories/a.md', isError: false },
  v: { text: "Here's the content of /memories/a.md with line numbers:\n     1\thello\n     2\tworld", isError: false },
};

const PUBLIC = ['MemoryPath', 'Rabosh', 'RaboshMemoryToolHandler', 'StoreLockedError', 'memoryResult', 'memoryTool'];

describe('the package entries', () => {
  it('ESM `import` of rabosh-memory loads dist/esm and round-trips', () => {
    const r = child(roundTrip("const m = await import('rabosh-memory');"), 'module');
    expect({ c: r.c, v: r.v }).toEqual(expected);
    expect(r.names).toEqual(expect.arrayContaining(PUBLIC));
    expect(r.names.some((n) => n.startsWith('Native'))).toBe(false);
  });

  it('CJS `require` of rabosh-memory loads dist/cjs and round-trips', () => {
    const r = child(roundTrip("const m = require('rabosh-memory');"), 'commonjs');
    expect({ c: r.c, v: r.v }).toEqual(expected);
    expect(r.names).toEqual(expect.arrayContaining(PUBLIC));
  });

  it('resolves the two builds to different files that share one native addon', () => {
    const out = execFileSync(
      process.execPath,
      [
        '--input-type',
        'module',
        '-e',
        `import { createRequire } from 'node:module';
         const require = createRequire(process.cwd() + '/');
         const esm = await import('rabosh-memory');
         const cjs = require('rabosh-memory');
         const addons = Object.keys(require.cache).filter((k) => k.endsWith('.node'));
         console.log(JSON.stringify({
           files: [import.meta.resolve('rabosh-memory'), require.resolve('rabosh-memory')],
           addons: addons.length,
           distinctFacades: esm.Rabosh !== cjs.Rabosh,
         }));`,
      ],
      { cwd: root, encoding: 'utf8' },
    );
    const r = JSON.parse(out) as { files: [string, string]; addons: number; distinctFacades: boolean };
    expect(r.files[0]).toMatch(/dist\/esm\/index\.js$/);
    expect(r.files[1].split('\\').join('/')).toMatch(/dist\/cjs\/index\.js$/);
    expect(r.distinctFacades).toBe(true);
    expect(r.addons).toBe(1);
  });
});

describe('source entry', () => {
  it('create then view through the SDK-shaped methods', async () => {
    const dir = makeTempDir('rabosh-smoke');
    dirs.push(dir);
    await using h = await RaboshMemoryToolHandler.open(join(dir, 'store'), { viewMaxChars: 1000 });
    expect(await h.create({ command: 'create', path: '/memories//notes/../a.md', file_text: 'x' })).toBe(
      'File created successfully at: /memories/a.md',
    );
    expect(await h.view({ command: 'view', path: '/memories' })).toBe(
      "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n1B\t/memories\n1B\t/memories/a.md",
    );
  });
});
