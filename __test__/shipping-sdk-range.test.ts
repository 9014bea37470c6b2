// The SDK is a peer dependency: the host app's copy is the one used. The oldest and the newest
// version of the declared range (the peer range's lower bound, and the exact pin the repo tests
// with) are each installed into a scratch app together with the packed package, and the app runs
// the real tool runner against the local stand-in of the Messages API, from ESM and CommonJS.
// Then two copies meet: the runner from the SDK's CommonJS build while this package loads its
// ESM build, and an older SDK nested under this package (what an exact pin in `dependencies`
// used to produce). The tool_result text and is_error must be the contract's in every case.
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryCall, startStandIn, say, toolResults } from '../examples/stand-in-server.js';
import { MIN_SDK_VERSION } from '../src/sync/remote.js';
import { MemoryStoresStandIn } from './fixtures/memory-stores-stand-in.js';
import { npm } from './npm-cli.js';
import { packTarballs, type Packed } from './packed.js';

const root = resolve(import.meta.dirname, '..');
const work = mkdtempSync(join(tmpdir(), 'rabosh-sdk-range-'));
const run = promisify(execFile);
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  peerDependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};
const oldest = /^>=(\d+\.\d+\.\d+) /.exec(manifest.peerDependencies['@anthropic-ai/sdk']!)![1]!;
const newest = manifest.devDependencies['@anthropic-ai/sdk']!;
const ZOD = '4.6.7';
let packed: Packed;

beforeAll(() => {
  packed = packTarballs(work);
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

function app(sdk: string): string {
  // A space in the path, as in many home directories: the runner's SDK copy is found by its path.
  const dir = join(work, `app on ${sdk}`);
  if (existsSync(join(dir, 'node_modules', 'rabosh-memory'))) return dir;
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: `app-${sdk}`, private: true }));
  // SDK 0.72.0's root module loads `zod`, an optional peer of its own (0.73.0 stopped that), so an
  // app on it has zod installed; the same for every version keeps the apps alike.
  npm(
    [
      'install',
      '--prefer-offline',
      '--no-save',
      '--ignore-scripts',
      packed.rootTarball,
      packed.platformTarball,
      `@anthropic-ai/sdk@${sdk}`,
      `zod@${ZOD}`,
    ],
    dir,
  );
  return dir;
}

// The app's script: `load` brings in Anthropic and the package; then one conversation.
const script = (load: string) => `${load}
(async () => {
  const memory = await RaboshMemoryToolHandler.open(process.argv[2]);
  try {
    const client = new Anthropic({ baseURL: process.env.STAND_IN, apiKey: 'test', maxRetries: 0 });
    await client.beta.messages.toolRunner({
      model: 'claude-sonnet-5-5',
      max_tokens: 256,
      messages: [{ role: 'user', content: 'go' }],
      tools: [memoryTool(memory)],
    });
  } finally {
    await memory.close();
  }
})().catch((e) => { console.error(e); process.exit(1); });
`;
const flavours: Record<string, string> = {
  esm: `import Anthropic from '@anthropic-ai/sdk';\nimport { RaboshMemoryToolHandler, memoryTool } from 'rabosh-memory';`,
  cjs: `const Anthropic = require('@anthropic-ai/sdk').default;\nconst { RaboshMemoryToolHandler, memoryTool } = require('rabosh-memory');`,
  // two copies: the SDK's CommonJS build runs the tool, this package's ESM build loaded the ESM one
  'runner-cjs': `import { createRequire } from 'node:module';\nimport { RaboshMemoryToolHandler, memoryTool } from 'rabosh-memory';\nconst Anthropic = createRequire(import.meta.url)('@anthropic-ai/sdk').default;`,
  // two copies the other way round: the ESM build runs the tool, this package's CommonJS build loaded the CommonJS one
  'runner-esm': `import { createRequire } from 'node:module';\nimport Anthropic from '@anthropic-ai/sdk';\nconst { RaboshMemoryToolHandler, memoryTool } = createRequire(import.meta.url)('rabosh-memory');`,
};

