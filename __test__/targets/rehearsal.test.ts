// The release rehearsal (scripts/targets/rehearsal.mjs): all eight packages published as the
// release workflow publishes them, to a throwaway Verdaccio on 127.0.0.1, then installed BY NAME
// into empty apps: npm must pick this platform's package alone, and the addon must load and
// answer the contract; with --os/--cpu npm must pick the other platforms' packages.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error: plain ESM helpers of the build scripts, no type declarations.
import { installApp, npmExec, platformPackagesIn, publishAll, startRegistry } from '../../scripts/targets/rehearsal.mjs';
// @ts-expect-error: as above.
import { supportedNode } from '../../scripts/targets/foreign.mjs';

const root = resolve(import.meta.dirname, '..', '..');

type Registry = { url: string; npmrc: string; stop: () => Promise<void>; log: () => string };
let registry: Registry;
const apps: string[] = [];

beforeAll(async () => {
  registry = await startRegistry();
  const published = publishAll(registry);
  expect(Object.keys(published.optionalDependencies ?? {}).sort()).toEqual([
    'rabosh-memory-darwin-arm64',
    'rabosh-memory-darwin-x64',
    'rabosh-memory-linux-arm64-gnu',
    'rabosh-memory-linux-x64-gnu',
    'rabosh-memory-linux-x64-musl',
    'rabosh-memory-win32-x64-msvc',
  ]);
}, 600_000);

afterAll(async () => {
  for (const app of apps) rmSync(app, { recursive: true, force: true });
  await registry?.stop();
});

const CHECK = `
import { RaboshMemoryToolHandler } from 'rabosh-memory';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
const h = await RaboshMemoryToolHandler.open(join(mkdtempSync(join(tmpdir(), 'app-')), 'store'));
const out = [];
out.push(await h.execute({ command: 'create', path: '/memories/a.md', file_text: 'one\\ntwo' }));
out.push(await h.execute({ command: 'view', path: '/memories/a.md' }));
out.push(await h.execute({ command: 'view', path: '/memories/none.md' }));
out.push(await h.execute({ command: 'str_replace', path: '/memories/a.md', old_str: 'two', new_str: 'three' }));
out.push(await h.execute({ command: 'rename', old_path: '/memories/a.md', new_path: '/memories/b.md' }));
out.push(await h.execute({ command: 'view', path: '/memories' }));
await h.close();
console.log(JSON.stringify(out));
`;

describe('release rehearsal against a local registry', () => {
  it('installs rabosh-memory by name with only this platform package, and the addon answers the contract', () => {
    const app = installApp(registry, ['rabosh-memory', '@anthropic-ai/sdk@1.14.0']);
    apps.push(app);
    expect(platformPackagesIn(app)).toEqual(['rabosh-memory-linux-x64-gnu']);
    writeFileSync(join(app, 'check.mjs'), CHECK);
    const out = JSON.parse(execFileSync(supportedNode(22), ['check.mjs'], { cwd: app, encoding: 'utf8' }));
    expect(out).toEqual([
      { text: 'File created successfully at: /memories/a.md', isError: false },
      { text: "Here's the content of /memories/a.md with line numbers:\n     1\tone\n     2\ttwo", isError: false },
      {
        text: 'The path /memories/none.md does not exist. Please provide a valid path.',
        isError: true,
      },
      { text: expect.stringContaining('The memory file has been edited.'), isError: false },
      { text: 'Successfully renamed /memories/a.md to /memories/b.md', isError: false },
      { text: expect.stringContaining('/memories/b.md'), isError: false },
    ]);
  });

  it('installs the library alone by name: nothing but this platform package comes with it', () => {
    const app = installApp(registry, ['rabosh-memory']);
    apps.push(app);
    const modules = readdirSync(join(app, 'node_modules'))
      .filter((n) => !n.startsWith('.'))
      .sort();
    expect(modules).toEqual(['rabosh-memory', 'rabosh-memory-linux-x64-gnu']);
  });

  it('runs the app by name as npx does, and serves MCP from it over stdio', () => {
    expect(npmExec(registry, ['rabosh-memory-cli', '--version']).trim()).toBe(
      JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version,
    );
    const app = installApp(registry, ['rabosh-memory-cli']);
    apps.push(app);
    const store = join(app, 'store');
    const init = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'rehearsal', version: '0' } },
    };
    const call = {
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'memory', arguments: { command: 'create', path: '/memories/x.md', file_text: 'hi' } },
    };
    const input = `${[init, { jsonrpc: '2.0', method: 'notifications/initialized' }, call].map((m) => JSON.stringify(m)).join('\n')}\n`;
    const out = execFileSync(supportedNode(22), [join(app, 'node_modules', '.bin', 'rabosh-memory'), 'mcp', store], {
      cwd: app,
      input,
      encoding: 'utf8',
    });
    const answers = out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(answers.find((a) => a.id === 2)?.result?.content).toEqual([
      { type: 'text', text: 'File created successfully at: /memories/x.md' },
    ]);
  });

  it.each([
    { os: 'win32', cpu: 'x64', expected: 'rabosh-memory-win32-x64-msvc' },
    { os: 'darwin', cpu: 'arm64', expected: 'rabosh-memory-darwin-arm64' },
    { os: 'darwin', cpu: 'x64', expected: 'rabosh-memory-darwin-x64' },
    { os: 'linux', cpu: 'arm64', expected: 'rabosh-memory-linux-arm64-gnu' },
  ])('npm install --os=$os --cpu=$cpu picks $expected alone', ({ os, cpu, expected }) => {
    const app = installApp(registry, ['rabosh-memory'], { os, cpu });
    apps.push(app);
    expect(platformPackagesIn(app)).toEqual([expected]);
  });
});
