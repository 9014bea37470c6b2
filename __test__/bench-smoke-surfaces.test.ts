// `npm run bench:surfaces` (bench/surfaces.ts) at 1,000 memories, one run: the MCP server, the
// sync and the inspector's page each measured end to end, every row filled. No timing is
// asserted; what is counted is: the walk's requests, and a sync's requests bounded by the
// changes it carries.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROWS, SURFACES } from '../bench/surfaces/plan.js';
import { chromiumPath } from './inspector-harness.js';

const repo = resolve(import.meta.dirname, '..');
const scratch = mkdtempSync(join(tmpdir(), 'bench-surfaces-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

interface Report {
  size: number;
  failures: string[];
  surfaces: Record<string, { metric: string; summary?: { median: number } }[]>;
}

describe('npm run bench:surfaces, at 1,000 memories', () => {
  it('measures MCP, sync and the inspector, every row filled', () => {
    const results = join(scratch, 'results');
    const args = ['--size', '1k', '--runs', '1', '--writes', '2', '--notify', '1'];
    const run = spawnSync(process.execPath, ['--import', 'tsx', join(repo, 'bench', 'surfaces.ts'), ...args], {
      cwd: repo,
      encoding: 'utf8',
      timeout: 600_000,
      env: { ...process.env, RABOSH_BENCH_RESULTS: results, RABOSH_BENCH_DIR: scratch, RABOSH_CHROMIUM: chromiumPath() },
    });
    expect(run.status, run.stderr.slice(-3000)).toBe(0);
    const report = JSON.parse(readFileSync(join(results, 'surfaces-1k.json'), 'utf8')) as Report;
    expect(report.failures).toEqual([]);
    expect(report.size).toBe(1000);
    expect(Object.keys(report.surfaces)).toEqual([...SURFACES]);
    const median = (surface: string, metric: string) => report.surfaces[surface]?.find((r) => r.metric === metric)?.summary?.median;
    for (const surface of SURFACES) {
      expect(report.surfaces[surface]!.map((r) => r.metric)).toEqual(ROWS[surface].map((r) => r.metric));
      for (const { metric } of ROWS[surface]) expect(Number.isFinite(median(surface, metric)), `${surface} ${metric}`).toBe(true);
    }
    // 500 memories a page, and the walk checked every memory came back.
    expect(median('mcp', 'walk_requests')).toBe(2);
    // Nothing to do: the hosted versions since the cursor, one request; 10 changes: about one each.
    expect(median('sync', 'idle_requests')).toBe(1);
    expect(median('sync', 'ten_requests')).toBeLessThanOrEqual(12);
    expect(readFileSync(join(results, 'surfaces-1k.md'), 'utf8')).toContain('| requests for every page | 2 |');
  }, 660_000);
});
