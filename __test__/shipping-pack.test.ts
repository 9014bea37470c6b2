// The packages as a user installs them. `npm pack` the library (the root), the platform package
// for this machine and the app package (see packed.ts). The library with its platform package
// alone installs nothing else. A consumer then installs all three with
// `npm install --prefer-offline` (dependencies come from the npm cache when it has them, from the
// registry otherwise: a fresh machine has an empty cache) and uses them from there: ESM import,
// CJS require, the app's `rabosh-memory` bin (and its MCP server and inspector), and
// `tsc --noEmit` against the shipped types. This proves the "files" lists, "exports", "types",
// "bin", the platform package's layout and the generated loader finding the addon by package
// name (the root tarball carries no .node file, exactly as published).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { raw, startUiWith, stopUi } from './inspector-harness.js';
import { npm } from './npm-cli.js';
import { hostAbi, packTarballs } from './packed.js';

const root = resolve(import.meta.dirname, '..');
const work = mkdtempSync(join(tmpdir(), 'rabosh-pack-'));
const consumer = join(work, 'consumer');
const isWindows = process.platform === 'win32';

function node(args: string[], cwd = consumer): string {
  return execFileSync(process.execPath, args, { cwd, encoding: 'utf8', stdio: 'pipe' });
}

let rootTarball = '';
let rootFiles: string[] = [];
let appFiles: string[] = [];
const alone = join(work, 'alone');
const appBin = join(consumer, 'node_modules', 'rabosh-memory-cli', 'dist', 'main.js');
/** The SDK version this repository tests against, installed beside the library as a user of memoryTool does. */
const sdk = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> }).devDependencies[
  '@anthropic-ai/sdk'
]!;

function emptyProject(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
}

beforeAll(() => {
  const packed = packTarballs(work);
  rootTarball = packed.rootTarball;
  rootFiles = packed.rootFiles;
  appFiles = packed.appFiles;

  emptyProject(alone);
  npm(['install', '--prefer-offline', '--no-save', '--ignore-scripts', rootTarball, packed.platformTarball], alone);
  emptyProject(consumer);
  npm(
    [
      'install',
      '--prefer-offline',
      '--no-save',
      '--ignore-scripts',
      rootTarball,
      packed.platformTarball,
      packed.appTarball,
      `@anthropic-ai/sdk@${sdk}`,
    ],
    consumer,
  );
});

afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('npm pack → install into a clean directory', () => {
  it('ships the facade, both builds, the loader and no addon binary', () => {
    for (const f of [
      'package.json',
      'LICENSE',
      'dist/esm/index.js',
      'dist/esm/index.d.ts',
      'dist/cjs/index.js',
      'dist/cjs/index.d.ts',
      'binding.cjs',
      'binding.d.cts',
    ]) {
      expect(rootFiles, f).toContain(f);
    }
    expect(rootFiles.filter((f) => f.endsWith('.node'))).toEqual([]);
    expect(rootFiles.filter((f) => /^(src|apps|crates|__test__)\//.test(f) || f.includes('/cli/') || f.includes('/mcp/'))).toEqual([]);
  });

  it('ships the app apart: its bin and the inspector page built beside its server', () => {
    const page = ['index.html', 'app.js', 'client.js', 'dom.js', 'style.css', 'icon.svg'].map((n) => `dist/inspector/page/${n}`);
    for (const f of ['package.json', 'dist/main.js', 'dist/mcp-serve.js', ...page]) expect(appFiles, f).toContain(f);
    expect(appFiles.filter((f) => f.startsWith('src/') || f.endsWith('.node'))).toEqual([]);
  });

  it('installs the library with nothing but its platform package', () => {
    // What is on disk, not what npm ls lists (it names the optional peer SDK, absent, too).
    const modules = join(alone, 'node_modules');
    expect(
      readdirSync(modules)
        .filter((n) => !n.startsWith('.'))
        .sort(),
    ).toEqual(['rabosh-memory', `rabosh-memory-${hostAbi()}`]);
    expect(existsSync(join(modules, 'rabosh-memory', 'node_modules'))).toBe(false);
    const code =
      "import('rabosh-memory').then((m) => m.RaboshMemoryToolHandler.open(process.argv[1]).then((h) => h.execute({ command: 'view', path: '/memories' }).then((r) => { console.log(r.text); return h.close(); })))";
    expect(node(['-e', code, join(work, 'alone-store')], alone)).toContain('/memories');
  });

  const roundTrip = (load: string) => `
    const dir = require('node:fs').mkdtempSync(require('node:path').join(require('node:os').tmpdir(), 'rabosh-consumer-'));
    const { RaboshMemoryToolHandler, MemoryPath, StoreLockedError } = ${load};
    (async () => {
      const h = await RaboshMemoryToolHandler.open(require('node:path').join(dir, 'store'), {});
      const created = await h.execute({ command: 'create', path: '/memories/x.md', file_text: 'hi' });
      const viewed = await h.execute({ command: 'view', path: '/memories/x.md' });
      await h.close();
      require('node:fs').rmSync(dir, { recursive: true, force: true });
      console.log(JSON.stringify([created.isError, viewed.text, MemoryPath.normalise('/memories/a/../b'), typeof StoreLockedError]));
    })().catch((e) => { console.error(e); process.exit(1); });`;
  const expected = JSON.stringify([
    false,
    "Here's the content of /memories/x.md with line numbers:\n     1\thi",
    '/memories/b',
    'function',
  ]);

  it('works with require() from CommonJS', () => {
    writeFileSync(join(consumer, 'cjs.cjs'), roundTrip("require('rabosh-memory')"));
    expect(node(['cjs.cjs']).trim()).toBe(expected);
  });

  it('works with import from ESM', () => {
    writeFileSync(
      join(consumer, 'esm.mjs'),
      "import { createRequire } from 'node:module';\nconst require = createRequire(import.meta.url);\nimport * as pkg from 'rabosh-memory';\n" +
        roundTrip('pkg'),
    );
    expect(node(['esm.mjs']).trim()).toBe(expected);
  });

  it("installs the app's rabosh-memory bin", () => {
    const bin = join(consumer, 'node_modules', '.bin', isWindows ? 'rabosh-memory.cmd' : 'rabosh-memory');
    const out = execFileSync(bin, ['--version'], { cwd: consumer, encoding: 'utf8', shell: isWindows });
    expect(out.trim()).toBe(JSON.parse(node(['-p', "JSON.stringify(require('rabosh-memory-cli/package.json').version)"])));
  });

  it("serves MCP from the installed bin, its SDK installed with it (the MCP SDK's client over stdio)", async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [appBin, 'mcp', join(work, 'mcp-store')],
      cwd: consumer,
      stderr: 'pipe',
    });
    const client = new Client({ name: 'shipping-pack', version: '0.0.0' });
    await client.connect(transport, { timeout: 120_000 });
    try {
      const r = await client.callTool({ name: 'memory', arguments: { command: 'create', path: '/memories/x.md', file_text: 'hi' } });
      expect(r.content).toEqual([{ type: 'text', text: 'File created successfully at: /memories/x.md' }]);
      expect((await client.listResources()).resources.map((x) => x.uri)).toEqual(['memory:///memories/x.md']);
    } finally {
      await client.close();
    }
  });

  it('serves the inspector page from the installed package', async () => {
    const store = join(work, 'ui-store');
    node([
      '-e',
      `require('rabosh-memory').RaboshMemoryToolHandler.open(${JSON.stringify(store)}).then((h) => h.execute({ command: 'create', path: '/memories/x.md', file_text: 'hi' }).then(() => h.close()))`,
    ]);
    const ui = await startUiWith({ cwd: consumer, bin: appBin }, store);
    try {
      for (const [rest, text] of [
        ['', 'rabosh-memory inspector'],
        ['app.js', 'EventSource'],
        ['api/children?path=%2Fmemories', 'x.md'],
      ] as const) {
        const r = await raw(ui.port, `/${ui.token}/${rest}`);
        expect(r.status, rest).toBe(200);
        expect(r.body, rest).toContain(text);
      }
    } finally {
      await stopUi(ui);
    }
  });

  it('type-checks a consumer with tsc --noEmit (ESM and CJS resolution)', () => {
    writeFileSync(
      join(consumer, 'use.mts'),
      `import { Rabosh, RaboshMemoryToolHandler, memoryTool, memoryResult, MemoryPath, StoreLockedError, type ToolOutput } from 'rabosh-memory';
const db: Rabosh = await Rabosh.open('dir', { durability: 'sync' });
const handler = new RaboshMemoryToolHandler(db, { scope: 'acme', maxMemoryBytes: 1 << 20 });
const out: ToolOutput = await handler.execute({ command: 'view', path: '/memories' });
const p: string | null = MemoryPath.normalise('/memories/x');
const tool = memoryTool(handler);
void [out, p, tool, memoryResult, StoreLockedError];
`,
    );
    writeFileSync(
      join(consumer, 'use.cts'),
      `import pkg = require('rabosh-memory');
export const opened: Promise<pkg.Rabosh> = pkg.Rabosh.open('dir');
`,
    );
    writeFileSync(
      join(consumer, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          noEmit: true,
          lib: ['ES2023', 'ESNext.Disposable'],
          types: ['node'],
          typeRoots: [join(root, 'node_modules', '@types')],
        },
        files: ['use.mts', 'use.cts'],
      }),
    );
    const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
    let output = '';
    try {
      output = node([tsc, '-p', 'tsconfig.json']);
    } catch (e) {
      output = String((e as { stdout?: string }).stdout ?? e);
    }
    expect(output).toBe('');
  });
});
