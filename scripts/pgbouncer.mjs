#!/usr/bin/env node
// A throwaway PgBouncer (Debian's `pgbouncer`) on 127.0.0.1 in front of the server that
// scripts/with-postgres.mjs started (RABOSH_PG_URL), for the pooler test: one database alias
// pooled in transaction mode and one in session mode. Runs as the `postgres` user when root
// (PgBouncer refuses root), in a temporary directory, on a free port.
//
// Prints `ready <transaction-mode URL> <session-mode URL>`, then runs until its stdin ends (or
// a signal), and stops PgBouncer and removes the directory.

import { execFileSync, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, userIds } from './pg-local.mjs';

const server = new URL(process.env.RABOSH_PG_URL ?? '');
if (server.protocol !== 'postgres:') {
  console.error('pgbouncer: RABOSH_PG_URL is not set (run under scripts/with-postgres.mjs)');
  process.exit(2);
}
const exe = findOrInstall();
const owner = process.getuid?.() === 0 ? userIds('postgres') : null;
const dir = mkdtempSync(join(tmpdir(), 'rabosh-pgbouncer-'));
const pidFile = join(dir, 'pgbouncer.pid');

function cleanup() {
  try {
    process.kill(Number(readFileSync(pidFile, 'utf8')), 'SIGTERM');
  } catch {
    // Not started, or gone.
  }
  rmSync(dir, { recursive: true, force: true });
}
process.on('exit', cleanup);
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(sig, () => process.exit(1));

const user = decodeURIComponent(server.username);
const password = decodeURIComponent(server.password);
const db = server.pathname.slice(1);
const port = await freePort();
const target = `host=${server.hostname} port=${server.port} dbname=${db}`;
const files = {
  'users.txt': `"${user}" "${password}"\n`,
  'pgbouncer.ini': [
    '[databases]',
    `transaction_pool = ${target} pool_mode=transaction`,
    `session_pool = ${target} pool_mode=session`,
    '[pgbouncer]',
    'listen_addr = 127.0.0.1',
    `listen_port = ${port}`,
    'unix_socket_dir =',
    'auth_type = scram-sha-256',
    `auth_file = ${join(dir, 'users.txt')}`,
    `logfile = ${join(dir, 'pgbouncer.log')}`,
    `pidfile = ${pidFile}`,
    '',
  ].join('\n'),
};
for (const [name, text] of Object.entries(files)) {
  writeFileSync(join(dir, name), text, { mode: 0o600 });
  if (owner) chownSync(join(dir, name), owner.uid, owner.gid);
}
if (owner) chownSync(dir, owner.uid, owner.gid);
const args = ['-d', join(dir, 'pgbouncer.ini')];
execFileSync(owner ? 'runuser' : exe, owner ? ['-u', 'postgres', '--', exe, ...args] : args, { cwd: dir, stdio: 'inherit' });
await listening(port);
const url = (alias) => `postgres://${server.username}:${server.password}@127.0.0.1:${port}/${alias}`;
console.log(`ready ${url('transaction_pool')} ${url('session_pool')}`);
process.stdin.resume();
process.stdin.on('end', () => process.exit(0));

/** A fresh machine of the project's kind (root, Debian) gets it installed, once. */
function findOrInstall() {
  const find = () => ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer'].find(existsSync);
  if (!find()) spawnSync('bash', [fileURLToPath(new URL('./install-postgres.sh', import.meta.url))], { stdio: 'inherit' });
  const found = find();
  if (found) return found;
  console.error("pgbouncer: no pgbouncer binary (install Debian's pgbouncer package)");
  process.exit(1);
}

async function listening(p) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const up = await new Promise((resolve) => {
      const s = createConnection(p, '127.0.0.1');
      s.on('connect', () => {
        s.end();
        resolve(true);
      });
      s.on('error', () => resolve(false));
    });
    if (up) return;
    if (Date.now() > deadline) throw new Error('pgbouncer did not start listening');
    await new Promise((r) => setTimeout(r, 50));
  }
}