async function converse(dir: string, flavour: string): Promise<void> {
  const steps: Array<[Record<string, unknown>, string, boolean]> = [
    [{ command: 'create', path: '/memories/a.md', file_text: 'A' }, 'File created successfully at: /memories/a.md', false],
    [{ command: 'create', path: '/memories/a.md', file_text: 'B' }, 'Error: File /memories/a.md already exists', true],
    [{ command: 'view', path: '/memories/none' }, 'The path /memories/none does not exist. Please provide a valid path.', true],
    [
      { command: 'str_replace', path: '/memories/a.md', old_str: 'zzz', new_str: 'q' },
      'No replacement was performed, old_str `zzz` did not appear verbatim in /memories/a.md.',
      true,
    ],
  ];
  const calls = steps.map(([input]) => memoryCall(input));
  const standIn = await startStandIn([...calls.map((c) => ({ content: [c] })), { content: [say('Done.')] }]);
  const file = join(dir, `${flavour}-${Math.random().toString(36).slice(2)}.${flavour === 'cjs' ? 'cjs' : 'mjs'}`);
  writeFileSync(file, script(flavours[flavour]!));
  try {
    await run(process.execPath, [file, join(mkdtempSync(join(work, 'store-')), 's')], {
      cwd: dir,
      env: { ...process.env, STAND_IN: standIn.baseURL },
    });
  } finally {
    await standIn.close();
  }
  for (const [i, [, text, isError]] of steps.entries()) {
    const results = toolResults(standIn.requests[i + 1]);
    // byte-exact, and is_error present exactly on failures
    expect(results, `step ${i}`).toEqual([
      { type: 'tool_result', tool_use_id: calls[i]!.id, content: text, ...(isError ? { is_error: true } : {}) },
    ]);
  }
}

// The library guide's hand-driven loop, the first \`\`\`ts block under its heading, exactly as a reader pastes it.
function readmeLoop(): string {
  const guide = readFileSync(join(root, 'docs', 'guide', 'library.md'), 'utf8');
  const section = guide.slice(guide.indexOf('\n## The hand-driven loop\n'));
  const block = /\n```ts\n([\s\S]*?)\n```\n/.exec(section);
  if (!block) throw new Error('docs/guide/library.md has no ```ts block under "## The hand-driven loop"');
  return `${block[1]}\n`;
}

// Compiled by this repo's TypeScript in the app, with the settings of TypeScript 5.9's `tsc --init`
// (strict, nodenext, esnext, no ambient types) but checking the libraries' declarations too. The
// imports resolve to the app's SDK and the packed package's declarations. Then it runs against the stand-in with the reader's setup
// (ANTHROPIC_API_KEY; the base URL from the environment, which the SDK reads by itself).
async function pastedLoop(dir: string): Promise<void> {
  const at = mkdtempSync(join(dir, 'loop-'));
  writeFileSync(join(at, 'loop.mts'), readmeLoop());
  writeFileSync(
    join(at, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: { strict: true, module: 'nodenext', target: 'esnext', types: [], outDir: 'out' },
      files: ['loop.mts'],
    }),
  );
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  const checked = await run(process.execPath, [tsc, '-p', at], { cwd: at }).catch((e: { stdout: string }) => ({
    stdout: e.stdout,
    failed: true,
  }));
  expect(checked.stdout).toBe('');
  expect('failed' in checked).toBe(false);
  const call = memoryCall({ command: 'create', path: '/memories/prefs.md', file_text: 'short answers' });
  const standIn = await startStandIn([{ content: [call] }, { content: [say('Noted.')] }]);
  try {
    await run(process.execPath, [join(at, 'out', 'loop.mjs')], {
      cwd: at,
      env: { ...process.env, ANTHROPIC_BASE_URL: standIn.baseURL, ANTHROPIC_API_KEY: 'test' },
    });
  } finally {
    await standIn.close();
  }
  expect(standIn.requests).toHaveLength(2);
  expect(toolResults(standIn.requests[1])).toEqual([
    { type: 'tool_result', tool_use_id: call.id, content: 'File created successfully at: /memories/prefs.md' },
  ]);
}

