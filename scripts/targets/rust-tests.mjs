// Builds the test binaries of the engine, the memory crate and its PostgreSQL backend for a
// target (`cargo test --no-run`) and lists them, so a foreign platform's runner (Wine) or the
// musl build can run each one.
import { execFileSync } from 'node:child_process';
import { root } from './foreign.mjs';

/** `[{ name, exe }]` of every test binary of the three crates for `triple`, built with `env`. */
export function buildRustTests(triple, env = {}) {
  const out = execFileSync(
    'cargo',
    [
      'test',
      '--no-run',
      '--message-format=json',
      '--target',
      triple,
      '-p',
      'rabosh',
      '-p',
      'rabosh-memory',
      '-p',
      'rabosh-memory-postgres',
    ],
    { cwd: root, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024, stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...env } },
  );
  const bins = [];
  for (const line of out.split('\n')) {
    if (!line.startsWith('{')) continue;
    const msg = JSON.parse(line);
    if (msg.reason !== 'compiler-artifact' || !msg.executable || !msg.profile?.test) continue;
    const pkg = CRATES.find((c) => msg.package_id.includes(`/${c}#`) || msg.package_id.startsWith(`${c} `)) ?? 'rabosh';
    bins.push({ name: `${pkg}/${msg.target.kind.includes('lib') ? 'lib' : msg.target.name}`, exe: msg.executable });
  }
  return bins;
}

/** The crates whose binaries are named `crate/target`, longest first (one name prefixes another). */
const CRATES = ['rabosh-memory-postgres', 'rabosh-memory', 'rabosh'];

/** Sums libtest's "test result:" lines (and harness=false binaries' own "N passed" lines). */
export function summarise(output) {
  let passed = 0;
  let failed = 0;
  for (const m of output.matchAll(/test result: \w+\. (\d+) passed(?:; (\d+) failed)?/g)) {
    passed += Number(m[1]);
    failed += Number(m[2] ?? 0);
  }
  return { passed, failed };
}
