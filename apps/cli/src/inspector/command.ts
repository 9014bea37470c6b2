/**
 * `rabosh-memory ui <dir | url>`: open the store (never creating one), serve the inspector,
 * print its URL, and serve until SIGINT or SIGTERM; then stop serving and close the store.
 */
import type { Command } from 'commander';
import { NotAStoreError, Rabosh, RaboshMemoryToolHandler } from 'rabosh-memory';
import { CliError, EXIT, asCliError } from '../exit.js';
import { withKeyFile } from '../key-open.js';
import { isUrl, noStore, storeName } from '../target.js';
import { startInspector } from './server.js';

interface UiOptions {
  json?: boolean;
  scope?: string;
  port: number;
  keyFile?: string;
}

/** Who the inspector's reverts are recorded as in the history. */
const ACTOR = { type: 'user', id: 'inspector' } as const;

function portArg(raw: string): number {
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n > 65_535)
    throw new CliError(`invalid --port ${JSON.stringify(raw)}: 0 to 65535 (0 picks a free one)`, EXIT.usage, 'CLI_USAGE');
  return n;
}

function untilSignal(): Promise<void> {
  return new Promise((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}

// History is the store's own setting (docs/guide/history.md): the page neither turns it on nor off.
async function open(dir: string, keyFile: string | undefined): Promise<Rabosh> {
  try {
    return await withKeyFile(keyFile, (encryption) => Rabosh.open(dir, { create: false, ...encryption }));
  } catch (e) {
    if (e instanceof NotAStoreError) throw noStore(dir);
    throw asCliError(e, storeName(dir));
  }
}

export function addUiCommand(
  sub: (name: string, description: string) => Command,
  out: (opts: { json?: boolean }, human: string, json: unknown) => void,
): void {
  sub('ui', 'serve a local web page to inspect the store (tree, content, history, revert, redact) until Ctrl+C')
    .argument('<dir>', 'store directory or postgres:// URL')
    .option('--port <n>', 'port on 127.0.0.1 (default: a free one)', portArg, 0)
    .action(async (dir: string, opts: UiOptions) => {
      const db = await open(dir, opts.keyFile);
      try {
        const handler = new RaboshMemoryToolHandler(db, { ...(opts.scope === undefined ? {} : { scope: opts.scope }), actor: ACTOR });
        let inspector: Awaited<ReturnType<typeof startInspector>>;
        try {
          inspector = await startInspector({
            db,
            handler,
            port: opts.port,
            info: {
              name: storeName(dir),
              backend: isUrl(dir) ? 'postgresql' : 'directory',
              scope: opts.scope ?? 'default',
              // Not stats(): its counts walk the key directory, seconds at a million memories.
              history: db.historySince !== null,
              actor: ACTOR,
            },
          });
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code === 'EADDRINUSE')
            throw new CliError(`port ${opts.port} on 127.0.0.1 is in use`, EXIT.failed, 'CLI_PORT_IN_USE');
          throw e;
        }
        // Listen for the signal before telling anyone where to send it.
        const stopped = untilSignal();
        out(opts, inspector.url, { url: inspector.url });
        await stopped;
        await inspector.close();
      } finally {
        await db.close();
      }
    });
}
