// What one `npm run bench` measures, at a size set by RABOSH_BENCH_SCALE (1 = the published sizes).

import { busyTurnUnavailable } from './loop-block.js';
import { entries, noteName, type Dataset } from './workload.js';

export type Unit = 'ms' | 's' | 'MiB' | 'ops/s' | '×';

export interface Row {
  metric: string;
  label: string;
  unit: Unit;
  /** Rows whose value is a throughput: a ratio above 1 means ours is ahead. */
  higherIsBetter?: boolean;
  /** Measured for the `rabosh` column only (set from the instance's `oursOnly`). */
  oursOnly?: boolean;
  /** Why this row cannot be measured on this machine; its cells then stay empty. */
  unavailable?: string;
}

export interface Instance {
  id: string;
  scenario: string;
  /** A seeded store every run reopens; without one each run gets an empty directory of its own. */
  dataset?: Dataset;
  params: Record<string, unknown>;
  /** `floor` instances measure the disk itself, not a handler. */
  floor?: boolean;
  /** Measures a property of ours alone (shared mode): run for the `rabosh` column only. */
  oursOnly?: boolean;
  rows: Row[];
}

export interface Plan {
  scale: number;
  datasets: Dataset[];
  instances: Instance[];
}

function count(full: number, scale: number, min: number): number {
  return Math.max(min, Math.round(full * scale));
}

function thousands(n: number): string {
  return n.toLocaleString('en-US');
}

