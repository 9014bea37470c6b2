// What `npm run bench -- --scale 1m` measures: what a first look at a big store costs, at one or
// more store sizes (1,000,000 memories by default; RABOSH_BENCH_SIZES=1000,10000 for others).
// Every store has the same shape at every size: directories of 10 subdirectories × 100 files of
// about 200 B, written in chunks of 50,000, so a size changes how many directories there are and
// nothing else, and the listings below print the same lines at every size but the root's.

import type { Row } from './plan.js';
import type { Entry } from './workload.js';

export const CHUNK = 50_000;
const PER_DIR = 1_000;

/** Store sizes of a run: RABOSH_BENCH_SIZES (a comma list of multiples of 1,000) or one million. */
export function scaleSizes(raw: string | undefined): number[] {
  if (raw === undefined || raw.trim() === '') return [1_000_000];
  return raw.split(',').map((s) => {
    const n = Number(s.trim());
    if (!Number.isInteger(n) || n < PER_DIR || n % PER_DIR !== 0)
      throw new Error(`RABOSH_BENCH_SIZES: ${JSON.stringify(s)} is not a positive multiple of ${PER_DIR}`);
    return n;
  });
}

/** 1k, 10k, 100k, 1m: the name of a size in results files. */
export function sizeName(n: number): string {
  return n % 1_000_000 === 0 ? `${n / 1_000_000}m` : `${n / 1_000}k`;
}

const dirName = (d: number) => `d${String(d).padStart(4, '0')}`;

/** The memories of a store of `n`: /memories/dDDDD/sS/fFFF.md, each body about 200 B. */
export function* scaleEntries(n: number): Generator<Entry> {
  const filler = 'lorem ipsum dolor sit amet '.repeat(7).slice(0, 180);
  for (let i = 0; i < n; i++) {
    const d = Math.floor(i / PER_DIR);
    const s = Math.floor(i / 100) % 10;
    const f = String(i % 100).padStart(3, '0');
    yield [`/memories/${dirName(d)}/s${s}/f${f}.md`, `memory ${i}: ${filler}\n`];
  }
}

/** The paths a run looks at: all in the middle directory, so no side is favoured by key order. */
export function scalePaths(n: number): { file: string; dir100: string; dir1k: string; root: string } {
  const dir1k = `/memories/${dirName(Math.floor(n / PER_DIR / 2))}`;
  return { file: `${dir1k}/s5/f050.md`, dir100: `${dir1k}/s5`, dir1k, root: '/memories' };
}

/** Durable creates timed per run: the same count from 10,000 up, so their medians compare. */
export function createCount(n: number): number {
  return n >= 10_000 ? 300 : 20;
}

export interface ScaleStep {
  /** The child scenario (bench/scenarios/scale.ts). */
  scenario: string;
  rows: Row[];
}

const count = (n: number) => n.toLocaleString('en-US');

/**
 * The steps of one size, each in a fresh process per side and run: the import (which builds the
 * store the others open), then three first looks and the durable creates.
 */
export function scaleSteps(n: number): ScaleStep[] {
  const rootLines = 2 + n / PER_DIR + n / 100;
  return [
    {
      scenario: 'scaleImport',
      rows: [
        { metric: 'import_s', label: `import of ${count(n)} memories in chunks of ${count(CHUNK)}`, unit: 's' },
        { metric: 'import_chunk_ratio', label: 'import: last chunks ÷ first chunks (1 = flat)', unit: '×' },
        { metric: 'import_peak_mib', label: 'peak RSS of the importing process (VmHWM)', unit: 'MiB' },
        { metric: 'disk_mib', label: 'disk after the import', unit: 'MiB' },
      ],
    },
    {
      scenario: 'scaleFirstView',
      rows: [
        { metric: 'open_view_ms', label: 'open + first file view', unit: 'ms' },
        { metric: 'rss_view_mib', label: 'RSS after open + first file view', unit: 'MiB' },
      ],
    },
    {
      scenario: 'scaleFirstList',
      rows: [
        { metric: 'open_list_ms', label: 'open + first listing of a 100-file directory', unit: 'ms' },
        { metric: 'rss_list_mib', label: 'RSS after open + first listing', unit: 'MiB' },
      ],
    },
    {
      scenario: 'scaleRoot',
      rows: [
        { metric: 'open_root_ms', label: `open + root listing (${count(rootLines)} lines)`, unit: 'ms' },
        { metric: 'warm_root_ms', label: 'warm listing of the root', unit: 'ms' },
        { metric: 'warm_dir1k_ms', label: 'warm listing of a 1,000-memory directory (1,012 lines)', unit: 'ms' },
        { metric: 'rss_end_mib', label: 'RSS at the end, after every listing', unit: 'MiB' },
      ],
    },
    {
      scenario: 'scaleCreate',
      rows: [{ metric: 'create_ms', label: `durable create of 200 B, p50 of ${createCount(n)}`, unit: 'ms' }],
    },
  ];
}

/** The columns of a scale run, unless RABOSH_BENCH_BACKENDS names others among these. */
export const SCALE_BACKENDS = ['rabosh-index', 'sqlite', 'sqlite-tuned', 'lmdb'] as const;
export const SCALE_ALLOWED = ['rabosh', ...SCALE_BACKENDS] as const;
