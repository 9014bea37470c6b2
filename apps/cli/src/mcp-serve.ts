/**
 * `rabosh-memory mcp`, running: the memory tool and the memories over MCP on stdin/stdout (see
 * src/mcp/server.ts), for as long as the client keeps stdin open. stdout carries protocol
 * messages only: anything else this process prints goes to stderr.
 */
import type { Writable } from 'node:stream';
import { DEFAULT_MAX_MEMORY_BYTES, Rabosh, RaboshMemoryToolHandler, type MemoryToolOptions } from 'rabosh-memory';
import { MemoryServer } from './mcp/server.js';
import { StdioTransport, requestLimit } from './mcp/stdio.js';
import { CliError, EXIT, asCliError } from './exit.js';
import { withKeyFile } from './key-open.js';
import { POLL_MS, type McpOptions } from './mcp-options.js';
import { isUrl, storeName } from './target.js';

function handlerOptions(opts: McpOptions): MemoryToolOptions {
  return {
    ...(opts.scope === undefined ? {} : { scope: opts.scope }),
    ...(opts.maxMemoryBytes === undefined ? {} : { maxMemoryBytes: opts.maxMemoryBytes }),
    ...(opts.viewMaxChars === undefined ? {} : { viewMaxChars: opts.viewMaxChars }),
  };
}

/**
 * Points `process.stdout.write` (and so `console.log`) at stderr for the rest of the process's
 * life (after the server stops too: a client may still be reading stdout); returns the real
 * writer, for the transport.
 */
function guardStdout(): Writable {
  const stdout = process.stdout;
  const wire = { write: stdout.write.bind(stdout), once: stdout.once.bind(stdout) } as unknown as Writable;
  stdout.write = process.stderr.write.bind(process.stderr) as typeof stdout.write;
  return wire;
}

/** Resolves at stdin's end, at SIGTERM or SIGINT, when stdout breaks, or when the transport closes. */
function untilDone(server: MemoryServer): Promise<string> {
  return new Promise((resolve) => {
    const signals = ['SIGTERM', 'SIGINT'] as const;
    const done = (why: string) => {
      for (const s of signals) process.off(s, onSignal);
      resolve(why);
    };
    const onSignal = (s: NodeJS.Signals) => done(s);
    for (const s of signals) process.on(s, onSignal);
    process.stdin.once('end', () => done('end of input'));
    process.stdin.once('close', () => done('input closed'));
    // A client that stops reading (EPIPE) is a client gone, not a crash.
    process.stdout.on('error', () => done('output closed'));
    server.server.onclose = () => done('transport closed');
  });
}

export async function serve(dir: string, opts: McpOptions, version: string): Promise<void> {
  if (opts.exclusive === true && isUrl(dir)) {
    throw new CliError('--exclusive is for a store directory: a PostgreSQL store is always shared', EXIT.usage, 'CLI_USAGE');
  }
  const log = (line: string) => void process.stderr.write(`${line}\n`);
  const wire = guardStdout();
  try {
    let db: Rabosh;
    try {
      // History is the store's: --history turns it on; without it the store's own setting holds.
      db = await withKeyFile(opts.keyFile, (encryption) =>
        Rabosh.open(dir, {
          ...(opts.history === true ? { history: true } : {}),
          exclusive: opts.exclusive === true,
          ...encryption,
        }),
      );
    } catch (e) {
      throw asCliError(e, storeName(dir));
    }
    try {
      // Bad handler options are the command line's fault: refuse them before serving anything.
      new RaboshMemoryToolHandler(db, handlerOptions(opts));
      const server = new MemoryServer(db, {
        handler: handlerOptions(opts),
        version,
        pollMs: opts.pollMs ?? POLL_MS,
        sharedSeq: !isUrl(dir),
        log,
      });
      const done = untilDone(server);
      await server.watch();
      await server.server.connect(new StdioTransport(process.stdin, wire, requestLimit(opts.maxMemoryBytes ?? DEFAULT_MAX_MEMORY_BYTES)));
      log(`rabosh-memory mcp: serving ${storeName(dir)} on stdio`);
      const why = await done;
      log(`rabosh-memory mcp: ${why}; closing the store`);
      await server.stop();
      await server.server.close();
    } catch (e) {
      throw asCliError(e, storeName(dir));
    } finally {
      await db.close();
    }
  } finally {
    // Nothing more is read: without this, a stdin the client still holds open (at a signal)
    // would keep the process alive.
    process.stdin.destroy();
  }
}
