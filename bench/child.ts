// One measurement in a fresh process: `node --expose-gc --import tsx bench/child.ts job.json`.
// A fresh process per run keeps one configuration's JIT state and heap out of the next one's.

import { readFileSync, writeFileSync } from 'node:fs';
import { fingerprint } from './agreement.js';
import { loadBackend } from './handlers/registry.js';
import { historyWalk } from './scenarios/history-walk.js';
import { bigFile, openStore, readStore } from './scenarios/reads.js';
import type { Job, Scenario } from './scenarios/types.js';
import { scaleCreate, scaleFirstList, scaleFirstView, scaleImport, scaleRoot } from './scenarios/scale.js';
import { sharedStore } from './scenarios/shared.js';
import { bulkSeed, concurrent, durableWrites, rawAppendSync, subtree } from './scenarios/writes.js';
import { entries, type Dataset } from './workload.js';

const SCENARIOS: Record<string, Scenario> = {
  openStore,
  readStore,
  bigFile,
  durableWrites,
  rawAppendSync,
  subtree,
  concurrent,
  bulkSeed,
  sharedStore,
  historyWalk,
  scaleImport,
  scaleFirstView,
  scaleFirstList,
  scaleRoot,
  scaleCreate,
  // Builds a dataset the measurements then reopen; its time is reported but not tabled.
  seedDataset: async (backend, job) => {
    const t0 = performance.now();
    await backend.seed(job.dir, entries(job.params.dataset as Dataset));
    return { metrics: { seed_s: (performance.now() - t0) / 1000 }, answers: {} };
  },
};

async function main(): Promise<void> {
  const job = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as Job;
  const scenario = SCENARIOS[job.scenario];
  if (!scenario) throw new Error(`unknown scenario ${job.scenario}`);
  const backend = job.backend === 'none' ? (null as never) : await loadBackend(job.backend);
  // Module loading (and, for ours, transpiling the TypeScript source) is not the store's cost.
  await backend?.preload?.();
  const { metrics, answers } = await scenario(backend, job);
  // Fault injection for the test that proves a disagreement fails the run (a comma list of ids).
  if (process.env.RABOSH_BENCH_SABOTAGE?.split(',').includes(job.backend)) {
    for (const key of Object.keys(answers)) answers[key] += ' (sabotaged)';
  }
  const prints = Object.fromEntries(Object.entries(answers).map(([k, v]) => [k, fingerprint(v)]));
  writeFileSync(job.out, JSON.stringify({ metrics, answers: prints }));
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err instanceof Error ? (err.stack ?? err.message) : String(err));
    process.exit(1);
  },
);
