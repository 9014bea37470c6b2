// What the scripts that run throwaway PostgreSQL servers and poolers on this machine share
// (with-postgres.mjs, pg-cluster.mjs, pgbouncer.mjs): where the server's binaries are, the ids
// of the `postgres` user a root run hands them to, and a free port on 127.0.0.1.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';

/** The newest PostgreSQL bin directory: RABOSH_PG_BIN, Debian's layout, or the PATH. */
export function findBin() {
  if (process.env.RABOSH_PG_BIN) return process.env.RABOSH_PG_BIN;
  const root = '/usr/lib/postgresql';
  if (existsSync(root)) {
    const versions = readdirSync(root)
      .filter((v) => existsSync(join(root, v, 'bin', 'initdb')))
      .sort((a, b) => Number(b) - Number(a));
    if (versions.length > 0) return join(root, versions[0], 'bin');
  }
  for (const p of (process.env.PATH ?? '').split(':')) {
    if (p && existsSync(join(p, 'initdb'))) return p;
  }
  throw new Error(
    "no PostgreSQL binaries found (install Debian's postgresql package, set RABOSH_PG_BIN, " + 'or set RABOSH_PG_URL to a server to use)',
  );
}

/** The uid and gid of the user `name`. */
export function userIds(name) {
  const id = (flag) => Number(execFileSync('id', [flag, name]).toString().trim());
  return { uid: id('-u'), gid: id('-g') };
}

/** A TCP port free on 127.0.0.1 a moment ago. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}
