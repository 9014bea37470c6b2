#!/usr/bin/env node
// Runs a command with RABOSH_PG_URL pointing at a PostgreSQL server. When RABOSH_PG_URL is
// already set, the command just runs against it. Otherwise a throwaway server is started from
// the machine's PostgreSQL binaries (Debian's /usr/lib/postgresql/<v>/bin, or RABOSH_PG_BIN, or
// PATH) in a temporary directory, listening on 127.0.0.1 on a free port, with password
// authentication (so a wrong password can be tested) and one database; it is stopped and
// removed afterwards, also when the command fails or this script is interrupted. When run as
// root the server runs as the `postgres` user, since initdb refuses root.
//
// RABOSH_PG_FSYNC=on keeps the server's fsync (off by default: faster, and nothing here
// survives the run anyway).
//
// Also exported: RABOSH_PG_RESTART, a shell command that restarts the throwaway server (for the
// restart test), RABOSH_PG_STOP and RABOSH_PG_CONT, shell commands that SIGSTOP and SIGCONT it
// (its postmaster and backends only; for the stopped-server test), RABOSH_PG_LOG, its log file, and RABOSH_PG_CA, the test CA that signed the
// server's TLS certificate (for the sslmode tests).
//
// Usage: node scripts/with-postgres.mjs "cmd && other"   (one argument: run by the shell)
//        node scripts/with-postgres.mjs cmd arg...        (several: run directly)

import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findBin, freePort, userIds } from './pg-local.mjs';

const args = process.argv.slice(2);
if (args.length === 0) {
  console.error('usage: with-postgres.mjs <command> [args...]');
  process.exit(2);
}

if (process.env.RABOSH_PG_URL) {
  process.exit(await run(process.env));
}

const bin = findOrInstallBin();
const asRoot = process.getuid?.() === 0;
const owner = asRoot ? userIds('postgres') : null;
const dir = mkdtempSync(join(tmpdir(), 'rabosh-pg-'));
const data = join(dir, 'data');
const log = join(dir, 'server.log');
let started = false;
let cleaned = false;
let current = null;

function cleanup() {
  if (cleaned) return;
  cleaned = true;
  if (started) {
    try {
      pg(['pg_ctl', '-D', data, '-m', 'immediate', '-w', 'stop'], { stdio: 'ignore' });
    } catch {
      // Already down: nothing to stop.
    }
  }
  rmSync(dir, { recursive: true, force: true });
}

process.on('exit', cleanup);
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(sig, () => {
    current?.kill(sig);
    cleanup();
    process.exit(128 + { SIGHUP: 1, SIGINT: 2, SIGTERM: 15 }[sig]);
  });
}

