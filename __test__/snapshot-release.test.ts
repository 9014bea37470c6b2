// Issue 33: a snapshot held in one process pins the segments another process retires (a
// compaction, a redaction's reclaim); released, it frees them at once — not at the holder's next
// read, which may never come. Checked on the holder's open descriptors (/proc, Linux).
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, readdirSync, readlinkSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterEach, expect, it } from 'vitest';

import { Rabosh, RaboshMemoryToolHandler } from '../index.js';
import { makeTempDir, removeDir } from './tmp-dir.js';

const CHILD = fileURLToPath(new URL('./fixtures/snapshot-holder.mjs', import.meta.url));
const dirs: string[] = [];
const running: ChildProcessWithoutNullStreams[] = [];
afterEach(() => {
  for (const c of running.splice(0)) c.kill('SIGKILL');
  dirs.splice(0).forEach(removeDir);
});

function holder(dir: string) {
  const proc = spawn(process.execPath, [CHILD, dir], { stdio: ['pipe', 'pipe', 'pipe'] });
  running.push(proc);
  const lines = createInterface({ input: proc.stdout })[Symbol.asyncIterator]();
  const ask = async (cmd: string) => {
    proc.stdin.write(`${cmd}\n`);
    const { value } = await lines.next();
    return value as string | undefined;
  };
  return { pid: proc.pid!, ask };
}

/** The deleted segment files of the store `dir` that process `pid` holds open. */
function deletedSegmentsOpen(pid: number, dir: string): string[] {
  const fds = `/proc/${pid}/fd`;
  return readdirSync(fds).flatMap((fd) => {
    try {
      const target = readlinkSync(`${fds}/${fd}`);
      return target.startsWith(dir) && target.includes('.seg') && target.endsWith('(deleted)') ? [target] : [];
    } catch {
      return []; // closed meanwhile
    }
  });
}

it.runIf(existsSync('/proc/self/fd'))('a snapshot released in another process frees the segments retired meanwhile', async () => {
  const dir = makeTempDir('rabosh-snap-release');
  dirs.push(dir);
  const db = await Rabosh.open(dir);
  const h = new RaboshMemoryToolHandler(db);
  await h.execute({ command: 'create', path: '/memories/a.md', file_text: 'old '.repeat(100) });
  const child = holder(dir);
  expect(await child.ask('SNAP')).toBe('SNAPPED');
  await h.execute({ command: 'delete', path: '/memories/a.md' });
  await db.compact();
  // The holder's snapshot keeps the retired segment readable: open there, deleted here.
  expect(deletedSegmentsOpen(child.pid, dir)).not.toEqual([]);
  expect(await child.ask('RELEASE')).toBe('RELEASED');
  expect(deletedSegmentsOpen(child.pid, dir)).toEqual([]);
  await child.ask('EXIT');
  await db.close();
});
