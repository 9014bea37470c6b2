// The scale run (`npm run bench -- --scale 1m`) at 1,000 memories: the same code path as the
// million, every row filled for every side, every side answering alike. No timing is asserted.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensurePeers } from '../bench/peers.js';

const repo = resolve(import.meta.dirname, '..');
const scratch = mkdtempSync(join(tmpdir(), 'bench-scale-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
beforeAll(() => void ensurePeers(undefined, 'quick'), 900_000);

/** The rows a scale run must produce: the first-look table (issue 36). */
const ROWS = [
  'import_s',
  'import_chunk_ratio',
  'import_peak_mib',
  'disk_mib',
  'open_view_ms',
  'rss_view_mib',
  'open_list_ms',
  'rss_list_mib',
  'open_root_ms',
  'warm_root_ms',
  'warm_dir1k_ms',
  'rss_end_mib',
  'create_ms',
];
const SIDES = ['rabosh-index', 'sqlite', 'lmdb'];

describe('npm run bench -- --scale 1m, at 1,000 memories', () => {
  it('fills every row for ours, SQLite and LMDB, all answering alike', () => {
    const results = join(scratch, 'results');
    const run = spawnSync(process.execPath, ['--import', 'tsx', join(repo, 'bench', 'run.ts'), '--scale', '1m', '--runs', '1'], {
      cwd: repo,
      encoding: 'utf8',
      timeout: 600_000,
      env: {
        ...process.env,
        RABOSH_BENCH_SIZES: '1000',
        // SQLite+ shares SQLite's store and scenarios: left out to keep the test short.
        RABOSH_BENCH_BACKENDS: SIDES.join(','),
        RABOSH_BENCH_RESULTS: results,
        RABOSH_BENCH_DIR: scratch,
        RABOSH_BENCH_CLEANUP: 'wait',
        RABOSH_BENCH_PEERS: 'quick',
      },
    });
    expect(run.status, run.stderr.slice(-3000)).toBe(0);
    const report = JSON.parse(readFileSync(join(results, 'scale-1k.json'), 'utf8')) as {
      size: number;
      rows: { metric: string; cells: Record<string, { median: number }> }[];
      mismatches: string[];
      failures: string[];
    };
    expect(report.failures).toEqual([]);
    expect(report.mismatches).toEqual([]);
    expect(report.size).toBe(1000);
    expect(report.rows.map((r) => r.metric)).toEqual(ROWS);
    for (const row of report.rows) {
      expect(Object.keys(row.cells).sort(), row.metric).toEqual([...SIDES].sort());
      for (const side of SIDES) expect(Number.isFinite(row.cells[side]!.median), `${row.metric} ${side}`).toBe(true);
    }
    expect(readFileSync(join(results, 'scale-1k.md'), 'utf8')).toContain('| open + first listing of a 100-file directory |');
  }, 660_000);

  it('refuses a size that is not a multiple of 1,000', () => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', join(repo, 'bench', 'run.ts'), '--scale', '1m'], {
      cwd: repo,
      encoding: 'utf8',
      env: { ...process.env, RABOSH_BENCH_SIZES: '1500', RABOSH_BENCH_BACKENDS: 'rabosh-index', RABOSH_BENCH_DIR: scratch },
    });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('RABOSH_BENCH_SIZES');
  });
});
