/**
 * `rabosh-memory`: look after a store from the shell. Each subcommand opens the store, does
 * one thing, closes it, and prints either a line for a person or one JSON document (--json).
 */
import { Command, CommanderError, Option } from 'commander';
import {
  DEFAULT_MAX_MEMORY_BYTES,
  DEFAULT_VIEW_MAX_CHARS,
  type ImportResult,
  InvalidArgumentError,
  Rabosh,
  RaboshMemoryToolHandler,
  type RaboshStats,
} from 'rabosh-memory';
import { parseBefore } from './dates.js';
import { CLI_ACTOR, addHistoryCommands } from './history.js';
import { addUiCommand } from './inspector/command.js';
import { bytesText } from './inspector/page/bytes.js';
import { addSyncCommand } from './sync.js';
import { CliError, EXIT, asCliError } from './exit.js';
import { addMcpCommand } from './mcp.js';
import { addEncryptionCommands } from './encrypt.js';
import { withKeyFile } from './key-open.js';
import { startProgress, startStatus, wantProgress } from './progress.js';
import { holdsNothing, isNotAStore, isUrl, noStore, refuseNonDirectory, storeName } from './target.js';
import { readTree, writeTree } from './tree.js';

export interface Io {
  stdout: { write(s: string): unknown; isTTY?: boolean };
  stderr: { write(s: string): unknown; isTTY?: boolean };
  /** The package version, for --version. */
  version?: string;
}

interface Common {
  json?: boolean;
  scope?: string;
  keyFile?: string;
}

