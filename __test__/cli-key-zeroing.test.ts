// The CLI zeroes every key it read from a key file once it is used: `rotate-key` reads two
// (the store's and the new one), every other command one (zeroed once the store is open, or its
// open refused), and none may stay in the process's memory for the rest of the command.
// In-process (`run`), with readKeyFile wrapped so the test sees the very buffers it returned.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it, vi } from 'vitest';

import { Rabosh, RaboshMemoryToolHandler } from '../index.js';
import { makeTempDir, removeDir } from './tmp-dir.js';

const returned: Buffer[] = [];
vi.mock('../apps/cli/src/keyfile.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../apps/cli/src/keyfile.js')>();
  return {
    ...real,
    readKeyFile: (path: string, flag?: string) => {
      const key = real.readKeyFile(path, flag);
      returned.push(key);
      return key;
    },
  };
});
const { run } = await import('../apps/cli/src/program.js');

let dir: string | undefined;
afterEach(() => {
  if (dir) removeDir(dir);
  dir = undefined;
  returned.length = 0;
});

it('rotate-key leaves both keys it read zeroed', async () => {
  dir = makeTempDir('rabosh-cli-zero-');
  const store = join(dir, 'store');
  const [oldKey, newKey] = [Buffer.alloc(32, 0x11), Buffer.alloc(32, 0x22)];
  writeFileSync(join(dir, 'old'), oldKey.toString('hex'));
  writeFileSync(join(dir, 'new'), newKey.toString('base64'));
  const h = await RaboshMemoryToolHandler.open(store, { encryption: { key: Buffer.from(oldKey) } });
  await h.execute({ command: 'create', path: '/memories/a.md', file_text: 'kept\n' });
  await h.close();

  const err: string[] = [];
  const io = { stdout: { write: () => true }, stderr: { write: (s: string) => err.push(s) } };
  const code = await run(['rotate-key', store, '--key-file', join(dir, 'old'), '--new-key-file', join(dir, 'new')], io);
  expect(err.join('')).toBe('');
  expect(code).toBe(0);
  expect(returned).toHaveLength(2);
  for (const key of returned) expect(key.every((b) => b === 0)).toBe(true);

  const db = await Rabosh.open(store, { create: false, encryption: { key: Buffer.from(newKey) } });
  const answer = await new RaboshMemoryToolHandler(db).execute({ command: 'view', path: '/memories/a.md' });
  expect(JSON.stringify(answer)).toContain('kept');
  await db.close();
});

async function encryptedStore(key: Buffer, history = false): Promise<string> {
  dir = makeTempDir('rabosh-cli-zero-');
  const store = join(dir, 'store');
  const h = await RaboshMemoryToolHandler.open(store, { history, encryption: { key: Buffer.from(key) } });
  await h.execute({ command: 'create', path: '/memories/a.md', file_text: 'kept\n' });
  await h.close();
  return store;
}

function cli(): { io: Parameters<typeof run>[1]; out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { stdout: { write: (s: string) => out.push(s) }, stderr: { write: (s: string) => err.push(s) } }, out, err };
}

// One command of each way the CLI opens a store (program.ts's withStore, history.ts's withHandler),
// and the store's keys are zeroed while the command still runs: after it, and after a refused open.
it.each([
  ['view', (store: string) => ['view', store, '/memories/a.md']],
  ['stats', (store: string) => ['stats', store]],
  ['history', (store: string) => ['history', store, '/memories/a.md']],
])('%s leaves the key it read zeroed', async (_name, argv) => {
  const key = Buffer.alloc(32, 0x33);
  const store = await encryptedStore(key, true);
  writeFileSync(join(dir!, 'key'), key.toString('hex'));
  const { io, out, err } = cli();
  const code = await run([...argv(store), '--key-file', join(dir!, 'key')], io);
  expect(err.join('')).toBe('');
  expect(code).toBe(0);
  expect(out.join('')).not.toBe('');
  expect(returned).toHaveLength(1);
  expect(returned[0]!.every((b) => b === 0)).toBe(true);
});

it('a refused open (wrong key) leaves the key it read zeroed too', async () => {
  const store = await encryptedStore(Buffer.alloc(32, 0x44));
  writeFileSync(join(dir!, 'key'), Buffer.alloc(32, 0x55));
  const { io, err } = cli();
  const code = await run(['view', store, '--key-file', join(dir!, 'key')], io);
  expect(code).not.toBe(0);
  expect(err.join('')).toMatch(/key/i);
  expect(returned).toHaveLength(1);
  expect(returned[0]!.every((b) => b === 0)).toBe(true);
});