function installedSdk(dir: string, under = ''): string {
  return (JSON.parse(readFileSync(join(dir, under, 'node_modules', '@anthropic-ai', 'sdk', 'package.json'), 'utf8')) as { version: string })
    .version;
}

describe.each([[oldest], [newest]])('the packed package in an app on @anthropic-ai/sdk %s', (sdk) => {
  it('uses the app’s SDK: one copy, the version the app installed', () => {
    const dir = app(sdk);
    expect(installedSdk(dir)).toBe(sdk);
    expect(existsSync(join(dir, 'node_modules', 'rabosh-memory', 'node_modules', '@anthropic-ai'))).toBe(false);
  });

  it('the library guide’s hand-driven loop type-checks and runs as pasted', async () => {
    await pastedLoop(app(sdk));
  });

  it('db.sync with this client: refused by name below the first SDK with memoryStores, else syncs', async () => {
    const dir = app(sdk);
    const hosted = await new MemoryStoresStandIn().start();
    const file = join(dir, `sync-${Math.random().toString(36).slice(2)}.mjs`);
    writeFileSync(
      file,
      `import Anthropic from '@anthropic-ai/sdk';
import { Rabosh } from 'rabosh-memory';
const db = await Rabosh.open(process.argv[2], { history: true });
try {
  const r = await db.sync(new Anthropic({ baseURL: process.env.HOSTED, apiKey: 'test' }), { memoryStoreId: process.env.STORE });
  console.log(JSON.stringify({ pulled: r.pulled.length }));
} catch (e) {
  console.log(JSON.stringify({ code: e.code, message: e.message }));
} finally {
  await db.close();
}
`,
    );
    try {
      hosted.put('/a.md', 'a');
      const out = await run(process.execPath, [file, mkdtempSync(join(work, 'sync-store-'))], {
        cwd: dir,
        env: { ...process.env, HOSTED: hosted.baseURL, STORE: hosted.storeId },
      });
      const answer = JSON.parse(out.stdout) as { pulled?: number; code?: string; message?: string };
      const [major, minor] = sdk.split('.').map(Number) as [number, number];
      if (major === 0 && minor < 91) {
        expect(answer.code).toBe('RABOSH_UNSUPPORTED');
        expect(answer.message).toContain(`@anthropic-ai/sdk ${MIN_SDK_VERSION} or later`);
      } else expect(answer).toEqual({ pulled: 1 });
    } finally {
      await hosted.close();
    }
  });

  for (const flavour of Object.keys(flavours)) {
    it(`the real tool runner gets the documented text and is_error (${flavour})`, async () => {
      await converse(app(sdk), flavour);
    });
  }
});

it('README says the oldest SDK needs zod, which its root module loads', () => {
  expect(readFileSync(join(root, 'README.md'), 'utf8')).toContain(`npm install @anthropic-ai/sdk@${oldest} zod`);
});

describe('an older SDK nested under the package, the newest in the app', () => {
  it('the runner still gets the documented text and is_error', async () => {
    const dir = app(newest);
    const nested = join(dir, 'node_modules', 'rabosh-memory', 'node_modules', '@anthropic-ai', 'sdk');
    cpSync(join(app(oldest), 'node_modules', '@anthropic-ai', 'sdk'), nested, { recursive: true });
    try {
      expect(installedSdk(dir, join('node_modules', 'rabosh-memory'))).toBe(oldest);
      for (const flavour of Object.keys(flavours)) await converse(dir, flavour);
    } finally {
      rmSync(join(dir, 'node_modules', 'rabosh-memory', 'node_modules'), { recursive: true, force: true });
    }
  });
});
