// The CLI's re-key (issue 33): `rotate-key --reencrypt` rewrites the store under a fresh data
// key (a copy of the old KEY file and the old key then open nothing), and a SIGKILL at any
// moment of it leaves the store opening with the old key or the new one, whole. Also: a
// `--key-file` that is not a regular file (a FIFO would block the open forever) is refused.
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

import { Rabosh, RaboshMemoryToolHandler, WrongKeyError } from '../index.js';
import { cli, json, seed } from './cli-harness.js';
import { makeTempDir, removeDir } from './tmp-dir.js';

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach(removeDir));

const OLD = Buffer.alloc(32, 0x41);
const NEW = Buffer.alloc(32, 0x42);
const bin = resolve(import.meta.dirname, '..', 'apps', 'cli', 'dist', 'main.js');

function setup(): { root: string; store: string; old: string; fresh: string } {
  const root = makeTempDir('rabosh-cli-rekey');
  dirs.push(root);
  writeFileSync(join(root, 'old.key'), OLD.toString('hex'), { mode: 0o600 });
  writeFileSync(join(root, 'new.key'), NEW.toString('base64'), { mode: 0o600 });
  return { root, store: join(root, 'store'), old: join(root, 'old.key'), fresh: join(root, 'new.key') };
}

/** Which key opens `dir`. */
async function opener(dir: string): Promise<'old' | 'new'> {
  try {
    await (await Rabosh.open(dir, { create: false, encryption: { key: OLD } })).close();
    return 'old';
  } catch (e) {
    if (!(e instanceof WrongKeyError)) throw e;
  }
  await (await Rabosh.open(dir, { create: false, encryption: { key: NEW } })).close();
  return 'new';
}

describe('rabosh-memory rotate-key --reencrypt', () => {
  it('re-keys a store directory: the new key opens it whole, the old KEY file with the old key opens nothing', async () => {
    const t = setup();
    await seed(t.store, { '/memories/a.md': 'alpha', '/memories/d/b.md': 'bravo' });
    expect(cli('encrypt', t.store, '--key-file', t.old).status).toBe(0);
    const leaked = readFileSync(join(t.store, 'KEY'));

    const r = cli('rotate-key', t.store, '--key-file', t.old, '--new-key-file', t.fresh, '--reencrypt', '--json');
    expect(r.status, r.stderr).toBe(0);
    expect(json(r)).toEqual({ rotated: true, reencrypted: true, dir: t.store });
    expect(JSON.parse(cli('view', t.store, '--json', '--key-file', t.old).stderr).error.code).toBe('RABOSH_WRONG_KEY');
    expect(cli('view', t.store, '/memories/d/b.md', '--key-file', t.fresh).stdout).toContain('bravo');

    const stolen = join(t.root, 'stolen');
    mkdirSync(stolen);
    for (const name of readdirSync(t.store)) copyFileSync(join(t.store, name), join(stolen, name));
    writeFileSync(join(stolen, 'KEY'), leaked);
    const attack = cli('view', stolen, '/memories/a.md', '--json', '--key-file', t.old);
    expect(attack.status).toBe(1);
    expect(JSON.parse(attack.stderr).error.code).toBe('RABOSH_CORRUPTION');
    expect(attack.stdout).not.toContain('alpha');

    // A PostgreSQL store is refused before anything is opened: it is re-keyed by export and import.
    const url = cli('rotate-key', 'postgres://localhost/x', '--key-file', t.old, '--new-key-file', t.fresh, '--reencrypt');
    expect(url.status).toBe(2);
    expect(url.stderr).toContain('rotate-key --reencrypt rewrites a store directory');
  });

  it('a SIGKILL at any moment of a re-key leaves the store opening with the old key or the new one, whole', async () => {
    const t = setup();
    const MEMORIES = 3000;
    const seeded = await RaboshMemoryToolHandler.open(t.store, { encryption: { key: OLD } });
    await seeded.importMemories(
      Array.from({ length: MEMORIES }, (_, i) => ({ path: `/memories/d${i % 20}/m${i}.md`, content: `memory ${i} ${'x'.repeat(3000)}` })),
    );
    await seeded.close();
    // From whichever key opens the store to the other one.
    const rekey = (from: 'old' | 'new') => {
      const [a, b] = from === 'old' ? [t.old, t.fresh] : [t.fresh, t.old];
      const child = spawn(process.execPath, [bin, 'rotate-key', t.store, '--key-file', a, '--new-key-file', b, '--reencrypt'], {
        stdio: 'ignore',
      });
      return { child, exited: new Promise<number | null>((r) => child.on('exit', (code) => r(code))) };
    };
    // One whole run measures how long a re-key takes here, so the kills spread over it on a fast
    // machine and a busy one alike.
    const started = Date.now();
    expect(await rekey('old').exited).toBe(0);
    const whole = Date.now() - started;
    const outcomes: string[] = [];
    // Most of a run is the copy, and the commit point is near its end: the kills fall from 40%
    // of a whole run to just past it, so some land after the swap.
    for (let i = 0; i < 12; i++) {
      const from = await opener(t.store);
      const { child, exited } = rekey(from);
      await new Promise((r) => setTimeout(r, Math.round((whole * (40 + i * 6)) / 100)));
      child.kill('SIGKILL');
      const code = await exited;
      const state = await opener(t.store);
      outcomes.push(`${code === null ? 'killed' : 'done'}:${from}->${state}`);
      const h = await RaboshMemoryToolHandler.open(t.store, { create: false, encryption: { key: state === 'old' ? OLD : NEW } });
      expect((await h.usage()).memories).toBe(MEMORIES);
      expect(await h.view({ command: 'view', path: '/memories/d7/m7.md' })).toContain('memory 7 ');
      expect(await h.view({ command: 'view', path: '/memories/d19/m2999.md' })).toContain('memory 2999 ');
      await h.close();
    }
    // Reported so a run shows where its kills fell (which depends on the machine's speed).
    console.log(`re-key took ${whole} ms whole; kill outcomes: ${outcomes.join(' ')}`);
    expect(outcomes.length).toBe(12);
  });
});

describe('--key-file that is not a regular file', () => {
  it.skipIf(process.platform === 'win32')('is refused at once: a FIFO, a directory, a device', async () => {
    const t = setup();
    await seed(t.store, { '/memories/a.md': 'alpha' });
    const fifo = join(t.root, 'key.fifo');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    // Bounded: a CLI that opened the FIFO for reading would wait for a writer forever.
    const run = (path: string) =>
      spawnSync(process.execPath, [bin, 'view', t.store, '--key-file', path], { encoding: 'utf8', timeout: 20_000 });
    const r = run(fifo);
    expect(r.signal, 'the CLI blocked on the FIFO').toBeNull();
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('is a FIFO, not a regular file');
    const newKey = spawnSync(process.execPath, [bin, 'rotate-key', t.store, '--key-file', fifo, '--new-key-file', fifo], {
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(newKey.signal).toBeNull();
    expect(newKey.stderr).toContain('FIFO');
    expect(run(t.root).stderr).toContain('is a directory, not a regular file');
    expect(run('/dev/zero').stderr).toContain('is a device, not a regular file');
  });
});
