// The CLI's encryption (issue 21): --key-file in its three forms on the store commands,
// encrypt / decrypt / rotate-key, and SIGKILLs during `encrypt` at spread-out moments: the
// directory then opens with the old key (none) or the new one, never neither, and holds every
// memory either way.
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

import { EncryptionKeyRequiredError, NotEncryptedError, Rabosh, RaboshMemoryToolHandler } from '../index.js';
import { cli, json, seed } from './cli-harness.js';
import { makeTempDir, removeDir } from './tmp-dir.js';

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach(removeDir));

const KEY = Buffer.alloc(32, 0x5a);
const NEW = Buffer.alloc(32, 0xa5);

function setup(): { root: string; store: string; raw: string; hex: string; b64: string; fresh: string } {
  const root = makeTempDir('rabosh-cli-enc');
  dirs.push(root);
  const file = (name: string, data: string | Buffer) => {
    writeFileSync(join(root, name), data, { mode: 0o600 });
    return join(root, name);
  };
  return {
    root,
    store: join(root, 'store'),
    raw: file('raw.key', KEY),
    hex: file('hex.key', `${KEY.toString('hex')}\n`),
    b64: file('b64.key', `${KEY.toString('base64')}\r\n`),
    fresh: file('new.key', NEW.toString('hex')),
  };
}

/** The key that opens `dir`: 'plain', 'old' or 'new' (throws when none does). */
async function opener(dir: string, key: Buffer): Promise<'plain' | 'new'> {
  try {
    await (await Rabosh.open(dir, { create: false })).close();
    return 'plain';
  } catch (e) {
    if (!(e instanceof EncryptionKeyRequiredError)) throw e;
  }
  await (await Rabosh.open(dir, { create: false, encryption: { key } })).close();
  return 'new';
}

describe('rabosh-memory with --key-file', () => {
  it('reads the key as raw bytes, hex or base64 on every store command; refuses a bad file by its length', async () => {
    const t = setup();
    await seed(t.store, { '/memories/a.md': 'alpha' });
    expect(cli('encrypt', t.store, '--key-file', t.raw).status).toBe(0);
    for (const k of [t.raw, t.hex, t.b64]) {
      const r = cli('view', t.store, '/memories/a.md', '--key-file', k);
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout).toContain('alpha');
    }
    expect(json(cli('usage', t.store, '--json', '--key-file', t.hex))).toMatchObject({ memories: 1 });
    const none = cli('view', t.store, '--json');
    expect(none.status).toBe(1);
    expect(JSON.parse(none.stderr).error.code).toBe('RABOSH_KEY_REQUIRED');
    const wrong = cli('view', t.store, '--json', '--key-file', t.fresh);
    expect(JSON.parse(wrong.stderr).error.code).toBe('RABOSH_WRONG_KEY');
    const bad = join(t.root, 'bad.key');
    writeFileSync(bad, 'Z'.repeat(40));
    const refused = cli('view', t.store, '--key-file', bad);
    expect(refused.status).toBe(2);
    expect(refused.stderr).toContain('40 bytes');
    expect(refused.stderr).not.toContain('ZZZZ');
  });

  it('encrypts, rotates and decrypts a store directory', async () => {
    const t = setup();
    await seed(t.store, { '/memories/a.md': 'alpha', '/memories/d/b.md': 'bravo' });
    expect(cli('encrypt', t.store).status).toBe(2); // no --key-file
    expect(cli('encrypt', t.store, '--key-file', t.b64).status).toBe(0);
    await expect(Rabosh.open(t.store)).rejects.toBeInstanceOf(EncryptionKeyRequiredError);
    const again = cli('encrypt', t.store, '--key-file', t.b64, '--json');
    expect(again.status).toBe(1);
    // Already encrypted: encrypt opens it as plain, which its key check refuses.
    expect(JSON.parse(again.stderr).error.code).toBe('RABOSH_KEY_REQUIRED');

    const r = cli('rotate-key', t.store, '--key-file', t.hex, '--new-key-file', t.fresh);
    expect(r.status, r.stderr).toBe(0);
    expect(cli('view', t.store, '--key-file', t.raw).status).toBe(1);
    expect(cli('view', t.store, '/memories/d/b.md', '--key-file', t.fresh).stdout).toContain('bravo');

    expect(cli('decrypt', t.store, '--key-file', t.fresh).status).toBe(0);
    const plain = await RaboshMemoryToolHandler.open(t.store, { create: false });
    expect(await plain.view({ command: 'view', path: '/memories/a.md' })).toContain('alpha');
    await plain.close();
    await expect(Rabosh.open(t.store, { encryption: { key: NEW } })).rejects.toBeInstanceOf(NotEncryptedError);
  });

  it('a SIGKILL at any moment of encrypt leaves the store opening with the old key or the new one, whole', async () => {
    const t = setup();
    const MEMORIES = 3000;
    const seeded = await RaboshMemoryToolHandler.open(t.store);
    await seeded.importMemories(
      Array.from({ length: MEMORIES }, (_, i) => ({ path: `/memories/d${i % 20}/m${i}.md`, content: `memory ${i} ${'x'.repeat(3000)}` })),
    );
    await seeded.close();
    const bin = resolve(import.meta.dirname, '..', 'apps', 'cli', 'dist', 'main.js');
    const encrypt = () => {
      const child = spawn(process.execPath, [bin, 'encrypt', t.store, '--key-file', t.raw], { stdio: 'ignore' });
      return { child, exited: new Promise<number | null>((r) => child.on('exit', (code) => r(code))) };
    };
    // One whole run measures how long encrypt takes here (Node's start-up included), so the
    // kills can be spread over it on a fast machine and a busy one alike.
    const started = Date.now();
    expect(await encrypt().exited).toBe(0);
    const whole = Date.now() - started;
    const outcomes: string[] = [];
    // Each run starts from the state the last one left, decrypting first when it is encrypted.
    for (let i = 0; i < 12; i++) {
      if ((await opener(t.store, KEY)) === 'new') expect(cli('decrypt', t.store, '--key-file', t.raw).status).toBe(0);
      const { child, exited } = encrypt();
      await new Promise((r) => setTimeout(r, Math.round((whole * (3 + i * 1.5)) / 10)));
      child.kill('SIGKILL');
      const code = await exited;
      const state = await opener(t.store, KEY);
      outcomes.push(`${code === null ? 'killed' : 'done'}:${state}`);
      const h = await RaboshMemoryToolHandler.open(t.store, { create: false, ...(state === 'new' ? { encryption: { key: KEY } } : {}) });
      expect((await h.usage()).memories).toBe(MEMORIES);
      expect(await h.view({ command: 'view', path: '/memories/d7/m7.md' })).toContain('memory 7 ');
      await h.close();
    }
    // Reported so a run shows where its kills fell (which depends on the machine's speed).
    console.log(`encrypt took ${whole} ms whole; kill outcomes: ${outcomes.join(' ')}`);
    expect(outcomes.length).toBe(12);
  });
});
