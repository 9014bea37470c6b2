// The benchmark's alternatives that compile a native addon at install. better-sqlite3 builds its
// addon with node-gyp wherever no prebuilt binary can be downloaded, which took two of the three
// minutes of a fresh clone's `npm ci` on the 2-core box, and only the benchmark uses it. So it is
// not a root dependency: bench/peers/ has its own package.json and lock, and the benchmark
// installs them there (`npm ci`, once) the first time it needs them. lmdb and koffi stay root dev
// dependencies: they load prebuilt binaries from per-platform packages and compile nothing.
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { npm } from '../__test__/npm-cli.js';

const peers = join(import.meta.dirname, 'peers');
const load = createRequire(join(peers, 'package.json'));

/** better-sqlite3 as installed under bench/peers/ (see {@link ensurePeers}). */
export function betterSqlite3(): typeof import('better-sqlite3') {
  return load('better-sqlite3') as typeof import('better-sqlite3');
}

function usable(): boolean {
  try {
    new (betterSqlite3())(':memory:').close();
    return true;
  } catch {
    return false;
  }
}

/** Installs bench/peers/ from its lock unless better-sqlite3 already loads and opens a database. */
export function ensurePeers(log: (line: string) => void = (l) => process.stderr.write(`${l}\n`)): void {
  if (usable()) return;
  log('installing the benchmark-only native peers (better-sqlite3, compiled on first use) into bench/peers/ …');
  npm(['ci', '--prefer-offline', '--no-audit', '--no-fund'], peers);
  if (!usable()) throw new Error('bench/peers: better-sqlite3 still does not load after npm ci there');
}
