// `rabosh-memory sync` against the stand-in: the built CLI as a real process (--json, --dry-run,
// --prefix, the key from ANTHROPIC_API_KEY), and in process with a terminal-like stderr for the
// first sync's progress bar.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { Rabosh, RaboshMemoryToolHandler } from '../index.js';
import { run } from '../apps/cli/src/program.js';
import { MemoryStoresStandIn } from './fixtures/memory-stores-stand-in.js';
import { makeTempDir, removeDir } from './tmp-dir.js';

const bin = resolve(import.meta.dirname, '..', 'apps', 'cli', 'dist', 'main.js');

function cli(args: string[], env: Record<string, string | undefined>): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const p = spawn(process.execPath, [bin, ...args], { env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    p.on('close', (status) => done({ status, stdout, stderr }));
  });
}

let remote: MemoryStoresStandIn;
let dir: string;
beforeEach(async () => {
  remote = await new MemoryStoresStandIn().start();
  dir = makeTempDir('rabosh-sync-cli');
});
afterEach(async () => {
  await remote.close();
  removeDir(dir);
});

describe('rabosh-memory sync', () => {
  it('syncs with --json, --dry-run and --prefix; refuses a missing key', async () => {
    const h = await RaboshMemoryToolHandler.open(dir, { history: true });
    await h.put('/memories/team/a.md', 'a');
    await h.close();
    remote.put('/b.md', 'b');
    const env = { ANTHROPIC_API_KEY: 'test', ANTHROPIC_BASE_URL: remote.baseURL };
    const dry = await cli(['sync', dir, '--store', remote.storeId, '--prefix', 'team', '--dry-run', '--json'], env);
    expect(dry.status).toBe(0);
    expect(JSON.parse(dry.stdout)).toMatchObject({
      firstSync: true,
      pushed: [{ remotePath: '/a.md' }],
      pulled: [{ path: '/memories/team/b.md' }],
    });
    expect(remote.snapshot()).toEqual(new Map([['/b.md', 'b']]));
    const real = await cli(['sync', dir, '--store', remote.storeId, '--prefix', 'team'], env);
    expect(real.status).toBe(0);
    expect(real.stdout).toMatch(/^synced memstore_standin01 \(first sync\): 1 pushed, 1 pulled, 0 deleted, 0 conflicts, 0 skipped/);
    expect(real.stderr).not.toContain('\u001b'); // not a terminal: no bar
    expect(remote.snapshot()).toEqual(
      new Map([
        ['/a.md', 'a'],
        ['/b.md', 'b'],
      ]),
    );
    const noKey = await cli(['sync', dir, '--store', remote.storeId, '--json'], {
      ANTHROPIC_API_KEY: '',
      ANTHROPIC_BASE_URL: remote.baseURL,
    });
    expect(noKey.status).toBe(2);
    expect(JSON.parse(noKey.stderr).error.code).toBe('CLI_NO_API_KEY');
    const badStore = await cli(['sync', dir, '--store', 'not a store'], env);
    expect(badStore.status).toBe(2);
  });

  it('names a conflict carried over from a sync that never returned', async () => {
    const db = await Rabosh.open(dir, { history: true });
    const h = new RaboshMemoryToolHandler(db);
    const client = new Anthropic({ baseURL: remote.baseURL, apiKey: 'test' });
    await h.put('/memories/a.md', 'base a');
    await h.put('/memories/b.md', 'base b');
    await db.sync(client, { memoryStoreId: remote.storeId });
    await h.put('/memories/a.md', 'local a');
    await h.put('/memories/b.md', 'local b');
    remote.put('/a.md', 'remote a');
    // The conflict on a.md is resolved (pulled), then b.md's push fails the sync.
    remote.faults.push({ method: 'POST', url: '/memories/', kind: 500, times: 5 });
    await expect(db.sync(client, { memoryStoreId: remote.storeId, maxAttempts: 1 })).rejects.toThrow();
    remote.faults.length = 0;
    await db.close();
    const r = await cli(['sync', dir, '--store', remote.storeId], { ANTHROPIC_API_KEY: 'test', ANTHROPIC_BASE_URL: remote.baseURL });
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('1 conflicts');
    expect(r.stdout).toContain('conflict edit-edit /memories/a.md: remote wins; local edit kept as version');
    expect(r.stdout).toContain('(resolved by an earlier sync that never returned)');
  });

  it('draws a progress bar on the first sync only, on a terminal', async () => {
    for (let i = 0; i < 30; i++) remote.put(`/m${i}.md`, `m${i}`);
    const saved = { key: process.env['ANTHROPIC_API_KEY'], url: process.env['ANTHROPIC_BASE_URL'] };
    process.env['ANTHROPIC_API_KEY'] = 'test';
    process.env['ANTHROPIC_BASE_URL'] = remote.baseURL;
    try {
      const io = () => {
        const err: string[] = [];
        const out: string[] = [];
        return {
          err,
          out,
          io: { stdout: { write: (s: string) => out.push(s), isTTY: true }, stderr: { write: (s: string) => err.push(s), isTTY: true } },
        };
      };
      const first = io();
      expect(await run(['sync', dir, '--store', remote.storeId], first.io)).toBe(0);
      expect(first.err.join('')).toContain('first sync [');
      expect(first.out.join('')).toContain('30 pulled');
      remote.put('/m0.md', 'changed');
      const second = io();
      expect(await run(['sync', dir, '--store', remote.storeId], second.io)).toBe(0);
      expect(second.err.join('')).toBe('');
      expect(second.out.join('')).toContain('1 pulled');
    } finally {
      process.env['ANTHROPIC_API_KEY'] = saved.key;
      process.env['ANTHROPIC_BASE_URL'] = saved.url;
      if (saved.key === undefined) delete process.env['ANTHROPIC_API_KEY'];
      if (saved.url === undefined) delete process.env['ANTHROPIC_BASE_URL'];
    }
  });
});
