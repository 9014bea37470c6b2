// Runs scripts/with-postgres.mjs's server commands (RABOSH_PG_RESTART, RABOSH_PG_STOP,
// RABOSH_PG_CONT: shell commands for the Linux server) for a test binary that cannot: a Windows
// process under Wine can start a Linux program but not wait for it or read its exit status (its
// CreateProcess returns no handle), and there is no `sh` on the Windows side. The binary
// connects to 127.0.0.1:<port> (RABOSH_PG_CONTROL, read by the memory crate's postgres_util),
// sends a variable's name on one line and reads back the command's exit status.
import { exec } from 'node:child_process';
import { createServer } from 'node:net';

const COMMANDS = ['RABOSH_PG_RESTART', 'RABOSH_PG_STOP', 'RABOSH_PG_CONT'];

/** Starts the control server; resolves its `host:port` and a function that closes it. */
export function startPgControl() {
  const server = createServer((socket) => {
    let line = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk) => {
      line += chunk;
      const end = line.indexOf('\n');
      if (end < 0) return;
      const name = line.slice(0, end).trim();
      const cmd = COMMANDS.includes(name) ? process.env[name] : undefined;
      if (!cmd) {
        socket.end(`error: ${name} is not a server command here\n`);
        return;
      }
      exec(cmd, { shell: '/bin/sh' }, (err) => socket.end(`${err ? (err.code ?? 1) : 0}\n`));
    });
    socket.on('error', () => {});
  });
  return new Promise((resolve, reject) => {
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const a = server.address();
      if (!a || typeof a === 'string') return reject(new Error('the control server has no port'));
      resolve({
        address: `127.0.0.1:${a.port}`,
        close: () => new Promise((done) => server.close(() => done())),
      });
    });
  });
}
