// The section of docs/performance.md on the surfaces around the store (MCP, sync, the
// inspector), from the surfaces runs' results (bench/results/surfaces-<size>.json, written by
// `npm run bench:surfaces`): one table, a column per store size, each cell the run's median with
// the range of its runs, and where each column comes from with the machine's load.

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const TITLES = { mcp: 'MCP server', sync: 'sync (incremental)', inspector: 'inspector page' };

/** The surfaces runs under `dir`, smallest store first. */
export function surfacesRuns(dir) {
  const results = join(dir, 'bench', 'results');
  if (!existsSync(results)) return [];
  return readdirSync(results)
    .filter((f) => /^surfaces-\d+[km]\.json$/.test(f))
    .map((file) => ({ file, ...JSON.parse(readFileSync(join(results, file), 'utf8')) }))
    .sort((a, b) => a.size - b.size);
}

function fmt(x) {
  if (Number.isInteger(x)) return x.toLocaleString('en-US');
  return x >= 100 ? Math.round(x).toLocaleString('en-US') : x >= 10 ? x.toFixed(1) : x.toPrecision(2);
}

function cell(row) {
  const s = row?.summary;
  if (s === undefined) return '—';
  const unit = row.unit ? ` ${row.unit}` : '';
  return s.min === s.max ? `${fmt(s.median)}${unit}` : `${fmt(s.median)}${unit} (${fmt(s.min)}–${fmt(s.max)})`;
}

const sizeLabel = (n) => (n % 1_000_000 === 0 ? `${n / 1_000_000}M` : `${n / 1_000}k`);

/** The section's lines (none without a run). */
export function surfacesSection(dir) {
  const runs = surfacesRuns(dir);
  if (runs.length === 0) return [];
  const lines = [
    '',
    '## MCP, sync and the inspector against store size',
    '',
    "`npm run bench:surfaces -- --size 100k` (or `1m`) writes `bench/results/surfaces-<size>.{md,json}`: on a store of the scale run's shape, " +
      'the MCP server driven by the official SDK client (the first `resources/list` page, every page by cursor, the notifications of another ' +
      "process's writes, which wait for the server's next look: every second by default), `db.sync` against the stand-in of the hosted API (requests and time, with nothing to do and with 10 changes), and the " +
      "inspector's page in chromium (bench/inspector-page.mjs; its longest task counts only tasks over the browser's 50 ms long-task threshold, so 0 is none). Each run is a fresh process; cells are the median over runs (min–max). " +
      'How each row is taken: [bench/README.md](../bench/README.md).',
    '',
    `| | ${runs.map((r) => sizeLabel(r.size)).join(' | ')} |`,
    `|---|${runs.map(() => '---:').join('|')}|`,
  ];
  const surfaces = [...new Set(runs.flatMap((r) => Object.keys(r.surfaces)))];
  for (const surface of surfaces) {
    lines.push(`| **${TITLES[surface] ?? surface}** |${runs.map(() => ' |').join('')}`);
    const rows = runs.find((r) => r.surfaces[surface])?.surfaces[surface] ?? [];
    for (const row of rows) {
      lines.push(`| ${row.label} | ${runs.map((r) => cell(r.surfaces[surface]?.find((x) => x.metric === row.metric))).join(' | ')} |`);
    }
  }
  lines.push('', "Where each size comes from (the load average is the machine's, shared with other work: wall times move with it):", '');
  for (const r of runs) {
    lines.push(
      `- ${sizeLabel(r.size)}: [${r.file}](../bench/results/${r.file}), ${r.date.slice(0, 10)}, commit ${r.commit}, ${r.runs} run(s), ${r.load}` +
        (r.failures.length ? `; failed: ${r.failures.join('; ')}` : ''),
    );
  }
  return lines;
}
