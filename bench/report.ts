// The one table: medians with min–max over runs, and ours ÷ each alternative.

import type { BackendInfo } from './handlers/registry.js';
import type { Row, Unit } from './plan.js';
import type { Summary } from './stats.js';

export interface TableRow {
  row: Row;
  /** The measurement (plan instance) the row belongs to. */
  instance: string;
  floor: boolean;
  cells: Record<string, Summary | undefined>;
}

function num(x: number): string {
  if (!Number.isFinite(x)) return '?';
  const a = Math.abs(x);
  if (a >= 1000) return Math.round(x).toLocaleString('en-US');
  if (a >= 100) return x.toFixed(0);
  if (a >= 10) return x.toFixed(1);
  if (a >= 1) return x.toFixed(2);
  return x.toPrecision(2);
}

function cell(s: Summary | undefined, unit: Unit): string {
  if (!s) return '—';
  const spread = s.runs.length > 1 ? ` (${num(s.min)}–${num(s.max)})` : '';
  return `${num(s.median)} ${unit}${spread}`;
}

function ratio(ours: Summary | undefined, alt: Summary | undefined): string {
  if (!ours || !alt || alt.median === 0) return '—';
  return num(ours.median / alt.median);
}

/**
 * The main table: every column that runs under the bench's own Node, and the peers in their own
 * runtimes, with ours (the bench's Node) ÷ each peer.
 */
export function renderTable(rows: TableRow[], backends: readonly BackendInfo[]): string {
  const shown = backends.filter((b) => !(b.ours && b.runtime));
  const ours = shown.filter((b) => b.ours);
  const alts = shown.filter((b) => !b.ours);
  const head = ['measurement', ...shown.map((b) => b.label), ...alts.map((a) => `ours ÷ ${a.label.split(' ')[0]}`)];
  const lines = [`| ${head.join(' | ')} |`, `|${head.map((_, i) => (i === 0 ? '---' : '---:')).join('|')}|`];
  for (const { row, floor, cells } of rows) {
    const values = shown.map((b) => cell(floor ? cells['none'] : cells[b.id], row.unit));
    const ratios = alts.map((a) => (floor || ours.length === 0 ? '—' : ours.map((o) => ratio(cells[o.id], cells[a.id])).join(' / ')));
    lines.push(`| ${[row.label, ...values, ...ratios].join(' | ')} |`);
  }
  return lines.join('\n');
}

/**
 * Ours with its children under the other runtimes (Node 24, Bun), on the rows they run, ÷ each
 * peer (whose own cells are in the main table): empty when no such column ran.
 */
export function renderRuntimeTable(rows: TableRow[], backends: readonly BackendInfo[]): string {
  const ours = backends.filter((b) => b.ours && b.runtime);
  const alts = backends.filter((b) => !b.ours);
  const measured = rows.filter((r) => !r.floor && ours.some((o) => r.cells[o.id]));
  if (ours.length === 0 || measured.length === 0) return '';
  const head = ['measurement', ...ours.map((b) => b.label), ...alts.map((a) => `ours ÷ ${a.label.split(' ')[0]}`)];
  const lines = [`| ${head.join(' | ')} |`, `|${head.map((_, i) => (i === 0 ? '---' : '---:')).join('|')}|`];
  for (const { row, cells } of measured) {
    const values = ours.map((b) => cell(cells[b.id], row.unit));
    const ratios = alts.map((a) => ours.map((o) => ratio(cells[o.id], cells[a.id])).join(' / '));
    lines.push(`| ${[row.label, ...values, ...ratios].join(' | ')} |`);
  }
  const names = ours.map((b) => b.label).join(' / ');
  return [
    `Ours with its children under the other runtimes, on the rows those columns run; ratios given as "${names}", ` +
      'against each peer in the runtime it runs in (node:sqlite under Node 24 and bun:sqlite under Bun are the same-runtime ' +
      "pairs; the other peers run under the bench's Node). The peers' own cells are in the table above.",
    '',
    ...lines,
  ].join('\n');
}

export function legend(backends: readonly BackendInfo[]): string {
  const ours = backends.filter((b) => b.ours && !b.runtime).map((b) => b.label);
  return [
    `Cells: median over runs, (min–max) of the runs. Ratio columns: ours ÷ alternative on the medians` +
      (ours.length > 1 ? `, given as "${ours.join(' / ')}"` : '') +
      '; below 1 means ours takes less (time, memory), except on the throughput row where above 1 means ours does more.',
    'The floor rows are the same raw loops in every column: a 4 KiB append + fdatasync (the least a durable commit that grows its file costs on this disk), and the same write over blocks written before (no file size to journal: the least any durable commit costs here).',
  ].join('\n');
}
