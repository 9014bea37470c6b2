#!/usr/bin/env node
// A throwaway PostgreSQL primary with one synchronous standby on 127.0.0.1, for the failover
// tests. Started from the machine's binaries (as scripts/with-postgres.mjs finds them) in a
// temporary directory, on free ports, as the `postgres` user when run as root (initdb refuses
// root), with trust authentication on 127.0.0.1 (nothing here outlives the run).
//
// Driven over stdin, one command a line; each answer is one line on stdout (`ok …` or
// `error …`). The first line printed is `ready <primary port> <standby port>`.
//
//   kill <node>        SIGKILL the node's postmaster and every backend (a crashed machine)
//   stop <node>        a clean stop in fast mode (an operator's switchover)
//   promote <node>     promote a standby and wait until it takes writes
//   start <node>       start a stopped node with no synchronous standby: a failed primary
//                      an operator restarts by mistake comes back as a primary of its own
//
// <node> is 0 (the first primary) or 1 (the first standby). End of input, or a signal, stops
// both servers and removes the directory.

import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { findBin, freePort, userIds } from './pg-local.mjs';

const bin = findBin();
const owner = process.getuid?.() === 0 ? userIds('postgres') : null;
const dir = mkdtempSync(join(tmpdir(), 'rabosh-pg-cluster-'));
if (owner) chownSync(dir, owner.uid, owner.gid);
const nodes = [0, 1].map((i) => ({ data: join(dir, `node${i}`), log: join(dir, `node${i}.log`), port: 0 }));

let cleaned = false;
function cleanup() {
  if (cleaned) return;
  cleaned = true;
  for (const n of nodes) {
    if (existsSync(join(n.data, 'postmaster.pid'))) {
      try {
        pg(['pg_ctl', '-D', n.data, '-m', 'immediate', '-w', 'stop']);
      } catch {
        // Already down.
      }
    }
  }
  rmSync(dir, { recursive: true, force: true });
}
process.on('exit', cleanup);
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(sig, () => process.exit(1));
}

try {
  for (const n of nodes) n.port = await freePort();
  const [primary, standby] = nodes;
  pg(['initdb', '-D', primary.data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C', '--no-sync']);
  // On the command line, not in the configuration file: the standby's copy of that file then
  // names no synchronous standby, so once promoted it commits alone.
  start(primary, "-c synchronous_standby_names='*'");
  pg([
    'pg_basebackup',
    '-h',
    '127.0.0.1',
    '-p',
    String(primary.port),
    '-U',
    'postgres',
    '-D',
    standby.data,
    '-R',
    '-X',
    'stream',
    '-c',
    'fast',
    '--no-sync',
  ]);
  start(standby, '');
  // Ready once the standby streams as the synchronous one: commits then wait for it.
  const deadline = Date.now() + 30_000;
  while (psql(primary, "SELECT count(*) FROM pg_stat_replication WHERE sync_state = 'sync'") !== '1') {
    if (Date.now() > deadline) throw new Error('the standby did not become synchronous');
    await new Promise((r) => setTimeout(r, 50));
  }
  console.log(`ready ${primary.port} ${standby.port}`);
} catch (e) {
  console.error(`pg-cluster: ${e.message}`);
  process.exit(1);
}

for await (const line of createInterface({ input: process.stdin })) {
  const [command, which] = line.trim().split(/\s+/);
  const node = nodes[Number(which)];
  try {
    if (!node) throw new Error(`no node ${which}`);
    if (command === 'kill') kill(node);
    else if (command === 'stop') pg(['pg_ctl', '-D', node.data, '-m', 'fast', '-w', 'stop']);
    else if (command === 'promote') pg(['pg_ctl', '-D', node.data, '-w', '-t', '30', 'promote']);
    else if (command === 'start') start(node, "-c synchronous_standby_names=''");
    else throw new Error(`unknown command ${command}`);
    console.log('ok');
  } catch (e) {
    console.log(`error ${e.message.split('\n')[0]}`);
  }
}
process.exit(0);

function start(node, extra) {
  const opts = `-c listen_addresses=127.0.0.1 -p ${node.port} -c unix_socket_directories=${dir} -c fsync=off -c max_connections=100 ${extra}`;
  pg(['pg_ctl', '-D', node.data, '-l', node.log, '-w', '-t', '60', '-o', opts, 'start']);
}

/** The postmaster and its children at once, so no backend outlives it to answer a client. */
function kill(node) {
  const pm = Number(readFileSync(join(node.data, 'postmaster.pid'), 'utf8').split('\n')[0]);
  let children = [];
  try {
    children = execFileSync('pgrep', ['-P', String(pm)])
      .toString()
      .trim()
      .split('\n')
      .map(Number);
  } catch {
    // No children.
  }
  for (const pid of [pm, ...children]) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Gone already.
    }
  }
  // Answered once every backend has exited (so every client socket is closed) and the
  // postmaster is reaped (a later start refuses while its pid exists, even as a zombie).
  const deadline = Date.now() + 5000;
  while ((exists(pm) || children.some(running)) && Date.now() < deadline) execFileSync('sleep', ['0.01']);
}

function exists(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Exists and is not a zombie (which has closed its sockets; PID 1 reaps it in its own time). */
function running(pid) {
  if (!exists(pid)) return false;
  try {
    // The state follows the command name in parentheses.
    return !/\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
}

function psql(node, sql) {
  return pg(['psql', '-h', '127.0.0.1', '-p', String(node.port), '-U', 'postgres', '-At', '-c', sql])
    .toString()
    .trim();
}

/** Runs a PostgreSQL binary, as the postgres user when root, from the cluster's own directory. */
function pg([name, ...rest]) {
  const exe = join(bin, name);
  const options = { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] };
  if (owner) return execFileSync('runuser', ['-u', 'postgres', '--', exe, ...rest], options);
  return execFileSync(exe, rest, options);
}
