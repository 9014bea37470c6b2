// The inspector (`rabosh-memory ui`) in chromium, through bench/inspector-page.mjs, one fresh
// server and browser per run: the page usable, opening a directory of 1,000 memories (and one
// of 100 below it), the filter of one path, as text and typed whole (the server's time, then
// the page's), writes from another process (the page's main thread per write), and the
// server's memory.

import { spawn } from 'node:child_process';
import { join } from 'node:path';

interface PageResult {
  usableMs: number;
  usableFromUrlMs: number;
  firstAnswer: { bytes: number; serverMs: number };
  openOuter: { ms: number; serverMs: number; memoriesBelow: number };
  openInner: { ms: number; serverMs: number };
  filterOne: { ms: number; serverMs: number; matches: number };
  filterPath: { ms: number; serverMs: number; matches: number };
  writes: { mainThreadCpuPerWriteMs: number; mainThreadWallPerWriteMs: number; longestTaskMs: number; shownAfterMedianMs: number };
  serverRssEndMb: { total: number; anon: number } | null;
}

export async function measureInspector(store: string, writes: number): Promise<Record<string, number>> {
  const script = join(import.meta.dirname, '..', 'inspector-page.mjs');
  const p = spawn(process.execPath, [script, store, '--json', '--writes', String(writes)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  p.stdout.on('data', (d: Buffer) => {
    out += d.toString('utf8');
  });
  p.stderr.on('data', (d: Buffer) => {
    err += d.toString('utf8');
  });
  const code = await new Promise<number | null>((done) => p.once('close', done));
  if (code !== 0) throw new Error(`inspector-page.mjs exited with ${code}: ${err.slice(-2000)}`);
  const r = JSON.parse(out.trim().split('\n').at(-1) as string) as PageResult;
  if (r.filterOne.matches !== 1) throw new Error(`the filter of one path matched ${r.filterOne.matches}`);
  if (r.filterPath.matches !== 1) throw new Error(`the filter of one path, typed whole, matched ${r.filterPath.matches}`);
  const m: Record<string, number> = {
    usable_ms: r.usableMs,
    usable_from_url_ms: r.usableFromUrlMs,
    first_answer_kb: r.firstAnswer.bytes / 1024,
    open_dir_ms: r.openOuter.ms,
    open_dir_server_ms: r.openOuter.serverMs,
    open_dir_memories: r.openOuter.memoriesBelow,
    open_subdir_ms: r.openInner.ms,
    filter_one_server_ms: r.filterOne.serverMs,
    filter_one_ms: r.filterOne.ms,
    filter_path_server_ms: r.filterPath.serverMs,
    filter_path_ms: r.filterPath.ms,
    write_cpu_ms: r.writes.mainThreadCpuPerWriteMs,
    write_wall_ms: r.writes.mainThreadWallPerWriteMs,
    write_longest_task_ms: r.writes.longestTaskMs,
    write_shown_after_ms: r.writes.shownAfterMedianMs,
  };
  if (r.serverRssEndMb !== null) m.server_rss_end_mib = r.serverRssEndMb.total;
  return m;
}
