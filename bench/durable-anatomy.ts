// The anatomy of one durable create / str_replace / insert: the syscalls each costs, counted
// per command by strace, with bytes written and time inside the calls.
//
//   strace -f -T -o /tmp/anat.log -e trace=pwrite64,write,fdatasync,fsync,futex,io_uring_enter,pread64,statx,flock,epoll_pwait,read \
//     npx tsx bench/durable-anatomy.ts run [ops=200]
//   npx tsx bench/durable-anatomy.ts count /tmp/anat.log [ops=200]
//
// And what each fsync asks of the disk (the block requests issued inside it, per thread and file):
//
//   perf record -a -o /tmp/blk.data -e block:block_rq_issue,ext4:ext4_sync_file_enter,ext4:ext4_sync_file_exit -- \
//     npx tsx bench/durable-decompose.ts 1 100 20
//   perf script -i /tmp/blk.data > /tmp/blk.txt && npx tsx bench/durable-anatomy.ts blocks /tmp/blk.txt
//
// ("WS:8192 WSM:4096": 8 KiB of data written and a 4 KiB metadata block, the inode's, in one
// fdatasync; the block layer's rwbs flags: W write, S sync, M metadata, F flush/FUA.)
//
// `run` brackets each phase with a stat of a marker path (`/rabosh-anatomy/<phase>`) that the
// count finds in the log; `count` prints per phase and syscall the calls per command, the bytes
// written per command and the median time inside a call (strace's -T).

import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadBackend } from './handlers/registry.js';
import { median } from './stats.js';
import { body, pad } from './workload.js';

const [mode = 'run', a1, a2] = process.argv.slice(2);
const mark = (phase: string) => {
  try {
    statSync(`/rabosh-anatomy/${phase}`);
  } catch {}
};

if (mode === 'run') {
  const ops = Number(a1 ?? 200);
  const backendId = process.env.RABOSH_ANATOMY_BACKEND ?? 'rabosh';
  const root = mkdtempSync(join(process.env.RABOSH_BENCH_DIR ?? tmpdir(), 'durable-anatomy-'));
  const backend = await loadBackend(backendId);
  await backend.preload?.();
  const h = await backend.open(join(root, 'store'));
  const path = (i: number) => `/memories/a/w${pad(i, 5)}.md`;
  mark('create');
  for (let i = 0; i < ops; i++) await h.create({ command: 'create', path: path(i), file_text: body(`w${pad(i, 5)}`, 4096) });
  mark('str_replace');
  for (let i = 0; i < ops; i++) await h.str_replace({ command: 'str_replace', path: path(i), old_str: 'L0030 ', new_str: 'M0030 ' });
  mark('insert');
  for (let i = 0; i < ops; i++) await h.insert({ command: 'insert', path: path(i), insert_line: 1, insert_text: `inserted ${i}\n` });
  mark('end');
  await h.close();
  rmSync(root, { recursive: true, force: true });
} else if (mode === 'blocks') {
  const open = new Map<string, { file: string; reqs: string[] }>();
  const per = new Map<string, Map<string, number>>();
  for (const line of readFileSync(a1!, 'utf8').split('\n')) {
    const m = /^\s*(.+?)\s+(\d+) \[\d+\]\s+[\d.]+:\s+(\S+): (.*)$/.exec(line);
    if (!m) continue;
    const [, comm, tid, event, rest] = m;
    if (event === 'ext4:ext4_sync_file_enter') open.set(tid!, { file: /ino (\d+)/.exec(rest!)?.[1] ?? '?', reqs: [] });
    else if (event === 'block:block_rq_issue') {
      const f = rest!.split(/\s+/);
      open.get(tid!)?.reqs.push(`${f[1]}:${f[2]}`);
    } else if (event === 'ext4:ext4_sync_file_exit') {
      const o = open.get(tid!);
      if (!o) continue;
      open.delete(tid!);
      const key = `${comm!.trim()} inode ${o.file}`;
      const pats = per.get(key) ?? new Map<string, number>();
      per.set(key, pats);
      const pat = o.reqs.join(' ') || '(none)';
      pats.set(pat, (pats.get(pat) ?? 0) + 1);
    }
  }
  for (const [key, pats] of per) {
    const total = [...pats.values()].reduce((a, b) => a + b, 0);
    if (total < 20) continue;
    console.log(`${key}: ${total} fsyncs; block requests inside each, most common first`);
    for (const [pat, n] of [...pats].sort((a, b) => b[1] - a[1]).slice(0, 4)) console.log(`  ${String(n).padStart(5)}  ${pat}`);
  }
} else {
  const ops = Number(a2 ?? 200);
  const lines = readFileSync(a1!, 'utf8').split('\n');
  let phase = '';
  const per: Record<string, Record<string, { n: number; bytes: number; us: number[] }>> = {};
  for (const line of lines) {
    const m = /rabosh-anatomy\/(\w+)/.exec(line);
    if (m) {
      phase = m[1] === 'end' ? '' : m[1]!;
      continue;
    }
    if (!phase) continue;
    const s = /^\d+\s+(?:<\.\.\. )?(\w+)(?:\(| resumed>)(.*?)= (-?\d+)[^<]*(?:<([\d.]+)>)?$/.exec(line);
    if (!s || line.includes('<unfinished ...>')) continue;
    const [, name, args, ret, t] = s;
    let key = name!;
    if (name === 'futex') key += args!.includes('WAKE') ? ' WAKE' : ' WAIT';
    const calls = per[phase] ?? {};
    per[phase] = calls;
    const c = calls[key] ?? { n: 0, bytes: 0, us: [] };
    calls[key] = c;
    c.n++;
    if (name === 'pwrite64' || name === 'write') c.bytes += Math.max(0, Number(ret));
    if (t) c.us.push(Number(t) * 1e6);
  }
  for (const [ph, calls] of Object.entries(per)) {
    console.log(`${ph} (per command: calls, bytes written, median µs in the call)`);
    for (const [k, c] of Object.entries(calls).sort()) {
      console.log(`  ${k.padEnd(18)} ${(c.n / ops).toFixed(2).padStart(6)}  ${(c.bytes / ops).toFixed(0).padStart(7)} B  ${median(c.us).toFixed(0).padStart(5)} µs`);
    }
  }
}
