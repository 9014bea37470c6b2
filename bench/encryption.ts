/**
 * The cost of encryption at rest (issue 21): create and str_replace (each durable before it
 * answers), a listing of a 5,000-memory store, and open + first view, encrypted ÷ plain in one
 * run. The two stores alternate operation by operation, so a noisy moment hits both alike.
 * Goal: ≤ 1.10× for writes and views, ≤ 1.25× for open. `npx tsx bench/encryption.ts [--runs N]`
 * (with the release addon: `npm run build` first; a debug addon inflates the CPU share).
 *
 * The listing is timed twice after each open. The first listing after an open also builds the
 * key directory that open left for later (an encrypted store opens every sealed hint page then):
 * that is open's work, deferred, so "open + first view + first listing" is held to open's goal.
 * The second is a listing as a view is, and is held to the views' goal.
 *
 * `--instructions`: the same rows counted in instructions by callgrind (every thread of the
 * process, so the addon's pool threads too), one child process per mode. Counts barely move with
 * machine load, so they give the ratio on a busy machine where the timings cannot. The time a
 * durable write waits for the disk is the kernel's and is not counted.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Rabosh, RaboshMemoryToolHandler, type RaboshOptions } from '../index.js';
import { runCallgrind } from './callgrind-run.js';
import { median } from './stats.js';

const KEY = Buffer.alloc(32, 0x42);
const CONTENT = `${'x'.repeat(4095)}\n`;
const WRITES = 200;
const LISTED = 5000;
const runsArg = process.argv.indexOf('--runs');
const RUNS = runsArg > 0 ? Number(process.argv[runsArg + 1]) : 20;

const modes: { name: string; options: RaboshOptions }[] = [
  { name: 'plain', options: {} },
  { name: 'encrypted', options: { encryption: { key: KEY } } },
];

const us = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e3;

/** A marker callgrind dumps before (`--dump-before=getppid`); nothing else here calls getppid. */
function marker(): void {
  if (process.ppid < 0) throw new Error('unreachable');
}

const IR_WRITES = 50;
const ROWS = ['create', 'replace', 'warm', 'open', 'listing', 'total'] as const;
const LABELS: Record<(typeof ROWS)[number], string> = {
  create: 'create (sync)',
  replace: 'str_replace (sync)',
  warm: `listing ${LISTED}`,
  open: 'open + first view',
  listing: `first listing after open`,
  total: 'open + view + listing',
};
const IR_OPENS = 5;

/** Under callgrind: the rows for `modes[mode]` in store `dir`, each bracketed by two markers. */
async function child(mode: number, dir: string): Promise<void> {
  const options = modes[mode]!.options;
  const h = await RaboshMemoryToolHandler.open(dir, options);
  for (let i = 0; i < 10; i++) {
    await h.execute({ command: 'create', path: `/memories/warm/n${i}.md`, file_text: `${i}\n${CONTENT}` });
    await h.execute({ command: 'str_replace', path: `/memories/warm/n${i}.md`, old_str: `${i}\n`, new_str: `${i} edited\n` });
  }
  marker();
  for (let i = 0; i < IR_WRITES; i++) {
    await h.execute({ command: 'create', path: `/memories/w/n${i}.md`, file_text: `${i}\n${CONTENT}` });
  }
  marker();
  marker();
  for (let i = 0; i < IR_WRITES; i++) {
    await h.execute({ command: 'str_replace', path: `/memories/w/n${i}.md`, old_str: `${i}\n`, new_str: `${i} edited\n` });
  }
  marker();
  await h.importMemories(Array.from({ length: LISTED }, (_, i) => ({ path: `/memories/d${i % 50}/m${i}.md`, content: `memory ${i}\n` })));
  await h.close();
  for (let r = 0; r < IR_OPENS; r++) {
    marker();
    const db = await Rabosh.open(dir, options);
    const o = new RaboshMemoryToolHandler(db);
    await o.execute({ command: 'view', path: '/memories/d7/m7.md' });
    marker();
    marker();
    await o.execute({ command: 'view', path: '/memories' });
    marker();
    marker();
    await o.execute({ command: 'view', path: '/memories' });
    marker();
    await db.close();
  }
}

