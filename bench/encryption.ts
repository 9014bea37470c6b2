/**
 * The cost of encryption at rest (issue 21): create and str_replace (each durable before it
 * answers), a listing of a 5,000-memory store, and open + first view, encrypted ÷ plain in one
 * run. The two stores alternate operation by operation, so a noisy moment hits both alike.
 * Goal: ≤ 1.10× for writes and views, ≤ 1.25× for open. `npx tsx bench/encryption.ts [--runs N]`
 * (with the release addon: `npm run build` first; a debug addon inflates the CPU share).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Rabosh, RaboshMemoryToolHandler, type RaboshOptions } from '../index.js';
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

async function main(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'rabosh-bench-encryption-'));
  try {
    const t = modes.map(() => ({ create: [] as number[], replace: [] as number[], listing: [] as number[], open: [] as number[] }));
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
        await db.close();
      }
    }
    console.log('operation             plain µs  encrypted µs  encrypted ÷ plain');
    for (const k of ['create', 'replace', 'listing', 'open'] as const) {
      const [p, e] = [median(t[0]![k]), median(t[1]![k])];
      const label = { create: 'create (sync)', replace: 'str_replace (sync)', listing: `listing ${LISTED}`, open: 'open + first view' }[k];
      console.log(`${label.padEnd(20)}  ${p.toFixed(0).padStart(8)}  ${e.toFixed(0).padStart(12)}  ${(e / p).toFixed(2).padStart(17)}×`);
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

await main();
