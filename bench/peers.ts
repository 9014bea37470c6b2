// The benchmark's alternatives that compile a native addon at install. better-sqlite3 builds its
// addon with node-gyp wherever no prebuilt binary can be downloaded, which took two of the three
// minutes of a fresh clone's `npm ci` on the 2-core box, and only the benchmark uses it. So it is
// not a root dependency: bench/peers/ has its own package.json and lock, and the benchmark
// installs them there (`npm ci`, once) the first time it needs them. lmdb and koffi stay root dev
// dependencies: they load prebuilt binaries from per-platform packages and compile nothing.
import { createRequire } from 'node:module';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { npm } from '../__test__/npm-cli.js';

const peers = join(import.meta.dirname, 'peers');
const load = createRequire(join(peers, 'package.json'));
/** How the installed addon was compiled: `full` (its own -O3) or `quick` (-O0). */
const flavourFile = join(peers, 'node_modules', '.rabosh-build');

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

export type PeersBuild = 'full' | 'quick';

/** How the installed peers were compiled (an install older than the marker counts as full). */
export function installedBuild(): PeersBuild | undefined {
  if (!usable()) return undefined;
  return existsSync(flavourFile) && readFileSync(flavourFile, 'utf8').trim() === 'quick' ? 'quick' : 'full';
}

/**
 * Installs bench/peers/ from its lock unless better-sqlite3 already loads and opens a database.
 * `quick` compiles SQLite at -O0 (a third of the CPU), for runs that check answers and measure
 * nothing: `npm test` and the benchmark's smoke run. A measuring run asks for `full` and
 * rebuilds a quick install, so SQLite is never timed unoptimised.
 */
export function ensurePeers(log: (line: string) => void = (l) => process.stderr.write(`${l}\n`), build: PeersBuild = 'full'): PeersBuild {
  const installed = installedBuild();
  if (installed === 'full' || installed === build) return installed;
  log(
    `installing the benchmark-only native peers (better-sqlite3, compiled ${build === 'quick' ? 'at -O0' : 'optimised'}) into bench/peers/ …`,
  );
  // gyp puts CFLAGS after the addon's own -O3, so the last -O wins.
  const env = build === 'quick' ? { CFLAGS: '-O0', CXXFLAGS: '-O0' } : {};
  npm(['ci', '--prefer-offline', '--no-audit', '--no-fund'], peers, env);
  if (!usable()) throw new Error('bench/peers: better-sqlite3 still does not load after npm ci there');
  writeFileSync(flavourFile, `${build}\n`);
  return build;
}
