// Runs a scripted session through one backend and prints its answers as JSON, in this process:
// `tsx bench/transcript.ts <backend> <dir> <script.json>`. The smoke test drives it under each
// peer's own runtime (childCommand), so node:sqlite and bun:sqlite are checked answer by answer,
// failure outcomes included, like the peers that load in the test's own Node.
import { readFileSync } from 'node:fs';
import { loadBackend } from './handlers/registry.js';
import type { BenchHandler } from './handlers/types.js';

type Step = { command: keyof Omit<BenchHandler, 'close'> } & Record<string, unknown>;

export async function transcript(id: string, dir: string, script: readonly Step[]): Promise<string[]> {
  const h = await (await loadBackend(id)).open(dir);
  const out: string[] = [];
  try {
    for (const step of script) out.push(await (h[step.command] as (i: unknown) => Promise<string>)(step));
  } finally {
    await h.close();
  }
  return out;
}

if (process.argv[1] && import.meta.filename === process.argv[1]) {
  const [id, dir, file] = process.argv.slice(2);
  const answers = await transcript(id!, dir!, JSON.parse(readFileSync(file!, 'utf8')) as Step[]);
  process.stdout.write(JSON.stringify(answers));
  process.exit(0);
}