export function makePlan(scale: number): Plan {
  const flat = (full: number, bytes: number): Dataset => {
    const n = count(full, scale, 10);
    const size = bytes === 64 ? '64 B' : '4 KiB';
    return { id: `flat-${n}-${bytes}`, label: `${thousands(n)} × ${size}`, layout: 'flat', count: n, bytes };
  };
  const small64 = flat(5_000, 64);
  const small4k = flat(5_000, 4096);
  const big64 = flat(50_000, 64);
  const big4k = flat(50_000, 4096);
  const nestedCount = count(50_000, scale, 50);
  const nested: Dataset = {
    id: `nested-${nestedCount}-64`,
    label: `${thousands(nestedCount)} × 64 B in 500 dirs, 3 deep`,
    layout: 'nested',
    count: nestedCount,
    bytes: 64,
  };

  // Long enough for a stable median at full size, short for a smoke run.
  const budgetMs = Math.round(Math.max(50, Math.min(1000, 5000 * scale)));
  const firstFile = (ds: Dataset) => entries(ds).next().value![0];
  // Beside each wall-time event-loop row: the same stretch in JS-thread busy time (loop-block.ts),
  // which machine load does not inflate. Linux only; elsewhere the row says n/a.
  const busyNa = busyTurnUnavailable();
  const busyRow = (metric: string, what: string): Row => ({
    metric,
    label: `longest JS-thread busy turn: ${what}${busyNa ? ` (n/a: ${busyNa})` : ''}`,
    unit: 'ms',
    ...(busyNa ? { unavailable: busyNa } : {}),
  });
  const instances: Instance[] = [];
  for (const ds of [small64, small4k, big64, big4k, nested]) {
    const rows: Row[] = [{ metric: 'view_ms', label: `view /memories: ${ds.label}`, unit: 'ms' }];
    const params: Record<string, unknown> = { list: '/memories', firstFile: firstFile(ds), count: ds.count, budgetMs };
    if (ds === small4k) {
      params.fileView = `/memories/${noteName(Math.floor(ds.count / 2))}`;
      rows.push(
        { metric: 'view_file_ms', label: 'view of one 4 KiB memory', unit: 'ms' },
        { metric: 'view_range_ms', label: 'view of one 4 KiB memory, view_range [10, 20]', unit: 'ms' },
      );
    }
    if (ds === big4k) {
      // Its own processes, with nothing else on the event loop (reads.ts, openStore); the block
      // and busy rows below come from the read processes, under their probe.
      instances.push({
        id: `open/${ds.id}`,
        scenario: 'openStore',
        dataset: ds,
        params: { firstFile: firstFile(ds) },
        rows: [{ metric: 'open_ms', label: `open of the ${ds.label} store + first view`, unit: 'ms' }],
      });
      rows.push(
        { metric: 'open_block_ms', label: `longest event-loop block: open of ${ds.label} + first view`, unit: 'ms' },
        busyRow('open_busy_ms', `open of ${ds.label} + first view`),
      );
    }
    if (ds === big64 || ds === big4k) {
      rows.push(
        { metric: 'list_block_ms', label: `longest event-loop block: first view /memories, ${ds.label}`, unit: 'ms' },
        busyRow('list_busy_ms', `first view /memories, ${ds.label}`),
      );
    }
    if (ds === nested) {
      rows.push({
        metric: 'rss_mib_per_100k',
        label: `RSS per 100,000 memories (open ${ds.label}, view, list; scaled)`,
        unit: 'MiB',
      });
    }
    instances.push({ id: `read/${ds.id}`, scenario: 'readStore', dataset: ds, params, rows });
  }
  instances.push({
    id: 'bigFile',
    scenario: 'bigFile',
    params: { views: 5 },
    rows: [
      { metric: 'view_1mib_block_ms', label: 'longest event-loop block: 5 views of a 1 MiB memory', unit: 'ms' },
      busyRow('view_1mib_busy_ms', '5 views of a 1 MiB memory'),
      { metric: 'idle_block_ms', label: 'longest event-loop block: 300 ms of nothing (the noise floor)', unit: 'ms' },
      busyRow('idle_busy_ms', '300 ms of nothing (its floor)'),
    ],
  });
  const ops = count(200, scale, 5);
  const warmup = Math.min(20, ops);
  instances.push({
    id: 'durableWrites',
    scenario: 'durableWrites',
    params: { ops, warmup },
    rows: [
      { metric: 'create_ms', label: 'create 4 KiB, durable (per command)', unit: 'ms' },
      { metric: 'str_replace_ms', label: 'str_replace in 4 KiB, durable (per command)', unit: 'ms' },
      { metric: 'insert_ms', label: 'insert into 4 KiB, durable (per command)', unit: 'ms' },
    ],
  });
  instances.push({
    id: 'floor',
    scenario: 'rawAppendSync',
    floor: true,
    params: { ops, warmup },
    rows: [
      { metric: 'append_fdatasync_ms', label: 'floor: 4 KiB append + fdatasync, same disk', unit: 'ms' },
      { metric: 'overwrite_fdatasync_ms', label: 'floor: 4 KiB overwrite of written blocks + fdatasync, same disk', unit: 'ms' },
    ],
  });
  const perTree = count(1_000, scale, 10);
  instances.push({
    id: 'subtree',
    scenario: 'subtree',
    params: { trees: 5, perTree },
    rows: [
      { metric: 'rename_ms', label: `rename of a ${thousands(perTree)}-memory subtree`, unit: 'ms' },
      { metric: 'delete_ms', label: `delete of a ${thousands(perTree)}-memory subtree`, unit: 'ms' },
    ],
  });
  const callers = 64;
  const edits = count(8, scale, 2);
  instances.push({
    id: 'concurrent',
    scenario: 'concurrent',
    params: { callers, edits },
    rows: [
      { metric: 'loop_lag_p99_ms', label: `event-loop lag p99, ${callers} callers creating + editing`, unit: 'ms' },
      {
        metric: 'ops_per_s',
        label: `throughput of ${callers} concurrent callers (higher is better)`,
        unit: 'ops/s',
        higherIsBetter: true,
      },
    ],
  });
  const sharedCallers = 8;
  const perCaller = count(25, scale, 3);
  const line = 'str_replace in 4 KiB, durable';
  instances.push({
    id: 'shared',
    scenario: 'sharedStore',
    oursOnly: true,
    params: { ops, warmup, callers: sharedCallers, perCaller },
    rows: [
      { metric: 'excl_ms', label: `${line}: exclusive store, one process (per command)`, unit: 'ms', oursOnly: true },
      { metric: 'shared_ms', label: `${line}: shared store, one process (per command)`, unit: 'ms', oursOnly: true },
      { metric: 'shared_two_ms', label: `${line}: shared store, two processes at once (per command, in one)`, unit: 'ms', oursOnly: true },
      {
        metric: 'excl_ops_per_s',
        label: `${line}: exclusive store, ${sharedCallers} callers in one process (higher is better)`,
        unit: 'ops/s',
        higherIsBetter: true,
        oursOnly: true,
      },
      {
        metric: 'shared_ops_per_s',
        label: `${line}: shared store, ${sharedCallers} callers in one process (higher is better)`,
        unit: 'ops/s',
        higherIsBetter: true,
        oursOnly: true,
      },
      {
        metric: 'shared_two_ops_per_s',
        label: `${line}: shared store, ${sharedCallers} callers in each of two processes, both counted (higher is better)`,
        unit: 'ops/s',
        higherIsBetter: true,
        oursOnly: true,
      },
      { metric: 'view_idle_ms', label: 'view of one 4 KiB memory, shared store, nothing new', unit: 'ms', oursOnly: true },
      {
        metric: 'view_catch_up_ms',
        label: 'view of one 4 KiB memory, shared store, right after another process committed (catch-up)',
        unit: 'ms',
        oursOnly: true,
      },
    ],
  });
  const versions = count(50_000, scale, 100);
  instances.push({
    id: 'historyWalk',
    scenario: 'historyWalk',
    oursOnly: true,
    params: { versions, pageSize: 100 },
    rows: [
      {
        metric: 'history_walk_s',
        label: `history walk of ${thousands(versions)} versions, every page of 100 from its cursor`,
        unit: 's',
        oursOnly: true,
      },
    ],
  });
  const seedCount = count(50_000, scale, 10);
  instances.push({
    id: 'bulkSeed',
    scenario: 'bulkSeed',
    params: { count: seedCount, bytes: 4096 },
    rows: [{ metric: 'seed_s', label: `bulk seed ${thousands(seedCount)} × 4 KiB, then one sync`, unit: 's' }],
  });

  return { scale, datasets: [small64, small4k, big64, big4k, nested], instances };
}
