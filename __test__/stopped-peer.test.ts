// A stopped process must not freeze the others (issue 19, item 5). A holder of the shared
// store's commit lock is stopped (SIGSTOP) — here util-linux `flock` holding `WRITER`, as any
// process mid-commit would — after another Node process committed a memory this one has not
// read yet: views and listings answer at once from what is durable, including that memory; a
// create and an open fail with StoreBusyError naming the holder once `lockTimeout` passes; after
// SIGCONT and release everything goes on. Children load the built package, as a consumer would.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

import { Rabosh, RaboshMemoryToolHandler, StoreBusyError } from '../index.ts';
import { makeTempDir, removeDir } from './tmp-dir.ts';

const LOCK_TIMEOUT = 800;
const hasFlock = process.platform === 'linux' && spawnSync('flock', ['--version']).status === 0;

const dirs: string[] = [];
const running: ChildProcess[] = [];
afterEach(() => {
  for (const c of running.splice(0)) c.kill('SIGKILL');
  dirs.splice(0).forEach(removeDir);
});

/** Another Node process commits `/memories/peer.md` through the built package and exits. */
function peerCommits(dir: string): void {
  const script = `
    import { RaboshMemoryToolHandler } from 'rabosh-memory';
    const h = await RaboshMemoryToolHandler.open(${JSON.stringify(dir)});
    const r = await h.execute({ command: 'create', path: '/memories/peer.md', file_text: 'from the peer\\n' });
    if (r.isError) throw new Error(r.text);
    await h.close();`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
}

/** `flock` holding the store's commit lock until its stdin sends a line. */
async function holdWriter(dir: string): Promise<ChildProcess> {
  const holder = spawn('flock', [join(dir, 'WRITER'), '-c', 'echo HELD; read line'], { stdio: ['pipe', 'pipe', 'inherit'] });
  running.push(holder);
  const lines = createInterface({ input: holder.stdout! });
  await new Promise<void>((resolve) => lines.once('line', () => resolve()));
  return holder;
}

describe.skipIf(!hasFlock)('a stopped holder of the commit lock', () => {
  it('views and listings answer, creates and opens fail with StoreBusyError, all resumes after SIGCONT', async () => {
    const dir = makeTempDir('rabosh-stopped');
    dirs.push(dir);
    const db = await Rabosh.open(dir, { lockTimeout: LOCK_TIMEOUT });
    const handler = new RaboshMemoryToolHandler(db);
    await handler.execute({ command: 'create', path: '/memories/mine.md', file_text: 'mine\n' });
    peerCommits(dir);

    const holder = await holdWriter(dir);
    process.kill(holder.pid!, 'SIGSTOP');
    try {
      const listing = await handler.execute({ command: 'view', path: '/memories' });
      expect(listing.isError).toBe(false);
      expect(listing.text).toContain('peer.md');
      const view = await handler.execute({ command: 'view', path: '/memories/peer.md' });
      expect(view.text).toContain('from the peer');

      const started = Date.now();
      const create = handler.execute({ command: 'create', path: '/memories/later.md', file_text: 'x\n' });
      const err = await create.then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(StoreBusyError);
      const busy = err as StoreBusyError;
      expect(busy.code).toBe('RABOSH_STORE_BUSY');
      expect(busy.holder.pid).toBe(holder.pid);
      expect(busy.message).toContain(`pid ${holder.pid}`);
      expect(Date.now() - started).toBeGreaterThanOrEqual(LOCK_TIMEOUT - 50);

      await expect(Rabosh.open(dir, { lockTimeout: LOCK_TIMEOUT })).rejects.toBeInstanceOf(StoreBusyError);
      const still = await handler.execute({ command: 'view', path: '/memories/later.md' });
      expect(still.isError, 'the refused create did nothing').toBe(true);
    } finally {
      process.kill(holder.pid!, 'SIGCONT');
    }
    holder.stdin!.write('\n');
    await new Promise((resolve) => holder.once('close', resolve));
    const later = await handler.execute({ command: 'create', path: '/memories/later.md', file_text: 'x\n' });
    expect(later.isError, later.text).toBe(false);
    await db.close();
  });

  it('refuses a lockTimeout that is not a whole number of milliseconds', async () => {
    const dir = makeTempDir('rabosh-stopped');
    dirs.push(dir);
    for (const bad of [-1, 1.5, '100', Number.NaN, 2 ** 31]) {
      await expect(Rabosh.open(dir, { lockTimeout: bad as number })).rejects.toThrow(/invalid option lockTimeout/);
    }
  });
});
