#!/usr/bin/env node
// `npm test`: every step of the suite, stopping at the first failure, then a table of what each
// step took and when it ran, so a slow CI run says where its time went.
//
// Steps overlap where they can: CI's machine has two cores, and run one after another the steps
// left them idle much of the time (a single-threaded LTO link, one vitest worker, a test binary
// on one thread; docs/investigations/ci-time.md). So the Rust lints and tests run beside the TypeScript build and vitest,
// and the cross builds of the other platforms' addons run from the start at low priority (nice),
// soaking up what the foreground leaves idle; the cross-platform tests start once their addons
// are there. Each step's output is prefixed with its name. Steps that share a Cargo target
// directory (clippy and cargo test) stay in one lane, since Cargo would serialise them anyway.
//
// RABOSH_TEST_SERIAL=1 runs the same steps one at a time, in the order listed (to measure a step
// alone, or to read a failure without interleaving).
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { TARGETS } from './build-targets.mjs';

/** The addons built by cross toolchains; this platform's comes from `build` (copied in `test:targets`). */
const CROSS = TARGETS.filter((t) => t.via !== 'cargo').map((t) => t.platform);
const NATIVE = TARGETS.filter((t) => t.via === 'cargo').map((t) => t.platform);

/** name, command, the steps it waits for, whether it runs at low priority; listed in serial order. */
const STEPS = [
  { name: 'build', run: 'npm run build' },
  { name: 'typecheck', run: 'npm run typecheck', after: ['build'] },
  { name: 'lint:ts', run: 'npm run lint:ts', after: ['typecheck'] },
  { name: 'lint:rust', run: 'npm run lint:rust' },
  { name: 'lint:deny', run: 'npm run lint:deny', after: ['lint:rust'] },
  { name: 'lint:workflows', run: 'npm run lint:workflows', after: ['lint:deny'] },
  { name: 'cargo test', run: 'node scripts/with-postgres.mjs "cargo test --workspace"', after: ['lint:workflows'] },
  // better-sqlite3 for the benchmark's smoke test: a single-threaded C compile on a fresh clone,
  // so it runs beside the release build's single-threaded LTO instead of inside vitest.
  // Compiled at -O0 (bench/peers.ts): the suite checks the benchmark's answers, never its times.
  { name: 'bench peers', run: "tsx --eval \"import('./bench/peers.ts').then((m) => m.ensurePeers(undefined, 'quick'))\"" },
  { name: 'vitest', run: 'node scripts/with-postgres.mjs "vitest run"', after: ['lint:ts', 'bench peers'] },
  { name: 'cross builds', run: `node scripts/build-targets.mjs --only ${CROSS.join(',')}`, nice: true },
  {
    name: 'test:targets',
    run: `node scripts/build-targets.mjs --native-from-root --only ${NATIVE.join(',')} && node scripts/with-postgres.mjs "vitest run --config vitest.targets.config.ts"`,
    // Beside vitest: the emulated runs put their addons at the root too, and the native suites
    // name this platform's (scripts/targets/foreign.mjs, placeAddon).
    after: ['build', 'cross builds'],
  },
];

const serial = process.env['RABOSH_TEST_SERIAL'] === '1';
const started = Date.now();
/** name -> { start, end, status } (seconds from `started`). */
const ran = new Map();
const children = new Set();
let failed = null;

const width = Math.max(...STEPS.map((s) => s.name.length));

// Each step's CPU seconds (its processes and all they waited for), from the shell's `times`: on
// a machine that other work shares, wall time says little and CPU time is what a step costs.
const cpuDir = mkdtempSync(join(tmpdir(), 'rabosh-test-cpu-'));
// And each vitest file's (__test__/cpu-per-file.ts), for the costliest files in the table.
const fileCpuLog = join(cpuDir, 'files');

// In CI every Rust build starts from nothing and is never rebuilt, so the incremental caches that
// dev builds write (the test binaries, clippy) are written for no reader: off, they cost about a
// tenth less CPU (docs/investigations/ci-time.md). A developer's repeated `npm test` keeps them.
const cargoEnv = process.env['CI'] && process.env['CARGO_INCREMENTAL'] === undefined ? { CARGO_INCREMENTAL: '0' } : {};

/** `step.run` in a shell that writes its children's user + system seconds to `file` at the end. */
function timed(step, file) {
  return `${step.run}; rc=$?; times > '${file}'; exit $rc`;
}

