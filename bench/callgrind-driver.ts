// Runs under `valgrind --tool=callgrind --dump-before=getppid`: opens one backend's store, warms
// up, and brackets each measured loop with `process.ppid` (one getppid call each), so callgrind
// writes one dump per bracket and the dump between two markers holds exactly the measured loop
// (every thread: ours answers on the libuv pool). Prints the answers' fingerprints as JSON.
//
// argv: backend id, store dir, listing count, view count. RABOSH_CALLGRIND_VIEW_RANGE=10,20 views
// with that view_range (the same lookup, fewer lines formatted and crossed: it tells the two apart).

import { createHash } from 'node:crypto';
import { loadBackend } from './handlers/registry.js';
import { noteName } from './workload.js';

const WARMUP = 20;

function marker(): void {
  // getppid is the marker callgrind dumps before; nothing else in this process calls it.
  if (process.ppid < 0) throw new Error('unreachable');
}

async function main(): Promise<void> {
  const [id, dir, lists, views] = process.argv.slice(2) as [string, string, string, string];
  const backend = await loadBackend(id);
  const handler = await backend.open(dir);
  const list = { command: 'view', path: '/memories' } as const;
  const range = process.env.RABOSH_CALLGRIND_VIEW_RANGE?.split(',').map(Number) as [number, number] | undefined;
  const view = { command: 'view', path: `/memories/${noteName(42)}`, ...(range ? { view_range: range } : {}) } as const;
  for (let i = 0; i < WARMUP; i++) await handler.view(list);
  for (let i = 0; i < WARMUP * 20; i++) await handler.view(view);
  const prints: Record<string, string> = {};
  const hash = (s: string) => createHash('sha256').update(s).digest('hex');

  marker();
  let answer = '';
  for (let i = 0; i < Number(lists); i++) answer = await handler.view(list);
  marker();
  prints.list = hash(answer);
  marker();
  for (let i = 0; i < Number(views); i++) answer = await handler.view(view);
  marker();
  prints.view = hash(answer);
  await handler.close();
  process.stdout.write(`${JSON.stringify(prints)}\n`);
}

await main();