let code = 1;
try {
  if (owner) chownSync(dir, owner.uid, owner.gid);
  const password = randomBytes(18).toString('hex');
  const pwfile = join(dir, 'pw');
  writeFileSync(pwfile, `${password}\n`, { mode: 0o600 });
  if (owner) chownSync(pwfile, owner.uid, owner.gid);
  pg(['initdb', '-D', data, '-U', 'postgres', '--auth=scram-sha-256', `--pwfile=${pwfile}`, '-E', 'UTF8', '--locale=C', '--no-sync'], {
    stdio: 'ignore',
  });
  rmSync(pwfile);
  const tls = makeCertificates();
  const port = await freePort();
  // A throwaway server: no fsync (the tests kill clients, not this server's machine) unless
  // RABOSH_PG_FSYNC=on (for latency figures); enough connections for parallel tests that each
  // hold a pool.
  const durable = process.env.RABOSH_PG_FSYNC === 'on';
  const opts =
    `-c listen_addresses=127.0.0.1 -p ${port} -c unix_socket_directories=${dir} ` +
    (durable ? '' : '-c fsync=off -c full_page_writes=off ') +
    '-c max_connections=300' +
    (tls ? ` -c ssl=on -c ssl_cert_file=${tls.cert} -c ssl_key_file=${tls.key}` : '');
  started = true;
  pg(['pg_ctl', '-D', data, '-l', log, '-w', '-t', '60', '-o', opts, 'start'], { stdio: 'ignore' });
  const env = { ...process.env, PGPASSWORD: password };
  execFileSync(join(bin, 'createdb'), ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', 'rabosh_test'], { env, stdio: 'inherit' });
  // From the server's own directory, like every pg() call: the caller's may be one the postgres
  // user cannot enter (a clone under a 0700 parent), and pg_ctl changes into it.
  const pgCtl = [
    ...(owner ? ['runuser', '-u', 'postgres', '--'] : []),
    join(bin, 'pg_ctl'),
    '-D',
    data,
    '-l',
    log,
    '-w',
    '-t',
    '60',
    '-m',
    'fast',
    'restart',
  ]
    .map(shellQuote)
    .join(' ');
  const restart = `cd ${shellQuote(dir)} && ${pgCtl}`;
  // SIGSTOP / SIGCONT of this server only: its postmaster (first line of postmaster.pid, read
  // at each use since a restart changes it) and the postmaster's children, never another
  // helper's server. The postmaster stops first (no new backends) and continues last.
  const pidFile = shellQuote(join(data, 'postmaster.pid'));
  const signal = (sig, order) =>
    `pm=$(head -n 1 ${pidFile}) && ` +
    (order === 'parent-first' ? `kill -${sig} "$pm" && pkill -${sig} -P "$pm"; true` : `pkill -${sig} -P "$pm"; kill -${sig} "$pm"`);
  code = await run({
    ...process.env,
    RABOSH_PG_URL: `postgres://postgres:${password}@127.0.0.1:${port}/rabosh_test`,
    RABOSH_PG_RESTART: restart,
    RABOSH_PG_STOP: signal('STOP', 'parent-first'),
    RABOSH_PG_CONT: signal('CONT', 'children-first'),
    RABOSH_PG_LOG: log,
    ...(tls ? { RABOSH_PG_CA: tls.ca } : {}),
  });
} catch (e) {
  console.error(`with-postgres: ${e.message}`);
  if (existsSync(log)) console.error(`(server log: ${log}, removed on exit)`);
  code = 1;
} finally {
  cleanup();
}
process.exit(code);

function run(env) {
  return new Promise((resolve) => {
    const child =
      args.length === 1 ? spawn(args[0], { env, stdio: 'inherit', shell: true }) : spawn(args[0], args.slice(1), { env, stdio: 'inherit' });
    current = child;
    child.on('error', (e) => {
      console.error(`with-postgres: ${e.message}`);
      resolve(127);
    });
    child.on('exit', (c, sig) => resolve(c ?? 128 + (sig === 'SIGKILL' ? 9 : 15)));
  });
}

/**
 * Runs a PostgreSQL binary, as the postgres user when this script is root, in the server's own
 * directory: this script's working directory may be one the postgres user cannot enter (a clone
 * under a 0700 parent such as `mktemp -d`), and pg_ctl and initdb change into it.
 */
function pg([name, ...rest], options) {
  const exe = join(bin, name);
  if (owner) return execFileSync('runuser', ['-u', 'postgres', '--', exe, ...rest], { cwd: dir, ...options });
  return execFileSync(exe, rest, { cwd: dir, ...options });
}

/**
 * A test CA and a server certificate it signed for IP 127.0.0.1 only (so a connection by the
 * name `localhost` passes verify-ca and fails verify-full). Needs the openssl command, which
 * Debian's postgresql package brings; without it the server runs without TLS.
 */
function makeCertificates() {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
  } catch {
    console.error('with-postgres: no openssl command; the server runs without TLS');
    return null;
  }
  const f = (name) => join(dir, name);
  const ssl = (...a) => execFileSync('openssl', a, { stdio: 'ignore' });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  ssl(
    'req',
    '-x509',
    ...ec,
    '-keyout',
    f('ca.key'),
    '-out',
    f('ca.crt'),
    '-days',
    '2',
    '-subj',
    '/CN=rabosh test CA',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  );
  ssl('req', ...ec, '-keyout', f('server.key'), '-out', f('server.csr'), '-subj', '/CN=127.0.0.1');
  writeFileSync(
    f('server.ext'),
    'subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n' + 'keyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n',
  );
  ssl(
    'x509',
    '-req',
    '-in',
    f('server.csr'),
    '-CA',
    f('ca.crt'),
    '-CAkey',
    f('ca.key'),
    '-CAcreateserial',
    '-out',
    f('server.crt'),
    '-days',
    '2',
    '-extfile',
    f('server.ext'),
  );
  if (owner) {
    chownSync(f('server.key'), owner.uid, owner.gid);
    chownSync(f('server.crt'), owner.uid, owner.gid);
  }
  return { ca: f('ca.crt'), cert: f('server.crt'), key: f('server.key') };
}

/** A fresh machine of the project's kind (root, Debian) gets the binaries installed, once. */
function findOrInstallBin() {
  try {
    return findBin();
  } catch (e) {
    const script = fileURLToPath(new URL('./install-postgres.sh', import.meta.url));
    const r = spawnSync('bash', [script], { stdio: 'inherit' });
    if (r.status !== 0) throw e;
    return findBin();
  }
}

function shellQuote(s) {
  return /^[A-Za-z0-9_./=:-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}
