// The other process of the shared-store rows (scenarios/shared.ts): opens the same store with
// the default options (shared), creates `callers` memories of its own and then, driven by stdin
// lines, answers `READY`; `LOOP n` → every caller makes n durable str_replace commands on its own
// memory at once, then `DONE <commands>`; `C` → one str_replace, then `OK`; `EXIT` closes.
// Run as `node --import tsx bench/shared-peer.ts <dir> <callers>`.

import { createInterface } from 'node:readline';
import { writeSync } from 'node:fs';
import { load } from './handlers/rabosh.js';
import { body } from './workload.js';

const [dir, callersArg] = process.argv.slice(2);
const callers = Number(callersArg);
const mod = await load();
const db = await mod.Rabosh.open(dir!, { durability: 'sync' });
const h = new mod.RaboshMemoryToolHandler(db, { listingIndex: false });
const say = (line: string) => writeSync(1, `${line}\n`);
const counts = Array<number>(callers).fill(0);
const path = (c: number) => `/memories/peer/${process.pid}-${c}.md`;
for (let c = 0; c < callers; c++) {
  await h.create({ command: 'create', path: path(c), file_text: `v 0\n${body(`peer${c}`, 4096)}` });
}
/** One durable command on caller c's memory. */
async function bump(c: number): Promise<void> {
  const n = counts[c]!;
  const text = await h.str_replace({ command: 'str_replace', path: path(c), old_str: `v ${n}\n`, new_str: `v ${n + 1}\n` });
  if (!text.startsWith('The memory file has been edited')) throw new Error(`peer: unexpected answer ${text.slice(0, 200)}`);
  counts[c] = n + 1;
}
say('READY');
for await (const line of createInterface({ input: process.stdin })) {
  if (line.startsWith('LOOP ')) {
    const n = Number(line.slice(5));
    await Promise.all(
      Array.from({ length: callers }, async (_, c) => {
        for (let i = 0; i < n; i++) await bump(c);
      }),
    );
    say(`DONE ${n * callers}`);
  } else if (line === 'C') {
    await bump(0);
    say('OK');
  } else if (line === 'EXIT') {
    break;
  }
}
await db.close();
// stdin stays open (the parent holds the pipe): leave without waiting for it.
process.exit(0);
