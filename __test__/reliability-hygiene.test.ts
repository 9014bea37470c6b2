// Resource hygiene: opening and closing a store many times leaks no file descriptor and no
// unbounded memory, and a closed store's directory can be removed and made again.
//
// Knob: RABOSH_FD_ROUNDS (default 1,000).
import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';

import { Rabosh, RaboshMemoryToolHandler } from '../index.ts';
import { makeTempDir, removeDir } from './tmp-dir.ts';

const ROUNDS = Number(process.env['RABOSH_FD_ROUNDS'] ?? 1_000);
const WARMUP = 50;
const RSS_BOUND = 50 * 1024 * 1024;
// A leak of one descriptor per open would be hundreds; a few may come and go with the runtime.
const FD_SLACK = 4;

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach(removeDir));

const onLinux = process.platform === 'linux';

/** Open descriptors of this process (Linux), else the count of live libuv resources. */
function handles(): number {
  return onLinux ? readdirSync('/proc/self/fd').length : process.getActiveResourcesInfo().length;
}

function settle(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

/** One cycle: open, write and read a memory, close — alternating a host-owned and an owned store. */
async function cycle(dir: string, i: number): Promise<void> {
  const path = `/memories/r/${i % 50}`;
  if (i % 2 === 0) {
    const db = await Rabosh.open(dir, { durability: 'buffered' });
    const h = new RaboshMemoryToolHandler(db, { createOverwrites: true });
    expect((await h.execute({ command: 'create', path, file_text: `round ${i}\n${'x'.repeat(1000)}` })).isError).toBe(false);
    expect((await h.execute({ command: 'view', path })).isError).toBe(false);
    await h.close();
    await db.close();
  } else {
    const h = await RaboshMemoryToolHandler.open(dir, { durability: 'buffered', createOverwrites: true });
    expect((await h.execute({ command: 'create', path, file_text: `round ${i}` })).isError).toBe(false);
    expect((await h.execute({ command: 'view', path: '/memories' })).isError).toBe(false);
    await h.close();
  }
}

describe('resource hygiene', () => {
  it(`open/close ${ROUNDS} times: no descriptor growth, bounded memory, directory removable`, async () => {
    const dir = makeTempDir('rabosh-hygiene');
    dirs.push(dir);
    for (let i = 0; i < Math.min(WARMUP, ROUNDS); i++) await cycle(dir, i);
    settle();
    const fdBefore = handles();
    const rssBefore = process.memoryUsage().rss;
    let peakFd = fdBefore;
    for (let i = WARMUP; i < WARMUP + ROUNDS; i++) {
      await cycle(dir, i);
      if (i % 100 === 0) peakFd = Math.max(peakFd, handles());
    }
    settle();
    const fdAfter = handles();
    const rssAfter = process.memoryUsage().rss;
    console.log(
      `hygiene: ${ROUNDS} open/close cycles; ${onLinux ? 'fds' : 'active resources'} ${fdBefore} → ${fdAfter} (peak ${peakFd}); ` +
        `rss ${(rssBefore / 2 ** 20).toFixed(1)} → ${(rssAfter / 2 ** 20).toFixed(1)} MiB`,
    );
    expect(fdAfter - fdBefore, 'descriptors after vs before').toBeLessThanOrEqual(FD_SLACK);
    expect(peakFd - fdBefore, 'descriptors never pile up during the loop').toBeLessThanOrEqual(FD_SLACK);
    expect(rssAfter - rssBefore, 'RSS growth').toBeLessThan(RSS_BOUND);

    // Closed: nothing holds the directory, so it can go, and a store can be made there again.
    rmSync(dir, { recursive: true });
    expect(existsSync(dir)).toBe(false);
    mkdirSync(dir);
    const h = await RaboshMemoryToolHandler.open(dir);
    expect(await h.usage()).toEqual({ memories: 0, bytes: 0 });
    expect(await h.execute({ command: 'create', path: '/memories/again', file_text: 'fresh' })).toEqual({
      text: 'File created successfully at: /memories/again',
      isError: false,
    });
    await h.close();
    rmSync(dir, { recursive: true });
    // And without making it first: open creates the directory.
    const again = await Rabosh.open(dir);
    await again.close();
    expect(existsSync(dir)).toBe(true);
  });
});
