#!/usr/bin/env node
// `npm test`: every step of the suite in order, stopping at the first failure, then a table of
// what each step took, so a slow CI run says where its time went.
import { spawnSync } from 'node:child_process';

const STEPS = [
  ['build', 'npm run build'],
  ['typecheck', 'npm run typecheck'],
  ['lint:ts', 'npm run lint:ts'],
  ['lint:rust', 'npm run lint:rust'],
  ['lint:deny', 'npm run lint:deny'],
  ['lint:workflows', 'npm run lint:workflows'],
  ['cargo test', 'node scripts/with-postgres.mjs "cargo test --workspace"'],
  ['vitest', 'node scripts/with-postgres.mjs "vitest run"'],
  ['test:targets', 'npm run test:targets'],
];

const took = [];
let failed = null;
const started = Date.now();
for (const [name, command] of STEPS) {
  const t = Date.now();
  const run = spawnSync(command, { shell: true, stdio: 'inherit' });
  took.push([name, (Date.now() - t) / 1000]);
  if (run.status !== 0) {
    failed = `${name} exited with ${run.status ?? run.signal}`;
    break;
  }
}
const total = (Date.now() - started) / 1000;
const rows = took.map(([name, s]) => `  ${name.padEnd(22)} ${s.toFixed(0).padStart(5)} s`);
console.log(`\nnpm test, time per step:\n${rows.join('\n')}\n  ${'total'.padEnd(22)} ${total.toFixed(0).padStart(5)} s`);
if (failed) {
  console.error(`npm test: ${failed}`);
  process.exit(1);
}
