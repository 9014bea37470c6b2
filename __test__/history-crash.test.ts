// SIGKILL mid-command with history on: a child running the BUILT package is killed while it
// writes; the parent reopens the store and checks that history and the live state agree exactly
// — every live memory's current version exists and holds its content and path, and the view of
// the store rebuilt from the versions alone (at(now)) answers every directory and file view with
// the live store's strings. A mutation committed without its version, or a version without its
// mutation, would break one of the two.
// Knob: RABOSH_CRASH_ROUNDS (default 10 here).
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

import { RaboshMemoryToolHandler } from '../index.js';
import { makeTempDir, removeDir } from './tmp-dir.js';

const ROUNDS = Number(process.env.RABOSH_CRASH_ROUNDS ?? 10);
const script = join(import.meta.dirname, 'fixtures', 'crash-history.mjs');

function runAndKill(dir: string, after: number): Promise<{ acks: number; stderr: string; signal: string | null; alive: boolean }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, dir], { stdio: ['ignore', 'pipe', 'pipe'] });
    let acks = 0;
    let stderr = '';
    let alive = false;
    let partial = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout.on('data', (d: Buffer) => {
      partial += d.toString();
      const lines = partial.split('\n');
      partial = lines.pop()!;
      for (const _ of lines) {
        acks++;
        if (acks === after) {
          alive = child.exitCode === null && child.signalCode === null;
          child.kill('SIGKILL');
        }
      }
    });
    child.on('error', reject);
    child.on('close', (_code, signal) => resolve({ acks, stderr, signal, alive }));
  });
}

describe('SIGKILL mid-command with history on', () => {
  it(`${ROUNDS} rounds: history and the live state agree after every kill`, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const dir = makeTempDir('rabosh-crash-history');
      try {
        const run = await runAndKill(dir, 20 + Math.floor(Math.random() * 150));
        expect(run.stderr, `round ${round}`).toBe('');
        expect(run.alive, `round ${round}: killed while working`).toBe(true);
        expect(run.signal).toBe('SIGKILL');

        const h = await RaboshMemoryToolHandler.open(dir, { history: true });
        try {
          const live = await h.exportMemories();
          expect(live.length, `round ${round}`).toBeGreaterThan(0);
          for (const m of live) {
            const current = await h.get(m.path);
            expect(current?.versionId, `${m.path} has a current version`).toMatch(/^[0-9a-f]{32}$/);
            const v = await h.version(current!.versionId!);
            expect(v, `${m.path}: its version exists`).not.toBeNull();
            expect([v!.path, v!.content, v!.contentSha256]).toEqual([m.path, m.content, current!.contentSha256]);
          }
          const past = await h.at(new Date(Date.now() + 60_000));
          const dirs = ['/memories', '/memories/d', '/memories/e', '/memories/host'];
          for (const path of [...dirs, ...live.map((m) => m.path)]) {
            const now = await h.execute({ command: 'view', path });
            expect(await past.execute({ command: 'view', path }), `round ${round}: ${path}`).toEqual(now);
          }
        } finally {
          await h.close();
        }
      } finally {
        removeDir(dir);
      }
    }
  });
});
