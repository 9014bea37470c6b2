// The README's main job: `npm run example` must run the conversation offline (no API key) and exit 0.
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { cli } from './cli-harness.js';
import { removeDir } from './tmp-dir.js';

const root = join(import.meta.dirname, '..');

describe('examples/conversation.ts', () => {
  it('runs against the local stand-in without an API key, says so first, and exits 0', () => {
    const env = { ...process.env };
    delete env.ANTHROPIC_API_KEY;
    const r = spawnSync(process.execPath, [join(root, 'node_modules/tsx/dist/cli.mjs'), 'examples/conversation.ts'], {
      cwd: root,
      env,
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines[0]).toBe('LOCAL STAND-IN of the Messages API (no ANTHROPIC_API_KEY set) — scripted replies, not a real model');
    expect(r.stdout).toContain(
      '  ← result (is_error: true):\n      The path /memories/user.md does not exist. Please provide a valid path.',
    );
    expect(r.stdout).toContain('  ← result:\n      File created successfully at: /memories/user.md');
    expect(r.stdout).toContain('\nstored: 1 memory, 79 bytes\n');
    // The store outlives the example, and the lines it ends with are commands that show it.
    const kept =
      /\nThe store is kept at (.+)\. Look at it with:\n {2}npx rabosh-memory view (.+) \/memories\/user\.md\n {2}npx rabosh-memory usage (.+)\n$/.exec(
        r.stdout,
      );
    expect(kept, r.stdout).not.toBeNull();
    const dir = kept![1]!;
    try {
      expect(existsSync(dir)).toBe(true);
      expect(kept![2]).toBe(kept![3]);
      const view = cli('view', dir, '/memories/user.md');
      expect(view.status).toBe(0);
      expect(view.stdout).toContain('- Project: a storage engine in Rust');
      expect(cli('usage', dir).stdout).toBe('1 memory, 79 B (79 bytes)\n');
    } finally {
      removeDir(dir);
    }
  });
});