/** The children's CPU seconds from a `times` output (second line: children's user and system). */
function cpuSeconds(file) {
  let text;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  const line = text.trim().split('\n')[1] ?? '';
  let total = 0;
  for (const [, m, s] of line.matchAll(/(\d+)m([\d.]+)s/g)) total += Number(m) * 60 + Number(s);
  return total;
}

function runStep(step) {
  return new Promise((resolve) => {
    const t = (Date.now() - started) / 1000;
    ran.set(step.name, { start: t });
    const cpuFile = join(cpuDir, step.name.replace(/[^a-z0-9]+/gi, '-'));
    const script = timed(step, cpuFile);
    const command = [...(step.nice ? ['nice', '-n', '10'] : []), 'sh', '-c', script];
    // Its own process group, so a failure elsewhere can stop the whole step (cargo, vitest and
    // their children), and nothing else.
    const child = spawn(command[0], command.slice(1), {
      env: { ...process.env, ...cargoEnv, RABOSH_TEST_CPU_LOG: fileCpuLog },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    children.add(child);
    const tag = `${step.name.padEnd(width)} │ `;
    for (const stream of [child.stdout, child.stderr]) {
      const out = stream === child.stdout ? process.stdout : process.stderr;
      createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY }).on('line', (line) => out.write(`${tag}${line}\n`));
    }
    child.on('close', (code, signal) => {
      children.delete(child);
      const entry = ran.get(step.name);
      entry.end = (Date.now() - started) / 1000;
      entry.status = code ?? signal;
      entry.cpu = cpuSeconds(cpuFile);
      if (failed) entry.stopped = true;
      if (code !== 0 && !failed) {
        failed = `${step.name} exited with ${code ?? signal}`;
        for (const c of children) {
          try {
            process.kill(-c.pid, 'SIGTERM');
          } catch {
            // Already gone.
          }
        }
      }
      resolve();
    });
  });
}

async function runSerial() {
  for (const step of STEPS) {
    await runStep(step);
    if (failed) return;
  }
}

async function runOverlapped() {
  const done = new Map(STEPS.map((s) => [s.name, null]));
  const pending = new Set(STEPS);
  await new Promise((resolveAll) => {
    const launch = () => {
      if (failed && children.size === 0) return resolveAll();
      if (failed) return;
      if (pending.size === 0 && children.size === 0) return resolveAll();
      for (const step of [...pending]) {
        if ((step.after ?? []).every((name) => done.get(name))) {
          pending.delete(step);
          runStep(step).then(() => {
            done.set(step.name, true);
            launch();
          });
        }
      }
    };
    launch();
  });
}

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    for (const c of children) {
      try {
        process.kill(-c.pid, signal);
      } catch {
        // Already gone.
      }
    }
    process.exit(130);
  });
}

await (serial ? runSerial() : runOverlapped());

const total = (Date.now() - started) / 1000;
const secs = (s) => s.toFixed(0).padStart(5);
const rows = STEPS.filter((s) => ran.has(s.name)).map((s) => {
  const r = ran.get(s.name);
  const end = r.end ?? total;
  const note = r.stopped || r.end === undefined ? ' (stopped)' : s.nice ? ' (low priority)' : '';
  const cpu = r.cpu === undefined ? '    -' : secs(r.cpu);
  return `  ${s.name.padEnd(22)} ${secs(end - r.start)} s ${cpu} s   from ${secs(r.start)} s to ${secs(end)} s${note}`;
});
const costliest = (() => {
  try {
    return readFileSync(fileCpuLog, 'utf8').trim().split('\n');
  } catch {
    return [];
  }
})()
  .map((line) => line.split(' '))
  .sort((a, b) => Number(b[0]) - Number(a[0]))
  .slice(0, 12)
  .map(([cpu, file]) => `  ${secs(Number(cpu))} s  ${file}`);
rmSync(cpuDir, { recursive: true, force: true });
const cpuTotal = [...ran.values()].reduce((sum, r) => sum + (r.cpu ?? 0), 0);
const mode = serial ? 'one at a time' : 'overlapped';
if (costliest.length > 0) console.log(`\nthe test files that cost the most CPU:\n${costliest.join('\n')}`);
console.log(
  `\nnpm test, time per step (${mode}; each step's wall and CPU seconds, then when it ran):\n${rows.join('\n')}\n  ${'total'.padEnd(22)} ${secs(total)} s ${secs(cpuTotal)} s`,
);
if (failed) {
  console.error(`npm test: ${failed}`);
  process.exit(1);
}
