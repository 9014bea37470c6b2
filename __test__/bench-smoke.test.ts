// The benchmark at a tiny size: it must run end to end, fill every cell, and find every handler
// giving the same answers. No timing is asserted. Also a scripted differential run through ours
// and the benchmark's SQLite and LMDB alternatives, failure outcomes included, so the
// alternatives are known to speak the contract and not just its success strings.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blankDirectorySizes } from '../bench/agreement.js';
import { size as formatSize } from './fixtures/contract-model.js';
import { BACKENDS, runsMeasurement } from '../bench/handlers/registry.js';
import { ensurePeers, installedBuild } from '../bench/peers.js';
import { childCommand } from '../bench/runtimes.js';
import { transcript } from '../bench/transcript.js';
import type { BenchHandler } from '../bench/handlers/types.js';

const repo = resolve(import.meta.dirname, '..');
const scratch = mkdtempSync(join(tmpdir(), 'bench-smoke-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
// The SQLite alternative is installed under bench/peers/ on first use (a compile on a fresh clone):
// at -O0, since nothing here is timed; an optimised install serves as well.
beforeAll(() => void ensurePeers(undefined, 'quick'), 900_000);

/** `bench/run.ts` at scale 0.01, one run, with `env` over this process's (a key set to undefined is removed). */
function runBench(env: NodeJS.ProcessEnv, timeout?: number) {
  const merged: NodeJS.ProcessEnv = { ...process.env, ...env };
  for (const [k, v] of Object.entries(env)) if (v === undefined) delete merged[k];
  return spawnSync(process.execPath, ['--import', 'tsx', join(repo, 'bench', 'run.ts'), '--scale', '0.01', '--runs', '1'], {
    cwd: repo,
    env: merged,
    encoding: 'utf8',
    ...(timeout ? { timeout } : {}),
  });
}

/** What every checking run here sets: its own results and stores, SQLite compiled at -O0. */
const checking = (results: string) => ({
  RABOSH_BENCH_RESULTS: results,
  RABOSH_BENCH_DIR: scratch,
  RABOSH_BENCH_CLEANUP: 'wait',
  RABOSH_BENCH_PEERS: 'quick',
});

/** One peer per runtime and storage the agreement step must catch, and ours in the other runtimes. */
const SABOTAGED = ['sqlite', 'node-sqlite', 'bun-sqlite', 'lmdb-direct', 'rabosh-node24', 'rabosh-bun'];

describe('npm run bench at a tiny size', () => {
  it('runs every measurement for every handler and finds them agreeing', () => {
    const results = join(scratch, 'results');
    // Generous: on a 2-core box shared with other builds (load average 20+) the whole tiny run
    // took over 280 s (six handlers); only a hang should end it.
    const run = runBench(checking(results), 1_500_000);
    const report = JSON.parse(readFileSync(join(results, 'latest.json'), 'utf8')) as {
      machine: { versions: Record<string, string> };
      backends: { id: string }[];
      rows: {
        label: string;
        instance: string;
        floor: boolean;
        oursOnly?: boolean;
        unavailable?: string;
        cells: Record<string, { median: number }>;
      }[];
      mismatches: string[];
      failures: string[];
    };
    expect(report.failures).toEqual([]);
    expect(report.mismatches).toEqual([]);
    expect(run.status, run.stderr.slice(-3000)).toBe(0);
    expect(report.backends.map((b) => b.id)).toEqual([
      'rabosh',
      'rabosh-index',
      'rabosh-node24',
      'rabosh-bun',
      'sdk-fs',
      'sqlite',
      'sqlite-tuned',
      'node-sqlite',
      'bun-sqlite',
      'lmdb',
      'lmdb-direct',
    ]);
    for (const row of report.rows) {
      // A row this platform cannot measure (the busy-turn rows off Linux) must stay empty, never guessed.
      // Ours under Node 24 and Bun runs the reads and the open only (registry.ts `only`).
      const columns = BACKENDS.filter((b) => runsMeasurement(b, row.instance)).map((b) => b.id);
      const expected = row.unavailable ? [] : row.floor ? ['none'] : row.oursOnly ? ['rabosh'] : columns;
      expect(Object.keys(row.cells).sort(), row.label).toEqual([...expected].sort());
      for (const id of expected) expect(Number.isFinite(row.cells[id]!.median), `${row.label} ${id}`).toBe(true);
    }
    expect(report.rows.some((r) => r.instance.startsWith('read/') && r.cells['rabosh-bun'])).toBe(true);
    // An unoptimised SQLite says so wherever its figures go.
    if (installedBuild() === 'quick') expect(report.machine.versions['better-sqlite3']).toContain('-O0');
    expect(run.stdout).toContain('| measurement |');
    expect(run.stdout).toContain('| measurement | ours under Node 24');
    expect(readFileSync(join(results, 'latest.md'), 'utf8')).toContain('| measurement |');
  }, 1_560_000);

  it('keeps an unoptimised SQLite out of bench/results', () => {
    const run = runBench({ RABOSH_BENCH_PEERS: 'quick', RABOSH_BENCH_RESULTS: undefined });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('bench/results keeps optimised figures only');
  });

  it('exits non-zero when an alternative answers differently, in whichever runtime it runs', () => {
    const results = join(scratch, 'broken');
    const run = runBench(
      {
        ...checking(results),
        RABOSH_BENCH_BACKENDS: `rabosh,${SABOTAGED.join(',')}`,
        // The smallest read too: ours under Node 24 and Bun run the reads and the open only.
        RABOSH_BENCH_ONLY: 'durableWrites,read/flat-50-64',
        RABOSH_BENCH_SABOTAGE: SABOTAGED.join(','),
      },
      300_000,
    );
    const report = JSON.parse(readFileSync(join(results, 'latest.json'), 'utf8')) as { mismatches: string[]; failures: string[] };
    expect(report.failures).toEqual([]);
    for (const id of SABOTAGED)
      expect(
        report.mismatches.some((m) => m.includes(`: ${id} and rabosh differ`)),
        id,
      ).toBe(true);
    expect(run.status).toBe(1);
  }, 360_000);
});

describe('the alternatives speak the contract', () => {
  it('formats sizes with half-to-even tenths', () => {
    expect([0, 512, 1024, 1280, 1331, 4096, 1536 * 1024].map(formatSize)).toEqual(['0B', '512B', '1K', '1.2K', '1.3K', '4K', '1.5M']);
  });

  it('blanks only directory sizes when comparing with the SDK', () => {
    const listing =
      "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n" +
      '8K\t/memories\n4K\t/memories/a.md\n4K\t/memories/d/\n4K\t/memories/d/b.md';
    expect(blankDirectorySizes(listing).split('\n').slice(1)).toEqual([
      '<dir>\t/memories',
      '4K\t/memories/a.md',
      '<dir>\t/memories/d/',
      '4K\t/memories/d/b.md',
    ]);
    expect(blankDirectorySizes('File created successfully at: /memories/a')).toBe('File created successfully at: /memories/a');
  });

  it('answers a scripted session exactly like ours, failures included', async () => {
    const script: Array<Parameters<BenchHandler['view']>[0] | Record<string, unknown>> = [
      { command: 'view', path: '/memories' },
      { command: 'create', path: '/memories/notes/a.md', file_text: 'alpha\nbeta\ngamma\nbeta\n' },
      { command: 'create', path: '/memories/notes/a.md', file_text: 'again' },
      { command: 'create', path: '/memories', file_text: 'x' },
      { command: 'create', path: '/memoriesish/a.md', file_text: 'x' },
      { command: 'create', path: '/memories/notes/deep/er/c.md', file_text: 'c'.repeat(1280) },
      { command: 'create', path: '/memories/.hidden/h.md', file_text: 'secret' },
      { command: 'create', path: '/memories/notes', file_text: 'a file beside a directory' },
      { command: 'view', path: '/memories' },
      { command: 'view', path: '/memories/notes' },
      { command: 'view', path: '/memories/notes/a.md' },
      { command: 'view', path: '/memories/notes/a.md', view_range: [2, -1] },
      { command: 'view', path: '/memories/notes/a.md', view_range: [3, 2] },
      { command: 'view', path: '/memories/nope' },
      { command: 'view', path: '\\memories\\a' },
      { command: 'str_replace', path: '/memories/notes/a.md', old_str: 'beta', new_str: 'B' },
      { command: 'str_replace', path: '/memories/notes/a.md', old_str: 'zeta', new_str: 'B' },
      { command: 'str_replace', path: '/memories/notes/a.md', old_str: 'gamma', new_str: '$& $1' },
      { command: 'str_replace', path: '/memories/missing.md', old_str: 'a', new_str: 'b' },
      { command: 'insert', path: '/memories/notes/a.md', insert_line: 1, insert_text: 'inserted\n' },
      { command: 'insert', path: '/memories/notes/a.md', insert_line: 99, insert_text: 'x' },
      { command: 'insert', path: '/memories/notes/a.md', insert_line: 1.5, insert_text: 'x' },
      { command: 'view', path: '/memories/notes/a.md' },
      { command: 'rename', old_path: '/memories/notes', new_path: '/memories/notes/inner' },
      { command: 'rename', old_path: '/memories/notes', new_path: '/memories/.hidden' },
      { command: 'rename', old_path: '/memories/notes', new_path: '/memories/kept' },
      { command: 'rename', old_path: '/memories/notes', new_path: '/memories/again' },
      { command: 'rename', old_path: '/memories/', new_path: '/memories/x' },
      { command: 'view', path: '/memories' },
      { command: 'delete', path: '/memories/kept/deep' },
      { command: 'delete', path: '/memories/kept/deep' },
      { command: 'delete', path: '/memories/.' },
      { command: 'view', path: '/memories/kept' },
    ];
    const transcripts: Record<string, string[]> = {};
    const scriptFile = join(scratch, 'script.json');
    writeFileSync(scriptFile, JSON.stringify(script));
    const compared = BACKENDS.map((b) => b.id).filter((id) => id !== 'sdk-fs');
    for (const id of compared) {
      const dir = join(scratch, `script-${id}`);
      const runtime = BACKENDS.find((b) => b.id === id)!.runtime;
      if (!runtime) {
        transcripts[id] = await transcript(id, dir, script as Parameters<typeof transcript>[2]);
        continue;
      }
      // node:sqlite and bun:sqlite exist only in their own runtimes: the session runs there.
      const { exe, args } = childCommand(runtime);
      const r = spawnSync(exe, [...args, join(repo, 'bench', 'transcript.ts'), id, dir, scriptFile], {
        cwd: repo,
        encoding: 'utf8',
        timeout: 120_000,
      });
      expect(r.status, `${id}: ${r.stderr}`).toBe(0);
      transcripts[id] = JSON.parse(r.stdout) as string[];
    }
    for (const id of compared.slice(1)) {
      transcripts[id]!.forEach((answer, i) => {
        expect(answer, `${id}, step ${i}: ${JSON.stringify(script[i])}`).toBe(transcripts['rabosh']![i]);
      });
    }
  });
});
