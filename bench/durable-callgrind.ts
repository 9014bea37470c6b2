// Runs under `valgrind --tool=callgrind --dump-before=getppid` (bench/callgrind-run.ts): one
// backend's store in the bench's durableWrites setting (bench/scenarios/writes.ts: 4 KiB bodies,
// the same edits), warmed up, with each measured loop of durable create / str_replace / insert
// bracketed by `process.ppid` markers, so each loop is one dump (every thread). The instructions
// per command tell apart what an edit costs beyond a create, on a machine too busy for times.
//
//   npx tsx bench/durable-callgrind.ts [backend=rabosh-index] [ops=100]
//     prints instructions per command; RABOSH_CALLGRIND_KEEP=dir keeps the dumps there
//     (then `callgrind_annotate --inclusive=yes dir/cg.out.N`).

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCallgrind } from './callgrind-run.js';
import { loadBackend } from './handlers/registry.js';
import { body, pad } from './workload.js';

const KINDS = ['create', 'str_replace', 'insert'] as const;

function marker(): void {
  if (process.ppid < 0) throw new Error('unreachable');
}

async function driver(id: string, dir: string, ops: number): Promise<void> {
  const backend = await loadBackend(id);
  await backend.preload?.();
  const h = await backend.open(dir);
  const path = (tag: string, i: number) => `/memories/${tag}/w${pad(i, 5)}.md`;
  // The bodies are built before the loops, as the bench builds each outside its timed step.
  const bodies = Array.from({ length: Math.max(ops, 20) }, (_, i) => body(`w${pad(i, 5)}`, 4096));
  const run = async (tag: string, n: number, mark: boolean) => {
    for (const kind of KINDS) {
      if (mark) marker();
      for (let i = 0; i < n; i++) {
        const p = path(tag, i);
        const text =
          kind === 'create'
            ? await h.create({ command: 'create', path: p, file_text: bodies[i]! })
            : kind === 'str_replace'
              ? await h.str_replace({ command: 'str_replace', path: p, old_str: 'L0030 ', new_str: 'M0030 ' })
              : await h.insert({ command: 'insert', path: p, insert_line: 1, insert_text: `inserted ${i}\n` });
        if (!/^(File created|The memory file has been edited|The file )/.test(text)) throw new Error(`${kind}: ${text}`);
      }
      if (mark) marker();
    }
  };
  await run('warm', 20, false);
  await run('timed', ops, true);
  await h.close();
}

if (process.argv[2] === '--driver') {
  await driver(process.argv[3]!, process.argv[4]!, Number(process.argv[5]));
} else {
  const id = process.argv[2] ?? 'rabosh-index';
  const ops = Number(process.argv[3] ?? 100);
  const root = mkdtempSync(join(process.env.RABOSH_BENCH_DIR ?? tmpdir(), 'durable-callgrind-'));
  const out = process.env.RABOSH_CALLGRIND_KEEP ?? join(root, 'cg');
  try {
    const r = runCallgrind(id, out, process.execPath, new URL(import.meta.url).pathname, ['--driver', id, join(root, 'store'), String(ops)]);
    // Each loop is the dump its closing marker writes; after the last marker comes only the
    // exit's dump (unnumbered): the last five numbered dumps are loop, gap, loop, gap, loop.
    const loops = r.dumps.slice(-5).filter((_, k) => k % 2 === 0);
    const first = r.dumps.length - 4;
    KINDS.forEach((kind, k) => {
      console.log(`${kind.padEnd(12)} ${Math.round(loops[k]! / ops).toLocaleString('en-US').padStart(9)} instructions per command (dump ${first + 2 * k})`);
    });
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
