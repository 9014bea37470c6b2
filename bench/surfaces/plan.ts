// The rows of a surfaces run (`npm run bench:surfaces`): what each surface's measurement
// reports, in the order the results file shows them.

export type Surface = 'mcp' | 'sync' | 'inspector';
export const SURFACES: readonly Surface[] = ['mcp', 'sync', 'inspector'];

export interface SurfaceRow {
  metric: string;
  label: string;
  unit: string;
}

export const ROWS: Record<Surface, SurfaceRow[]> = {
  mcp: [
    { metric: 'first_page_total_ms', label: 'spawn + initialize + first `resources/list` page', unit: 'ms' },
    { metric: 'first_page_ms', label: 'the first page alone (500 memories)', unit: 'ms' },
    { metric: 'middle_page_ms', label: 'the page in the middle, by cursor', unit: 'ms' },
    { metric: 'page_max_ms', label: 'the slowest page of the walk', unit: 'ms' },
    { metric: 'walk_s', label: 'every page to the end', unit: 's' },
    { metric: 'walk_requests', label: 'requests for every page', unit: '' },
    { metric: 'rss_after_walk_mib', label: 'server RSS after every page', unit: 'MiB' },
    { metric: 'anon_after_walk_mib', label: 'of it, the server’s own (anonymous)', unit: 'MiB' },
    { metric: 'peak_mib', label: 'server peak RSS (VmHWM)', unit: 'MiB' },
    { metric: 'list_changed_ms', label: 'a memory created by another process → `list_changed`', unit: 'ms' },
    { metric: 'updated_ms', label: 'a subscribed memory edited by another process → `resources/updated`', unit: 'ms' },
  ],
  sync: [
    { metric: 'idle_requests', label: 'a sync with nothing to do: requests', unit: '' },
    { metric: 'idle_ms', label: 'a sync with nothing to do: time', unit: 'ms' },
    { metric: 'ten_requests', label: 'a sync carrying 10 changes (5 pushed, 5 pulled): requests', unit: '' },
    { metric: 'ten_ms', label: 'a sync carrying 10 changes: time', unit: 'ms' },
  ],
  inspector: [
    { metric: 'usable_ms', label: 'page usable (the root shown, main thread free)', unit: 'ms' },
    { metric: 'first_answer_kb', label: 'the first answer (the root’s names)', unit: 'KiB' },
    { metric: 'open_dir_ms', label: 'opening a directory of 1,000 memories', unit: 'ms' },
    { metric: 'open_subdir_ms', label: 'opening one of 100 below it', unit: 'ms' },
    { metric: 'filter_one_server_ms', label: 'the filter of one path: the server', unit: 'ms' },
    { metric: 'filter_one_ms', label: 'the filter of one path: keystroke to matches shown', unit: 'ms' },
    { metric: 'filter_path_server_ms', label: 'the same path typed whole (`/memories/…`): the server', unit: 'ms' },
    { metric: 'filter_path_ms', label: 'the same path typed whole: keystroke to matches shown', unit: 'ms' },
    { metric: 'write_cpu_ms', label: 'a write elsewhere: the page’s main-thread CPU', unit: 'ms' },
    { metric: 'write_longest_task_ms', label: 'a write elsewhere: the longest main-thread task', unit: 'ms' },
    { metric: 'server_rss_end_mib', label: 'server RSS at the end', unit: 'MiB' },
  ],
};

/** `--size`: 1k, 100k, 1m or a count, a multiple of 1,000 (the scale run's shape needs whole directories). */
export function parseSize(raw: string): number {
  const m = /^(\d+)([km]?)$/.exec(raw.trim().toLowerCase());
  const n = m ? Number(m[1]) * (m[2] === 'k' ? 1_000 : m[2] === 'm' ? 1_000_000 : 1) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < 1_000 || n % 1_000 !== 0)
    throw new Error(`--size ${JSON.stringify(raw)}: expected 1k, 100k, 1m or a multiple of 1,000`);
  return n;
}
