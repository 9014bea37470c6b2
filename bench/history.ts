/**
 * The cost of version history (issue 13): create and str_replace with history off and on, each
 * command durable before it answers (`sync`) and, to show the CPU share without the fsync,
 * `buffered`; and the resident memory an open store adds with and without history. The two
 * stores alternate command by command, so a noisy moment hits both alike. `npx tsx bench/history.ts [--runs N]`.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { Rabosh, RaboshMemoryToolHandler, type Durability } from '../index.js';

const CONTENT = `${'x'.repeat(4095)}\n`;
const N = 200;

interface Timing {
  create: number;
  replace: number;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Medians per command, history off and on, the two stores alternating command by command. */
async function commands(durability: Durability): Promise<{ off: Timing; on: Timing }> {
  const dir = mkdtempSync(join(tmpdir(), 'rabosh-bench-history-'));
  try {
    const dbs = [await Rabosh.open(join(dir, 'off'), { durability }), await Rabosh.open(join(dir, 'on'), { durability, history: true })];
    const handlers = dbs.map((db) => new RaboshMemoryToolHandler(db));
    const t = [
      { create: [] as number[], replace: [] as number[] },
      { create: [] as number[], replace: [] as number[] },
    ];
    const timed = async (h: number, k: 'create' | 'replace', input: Record<string, unknown>) => {
      const start = process.hrtime.bigint();
      await handlers[h]!.execute(input);
      t[h]![k].push(Number(process.hrtime.bigint() - start) / 1e3);
    };
    for (let i = 0; i < N; i++) {
      // Alternate which store goes first so neither always follows the other's fsync.
      const order = i % 2 === 0 ? [0, 1] : [1, 0];
      for (const h of order) await timed(h, 'create', { command: 'create', path: `/memories/n${i}.md`, file_text: `${i}\n${CONTENT}` });
      for (const h of order) {
        await timed(h, 'replace', { command: 'str_replace', path: `/memories/n${i}.md`, old_str: `${i}\n`, new_str: `${i} edited\n` });
      }
    }
    for (const db of dbs) await db.close();
    const med = (x: { create: number[]; replace: number[] }) => ({ create: median(x.create), replace: median(x.replace) });
    return { off: med(t[0]!), on: med(t[1]!) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** In a fresh process: RSS added by an open store of `memories` × 4 KiB, each edited `edits` times. */
async function rssChild(history: boolean, memories: number, edits: number): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'rabosh-bench-history-rss-'));
  try {
    let db = await Rabosh.open(dir, { durability: 'buffered', history });
    let h = new RaboshMemoryToolHandler(db);
    for (let i = 0; i < memories; i++) await h.put(`/memories/d${i % 100}/n${i}.md`, `0\n${CONTENT}`);
    for (let e = 1; e <= edits; e++) {
      for (let i = 0; i < memories; i++) await h.put(`/memories/d${i % 100}/n${i}.md`, `${e}\n${CONTENT}`);
    }
    await db.close();
    (globalThis as { gc?: () => void }).gc?.();
    const before = process.memoryUsage().rss;
    db = await Rabosh.open(dir, { history });
    h = new RaboshMemoryToolHandler(db);
    await h.execute({ command: 'view', path: '/memories' });
    (globalThis as { gc?: () => void }).gc?.();
    const after = process.memoryUsage().rss;
    await db.close();
    process.stdout.write(JSON.stringify({ rssMiB: (after - before) / 2 ** 20 }));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  if (args[0] === 'rss') return rssChild(args[1] === 'on', Number(args[2]), Number(args[3]));
  const runs = Number(args[args.indexOf('--runs') + 1] || 5);
  const rows: string[] = ['| measure | history off | history on | on ÷ off |', '|---|---|---|---|'];
  for (const durability of ['sync', 'buffered'] as const) {
    const off = { create: [] as number[], replace: [] as number[] };
    const on = { create: [] as number[], replace: [] as number[] };
    for (let r = 0; r < runs; r++) {
      const m = await commands(durability);
      off.create.push(m.off.create);
      off.replace.push(m.off.replace);
      on.create.push(m.on.create);
      on.replace.push(m.on.replace);
    }
    for (const k of ['create', 'replace'] as const) {
      const [x, y] = [median(off[k]), median(on[k])];
      const name = k === 'create' ? 'create' : 'str_replace';
      rows.push(`| ${name} 4 KiB, ${durability}, median µs | ${x.toFixed(0)} | ${y.toFixed(0)} | ${(y / x).toFixed(2)}× |`);
    }
  }
  const [memories, edits] = [5_000, 4];
  const rss = (mode: string) => {
    const self = fileURLToPath(import.meta.url);
    const r = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', self, 'rss', mode, String(memories), String(edits)], {
      encoding: 'utf8',
    });
    if (r.status !== 0) throw new Error(r.stderr);
    return (JSON.parse(r.stdout) as { rssMiB: number }).rssMiB;
  };
  const rOff = median([rss('off'), rss('off'), rss('off')]);
  const rOn = median([rss('on'), rss('on'), rss('on')]);
  rows.push(
    `| RSS of the open store, ${memories} × 4 KiB memories each written ${edits + 1} times, MiB | ${rOff.toFixed(1)} | ${rOn.toFixed(1)} | ${(rOn / rOff).toFixed(2)}× |`,
  );
  process.stdout.write(`${rows.join('\n')}\n`);
}

await main();