/** Instructions per operation of each row, for each mode, and encrypted ÷ plain. */
function instructions(root: string): void {
  const ir = modes.map((m, i) => {
    const { dumps: all } = runCallgrind(m.name, join(root, `cg-${m.name}`), process.execPath, process.argv[1]!, [
      '--child',
      String(i),
      join(root, m.name),
    ]);
    // The child's markers made the last numbered dumps.
    const dumps = all.slice(-(4 + 6 * IR_OPENS));
    const at = (k: number, pair: number) => dumps[4 + 6 * k + 2 * pair + 1]!;
    const each = (f: (k: number) => number) => median(Array.from({ length: IR_OPENS }, (_, k) => f(k)));
    return {
      create: dumps[1]! / IR_WRITES,
      replace: dumps[3]! / IR_WRITES,
      open: each((k) => at(k, 0)),
      listing: each((k) => at(k, 1)),
      total: each((k) => at(k, 0) + at(k, 1)),
      warm: each((k) => at(k, 2)),
    };
  });
  console.log('operation (instructions)      plain      encrypted  encrypted ÷ plain');
  for (const k of ROWS) {
    const [p, e] = [ir[0]![k], ir[1]![k]];
    const label = LABELS[k];
    const f = (n: number) => Math.round(n).toLocaleString('en-US');
    console.log(`${label.padEnd(24)}  ${f(p).padStart(11)}  ${f(e).padStart(13)}  ${(e / p).toFixed(2).padStart(17)}×`);
  }
}

async function main(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'rabosh-bench-encryption-'));
  try {
    const t = modes.map(() => ({ create: [] as number[], replace: [] as number[], listing: [] as number[], warm: [] as number[], open: [] as number[], total: [] as number[] }));
    const handlers = await Promise.all(modes.map((m) => RaboshMemoryToolHandler.open(join(root, m.name), m.options)));
    for (let i = 0; i < WRITES; i++) {
      const order = i % 2 === 0 ? [0, 1] : [1, 0];
      for (const h of order) {
        const start = process.hrtime.bigint();
        await handlers[h]!.execute({ command: 'create', path: `/memories/w/n${i}.md`, file_text: `${i}\n${CONTENT}` });
        t[h]!.create.push(us(start));
      }
      for (const h of order) {
        const start = process.hrtime.bigint();
        await handlers[h]!.execute({ command: 'str_replace', path: `/memories/w/n${i}.md`, old_str: `${i}\n`, new_str: `${i} edited\n` });
        t[h]!.replace.push(us(start));
      }
    }
    const files = Array.from({ length: LISTED }, (_, i) => ({ path: `/memories/d${i % 50}/m${i}.md`, content: `memory ${i}\n` }));
    for (const h of handlers) await h.importMemories(files);
    for (const h of handlers) await h.close();

    for (let r = 0; r < RUNS; r++) {
      const order = r % 2 === 0 ? [0, 1] : [1, 0];
      for (const i of order) {
        const m = modes[i]!;
        let start = process.hrtime.bigint();
        const db = await Rabosh.open(join(root, m.name), m.options);
        const h = new RaboshMemoryToolHandler(db);
        await h.execute({ command: 'view', path: '/memories/d7/m7.md' });
        t[i]!.open.push(us(start));
        start = process.hrtime.bigint();
        await h.execute({ command: 'view', path: '/memories' });
        t[i]!.listing.push(us(start));
        t[i]!.total.push(t[i]!.open.at(-1)! + t[i]!.listing.at(-1)!);
        start = process.hrtime.bigint();
        await h.execute({ command: 'view', path: '/memories' });
        t[i]!.warm.push(us(start));
        await db.close();
      }
    }
    console.log(`${'operation'.padEnd(24)}  plain µs  encrypted µs  encrypted ÷ plain`);
    for (const k of ROWS) {
      const [p, e] = [median(t[0]![k]), median(t[1]![k])];
      const label = LABELS[k];
      console.log(`${label.padEnd(24)}  ${p.toFixed(0).padStart(8)}  ${e.toFixed(0).padStart(12)}  ${(e / p).toFixed(2).padStart(17)}×`);
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

const childAt = process.argv.indexOf('--child');
if (childAt > 0) {
  await child(Number(process.argv[childAt + 1]), process.argv[childAt + 2]!);
} else if (process.argv.includes('--instructions')) {
  const root = mkdtempSync(join(tmpdir(), 'rabosh-bench-encryption-ir-'));
  try {
    instructions(root);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
} else {
  await main();
}
