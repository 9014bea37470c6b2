// The PostgreSQL rows (issue 14): the same handler over a directory and over a URL, side by
// side in one run. Per-command latency (create / str_replace / insert / view of a 4 KiB memory,
// one after another, median), 64 concurrent callers (create + 8 edits each, commands per
// second), and a root listing of 5,000 memories. Needs RABOSH_PG_URL (run it through
// `node scripts/with-postgres.mjs "tsx bench/postgres.ts"`); prints a markdown table and writes
// it to bench/results/postgres.md.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { RaboshMemoryToolHandler } from '../index.js';

const url = process.env['RABOSH_PG_URL'];
if (!url) throw new Error('RABOSH_PG_URL is not set; run through scripts/with-postgres.mjs');
const N = Number(process.env['RABOSH_BENCH_PG_N'] ?? 200);
const LISTED = 5_000;
// 4 KiB whose first line is unique to the memory, so a str_replace of it matches once.
const body = (i: number) => `MARK${i}\n${'f'.repeat(4096 - `MARK${i}\n`.length - 1)}\n`;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function timed(h: RaboshMemoryToolHandler, inputs: Array<Record<string, unknown>>): Promise<number> {
  const ms: number[] = [];
  for (const input of inputs) {
    const t = performance.now();
    const r = await h.execute(input);
    ms.push(performance.now() - t);
    if (r.isError) throw new Error(`${JSON.stringify(input).slice(0, 80)}: ${r.text}`);
  }
  return median(ms);
}

async function measure(target: string): Promise<Record<string, number>> {
  const row: Record<string, number> = {};
  const h = await RaboshMemoryToolHandler.open(target);
  try {
    const paths = Array.from({ length: N }, (_, i) => `/memories/lat/m${i}.md`);
    row['create'] = await timed(h, paths.map((path, i) => ({ command: 'create', path, file_text: body(i) })));
    row['str_replace'] = await timed(h, paths.map((path, i) => ({ command: 'str_replace', path, old_str: `MARK${i}\n`, new_str: `EDIT${i}\n` })));
    row['insert'] = await timed(h, paths.map((path) => ({ command: 'insert', path, insert_line: 1, insert_text: 'inserted' })));
    row['view'] = await timed(h, paths.map((path) => ({ command: 'view', path })));

    const t0 = performance.now();
    let commands = 0;
    await Promise.all(
      Array.from({ length: 64 }, async (_, c) => {
        const path = `/memories/conc/c${c}.md`;
        await h.execute({ command: 'create', path, file_text: body(c) });
        commands++;
        for (let e = 0; e < 8; e++) {
          const r = await h.execute(
            e % 2 === 0
              ? { command: 'str_replace', path, old_str: e === 0 ? `MARK${c}\n` : `S${e - 2}:${c}\n`, new_str: `S${e}:${c}\n` }
              : { command: 'insert', path, insert_line: 0, insert_text: `i${e}` },
          );
          if (r.isError) throw new Error(r.text);
          commands++;
        }
      }),
    );
    row['64 callers, commands/s'] = commands / ((performance.now() - t0) / 1000);

    await h.importMemories(Array.from({ length: LISTED }, (_, i) => ({ path: `/memories/list/n${String(i).padStart(5, '0')}.md`, content: 'x'.repeat(64) })));
    const listing: number[] = [];
    for (let r = 0; r < 7; r++) {
      const t = performance.now();
      await h.execute({ command: 'view', path: '/memories/list' });
      listing.push(performance.now() - t);
    }
    row['view of 5,000 memories'] = median(listing.slice(2));
  } finally {
    await h.close();
  }
  return row;
}

const dir = mkdtempSync(join(tmpdir(), 'rabosh-bench-pg-'));
try {
  const embedded = await measure(dir);
  const postgres = await measure(`${url}${url.includes('?') ? '&' : '?'}schema=bench_${randomBytes(4).toString('hex')}`);
  const fmt = (k: string, v: number) => (k.includes('/s') ? v.toFixed(0) : `${v.toFixed(3)} ms`);
  const lines = [
    `| row (${N} commands, 4 KiB memories) | embedded (sync) | PostgreSQL | PG ÷ embedded |`,
    '|---|---|---|---|',
    ...Object.keys(embedded).map((k) => `| ${k} | ${fmt(k, embedded[k]!)} | ${fmt(k, postgres[k]!)} | ${(postgres[k]! / embedded[k]!).toFixed(2)} |`),
  ];
  const table = lines.join('\n');
  console.log(table);
  writeFileSync(new URL('./results/postgres.md', import.meta.url), `${table}\n`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