/** `1 memory`, `2 memories`. */
export function count(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** The library's advice on an import conflict names its option; from the shell it is a flag. */
const API_OVERWRITE = 'pass overwrite: true';

/** The store's scope pattern, checked before any store is opened so a bad one is a usage error. */
const SCOPE = /^[A-Za-z0-9_.-]{1,64}$/;

function scopeArg(raw: string): string {
  if (!SCOPE.test(raw)) throw new CliError(`invalid --scope ${JSON.stringify(raw)}: 1 to 64 of A-Z a-z 0-9 _ . -`, EXIT.usage, 'CLI_USAGE');
  return raw;
}

/**
 * Opens the store in `dir` (a directory or a PostgreSQL URL) for one command. Only `import` may
 * create one (`create`); every other command opens with `create: false`, so a missing, empty or
 * non-store directory, or a schema without a store, is refused and left exactly as it was.
 */
async function withStore<T>(dir: string, create: boolean, opts: Common, work: (db: Rabosh) => Promise<T>): Promise<T> {
  refuseNonDirectory(dir);
  if (!create && !isUrl(dir) && holdsNothing(dir)) throw noStore(dir);
  let db: Rabosh;
  try {
    db = await withKeyFile(opts.keyFile, (encryption) => Rabosh.open(dir, { create, ...encryption }));
  } catch (e) {
    if (isNotAStore(e) && isUrl(dir)) throw noStore(dir);
    throw asCliError(e, storeName(dir));
  }
  try {
    return await work(db);
  } finally {
    await db.close();
  }
}

function handlerFor(db: Rabosh, opts: Common, extra: Record<string, unknown> = {}): RaboshMemoryToolHandler {
  return new RaboshMemoryToolHandler(db, { ...(opts.scope === undefined ? {} : { scope: opts.scope }), actor: CLI_ACTOR, ...extra });
}

function parseRange(raw: string): [number, number] {
  const m = /^(-?\d+)[,:](-?\d+)$/.exec(raw.trim());
  if (!m)
    throw new CliError(`invalid --range ${JSON.stringify(raw)}: use START,END (1-based; END -1 = to the end)`, EXIT.usage, 'CLI_USAGE');
  return [Number(m[1]), Number(m[2])];
}

function positiveInt(name: string) {
  return (raw: string): number => {
    const n = Number(raw);
    if (!/^\d+$/.test(raw) || !Number.isSafeInteger(n) || n < 1) {
      throw new CliError(`invalid ${name} ${JSON.stringify(raw)}: a positive integer`, EXIT.usage, 'CLI_USAGE');
    }
    return n;
  };
}

/**
 * The figures of `stats` that describe the store. The rest count what one open handle did since
 * it opened (commits, fsyncs, values read, bytes written, compactions, pinned snapshots): from a
 * command that has just opened the store they are always 0, so the CLI leaves them out.
 */
function storeFigures(s: RaboshStats): Pick<RaboshStats, 'liveBytes' | 'deadBytes' | 'files' | 'keys' | 'seq' | 'history'> {
  const { liveBytes, deadBytes, files, keys, seq, history } = s;
  return { liveBytes, deadBytes, files, keys, seq, ...(history === undefined ? {} : { history }) };
}

/** Shown after every --help: what docs/guide/cli.md says about output and exit codes. */
const HELP_FOOTER = `
Every command takes --scope <name> (default: "default") and --json: one JSON document on stdout
instead of text (mcp: stdout carries JSON-RPC either way); errors as {"error":{"code","message",...}}
on stderr.

Exit codes:
  0  ok
  1  the operation failed (including a view that finds nothing, a missing store, corruption)
  2  bad command line (unknown command or option, bad value)
  3  the store is open exclusively elsewhere; the message names the holder's pid and host
`;

export function buildProgram(io: Io, done: (exitCode: number) => void): Command {
  const out = (opts: Common, human: string, json: unknown) => {
    io.stdout.write(opts.json ? `${JSON.stringify(json)}\n` : `${human}\n`);
  };
  const program = new Command('rabosh-memory')
    .description('Inspect and look after a rabosh-memory store from the shell.')
    .version(io.version ?? 'unknown', '-V, --version')
    .showHelpAfterError()
    .configureOutput({ writeOut: (s) => io.stdout.write(s), writeErr: (s) => io.stderr.write(s) })
    .exitOverride()
    .addHelpText('after', HELP_FOOTER);

  const sub = (name: string, description: string) =>
    program
      .command(name)
      .description(description)
      .option('--json', 'print one JSON document on stdout instead of text (errors as JSON on stderr)')
      .addOption(new Option('--scope <scope>', 'memory scope inside the store (default: "default")').argParser(scopeArg))
      .option('--key-file <path>', "the encrypted store's key: 32 raw bytes, 64 hex or 44 base64 characters")
      .addHelpText('after', HELP_FOOTER);

  sub('view', 'print what the model sees for a path (default /memories)')
    .argument('<dir>', 'store directory or postgres:// URL')
    .argument('[path]', 'memory path', '/memories')
    .option('--range <start,end>', 'lines to show, like view_range (default: the whole file)', parseRange)
    .option('--max-chars <n>', `cap on a rendered file view, viewMaxChars (default: ${DEFAULT_VIEW_MAX_CHARS})`, positiveInt('--max-chars'))
    .action(async (dir: string, path: string, opts: Common & { range?: [number, number]; maxChars?: number }) => {
      await withStore(dir, false, opts, async (db) => {
        const handler = handlerFor(db, opts, opts.maxChars === undefined ? {} : { viewMaxChars: opts.maxChars });
        const result = await handler.execute({ command: 'view', path, ...(opts.range ? { view_range: opts.range } : {}) });
        out(opts, result.text, { path, text: result.text, isError: result.isError });
        if (result.isError) done(EXIT.failed);
      });
    });

  sub('usage', 'count the memories of a scope and their bytes')
    .argument('<dir>', 'store directory or postgres:// URL')
    .action(async (dir: string, opts: Common) => {
      await withStore(dir, false, opts, async (db) => {
        const u = await handlerFor(db, opts).usage();
        out(opts, `${count(u.memories, 'memory', 'memories')}, ${bytesText(u.bytes)} (${count(u.bytes, 'byte', 'bytes')})`, u);
      });
    });

  sub('export', 'write every memory of a scope as plain files under <to>/memories/')
    .argument('<dir>', 'store directory or postgres:// URL')
    .argument('<to>', 'target directory')
    .action(async (dir: string, to: string, opts: Common) => {
      await withStore(dir, false, opts, async (db) => {
        const handler = handlerFor(db, opts);
        // Written as read, a page at a time: the bar's total is the count before the export began.
        const total = (await handler.usage()).memories;
        const bar = startProgress(wantProgress(io.stdout.isTTY, opts.json === true), 'export', total, io.stderr);
        try {
          const { memories, bytes } = await writeTree(to, handler.exportStream(), bar);
          bar.stop();
          out(opts, `exported ${count(memories, 'memory', 'memories')} (${bytesText(bytes)}) to ${to}`, {
            memories,
            bytes,
            to,
          });
        } finally {
          bar.stop();
        }
      });
    });

  sub('import', 'load <from>/memories/** into a scope, all in one commit')
    .argument('<from>', 'source directory (holding memories/)')
    .argument('<dir>', 'store directory or postgres:// URL (created if absent)')
    .option('--overwrite', 'replace memories that already exist instead of refusing the import')
    .action(async (from: string, dir: string, opts: Common & { overwrite?: boolean }) => {
      const tty = wantProgress(io.stdout.isTTY, opts.json === true);
      const { files } = await readTree(from, DEFAULT_MAX_MEMORY_BYTES, (total) => startProgress(tty, 'read', total, io.stderr));
      await withStore(dir, true, opts, async (db) => {
        const status = startStatus(tty, `committing ${count(files.length, 'memory', 'memories')}…`, io.stderr);
        let r: ImportResult;
        try {
          r = await handlerFor(db, opts).importMemories(files, { overwrite: opts.overwrite === true });
        } catch (e) {
          // The API's advice names its option; from the shell the same thing is a flag.
          if (e instanceof InvalidArgumentError && e.message.includes(API_OVERWRITE)) {
            throw new CliError(e.message.replace(API_OVERWRITE, 'pass --overwrite'), EXIT.failed, e.code);
          }
          throw e;
        } finally {
          status.stop();
        }
        out(opts, `imported ${count(r.memories, 'memory', 'memories')} (${bytesText(r.bytes)}) in one commit`, r);
      });
    });

  sub('expire', 'delete memories last updated before a date, then compact')
    .argument('<dir>', 'store directory or postgres:// URL')
    .requiredOption('--before <date>', 'ISO 8601 date, epoch ms, or an age like 30d / 12h / 90m', (v) => v)
    .action(async (dir: string, opts: Common & { before: string }) => {
      const before = parseBefore(opts.before);
      await withStore(dir, false, opts, async (db) => {
        const deleted = await handlerFor(db, opts).expireBefore(before);
        out(opts, `expired ${count(deleted, 'memory', 'memories')} last updated before ${before.toISOString()}`, {
          deleted,
          before: before.toISOString(),
        });
      });
    });

  sub('checkpoint', 'write a durable, openable copy of the store into <to> (empty or absent)')
    .argument('<dir>', 'store directory or postgres:// URL')
    .argument('<to>', 'checkpoint directory')
    .action(async (dir: string, to: string, opts: Common) => {
      await withStore(dir, false, opts, async (db) => {
        const info = await db.checkpoint(to);
        out(opts, `checkpoint at commit ${info.seq} written to ${to}${info.hardLinked ? ' (data files hard-linked)' : ''}`, {
          ...info,
          to,
        });
      });
    });

  sub('verify', 'read every record and check every checksum')
    .argument('<dir>', 'store directory or postgres:// URL')
    .action(async (dir: string, opts: Common) => {
      await withStore(dir, false, opts, async (db) => {
        const r = await db.verify();
        out(
          opts,
          `ok: ${count(r.records, 'record', 'records')} in ${count(r.files, 'file', 'files')}, ${count(r.keys, 'live key', 'live keys')}`,
          { ok: true, ...r },
        );
      });
    });

  sub('stats', "print the store's size: live and dead bytes, files, keys, last commit")
    .argument('<dir>', 'store directory or postgres:// URL')
    .action(async (dir: string, opts: Common) => {
      await withStore(dir, false, opts, async (db) => {
        const s = storeFigures(db.stats());
        const { history, ...figures } = s;
        // Every figure is a number but history's, which is two: said in words.
        const lines: [string, string | number][] = Object.entries(figures);
        if (history !== undefined) {
          lines.push([
            'history',
            `${count(history.versions, 'version', 'versions')}, ${bytesText(history.bytes)} (${count(history.bytes, 'byte', 'bytes')})`,
          ]);
        }
        const width = Math.max(...lines.map(([k]) => k.length));
        out(opts, lines.map(([k, v]) => `${k.padEnd(width)}  ${v}`).join('\n'), s);
      });
    });

  addHistoryCommands(sub, out);
  addEncryptionCommands(sub, out);
  addMcpCommand(program, { version: io.version, scope: scopeArg, positiveInt });
  addUiCommand(sub, out);
  addSyncCommand(sub, out, io.stderr, io.stdout.isTTY);

  return program;
}

/** Runs one command line; resolves to the process exit code. */
export async function run(argv: string[], io: Io): Promise<number> {
  let exitCode: number = EXIT.ok;
  const program = buildProgram(io, (code) => {
    exitCode = code;
  });
  const json = argv.includes('--json');
  try {
    await program.parseAsync(argv, { from: 'user' });
    return exitCode;
  } catch (e) {
    if (e instanceof CommanderError) {
      // Help and version are not errors; anything else commander rejects is a usage error.
      return e.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    const err = asCliError(e);
    if (json) {
      io.stderr.write(`${JSON.stringify({ error: { code: err.code, message: err.message, ...err.details } })}\n`);
    } else {
      io.stderr.write(`rabosh-memory: ${err.message}\n`);
    }
    return err.exitCode;
  }
}
