/**
 * The history subcommands (docs/guide/history.md): `history`, `show`, `revert`, `redact`. Like the other
 * read commands they open with `create: false`, so a missing, empty or non-store directory is
 * refused and left as it was; and they refuse a store that does not record history (a revert
 * from the shell is then recorded like any other change, since history is the store's).
 */
import type { Command } from 'commander';
import { Rabosh, RaboshMemoryToolHandler, type MemoryVersion } from 'rabosh-memory';
import { CliError, EXIT, asCliError } from './exit.js';
import { withKeyFile } from './key-open.js';
import { holdsNothing, isNotAStore, isUrl, noStore, refuseNonDirectory, storeName } from './target.js';

interface Common {
  json?: boolean;
  scope?: string;
  keyFile?: string;
}

type Sub = (name: string, description: string) => Command;
type Out = (opts: Common, human: string, json: unknown) => void;

async function withHandler<T>(dir: string, opts: Common, work: (h: RaboshMemoryToolHandler) => Promise<T>): Promise<T> {
  refuseNonDirectory(dir);
  const url = isUrl(dir);
  if (!url && holdsNothing(dir)) throw noStore(dir);
  let db: Rabosh;
  try {
    db = await withKeyFile(opts.keyFile, (encryption) => Rabosh.open(dir, { create: false, ...encryption }));
  } catch (e) {
    if (isNotAStore(e)) throw noStore(dir);
    throw asCliError(e, storeName(dir));
  }
  try {
    if (db.stats().history === undefined) {
      throw new CliError(
        `${storeName(dir)} does not record history (open it once with history: true to turn it on)`,
        EXIT.failed,
        'CLI_NO_HISTORY',
      );
    }
    return await work(new RaboshMemoryToolHandler(db, opts.scope === undefined ? {} : { scope: opts.scope }));
  } finally {
    await db.close();
  }
}

const json = (v: MemoryVersion) => ({
  ...v,
  createdAt: v.createdAt.toISOString(),
  redactedAt: v.redactedAt?.toISOString() ?? null,
});

function line(v: MemoryVersion): string {
  const who = v.actor === null ? '' : `  ${v.actor.type}:${v.actor.id}`;
  const what = v.redactedAt !== null ? `redacted ${v.redactedAt.toISOString()}` : `${v.path ?? ''}  ${v.sizeBytes ?? '-'} B`;
  return `${v.id}  ${v.createdAt.toISOString()}  ${v.operation.padEnd(8)}  ${what}${who}`;
}

function positiveInt(raw: string): number {
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(n) || n < 1 || n > 10_000) {
    throw new CliError(`invalid --limit ${JSON.stringify(raw)}: an integer from 1 to 10000`, EXIT.usage, 'CLI_USAGE');
  }
  return n;
}

export function addHistoryCommands(sub: Sub, out: Out): void {
  sub('history', 'list the recorded versions of a memory (or of a directory with --prefix), newest first')
    .argument('<dir>', 'store directory or postgres:// URL')
    .argument('<path>', 'memory path')
    .option('--prefix', 'every memory at or below <path>')
    .option('--limit <n>', 'at most this many versions (default 100)', positiveInt)
    .action(async (dir: string, path: string, opts: Common & { prefix?: boolean; limit?: number }) => {
      await withHandler(dir, opts, async (h) => {
        const page = await h.versions({ ...(opts.prefix ? { pathPrefix: path } : { path }), limit: opts.limit ?? 100 });
        const human = page.data.length === 0 ? `no versions of ${path}` : page.data.map(line).join('\n');
        out(opts, human, { data: page.data.map(json), nextCursor: page.nextCursor ?? null });
      });
    });

  sub('show', 'print one version and its content')
    .argument('<dir>', 'store directory or postgres:// URL')
    .argument('<versionId>', 'version id (32 hex digits)')
    .action(async (dir: string, id: string, opts: Common) => {
      await withHandler(dir, opts, async (h) => {
        const v = await h.version(id);
        // An error, so on stderr like every other (as {"error":…} with --json).
        if (v === null) throw new CliError(`no version ${id}`, EXIT.failed, 'CLI_NO_VERSION');
        out(opts, `${line(v)}\n${v.contentSha256 ?? ''}\n\n${v.content ?? '(no content)'}`, { ...json(v), content: v.content });
      });
    });

  sub('revert', "write a version's content back at a path, as a new version")
    .argument('<dir>', 'store directory or postgres:// URL')
    .argument('<path>', 'memory path')
    .argument('<versionId>', 'version id (32 hex digits)')
    .action(async (dir: string, path: string, id: string, opts: Common) => {
      await withHandler(dir, opts, async (h) => {
        // A revert to the content the memory already holds writes nothing and answers with the
        // memory's current version, so "nothing changed" is told by the id it had before.
        const before = (await h.versions({ path, limit: 1 })).data[0]?.id ?? null;
        const r = await h.revert(path, id);
        const changed = r.versionId !== null && r.versionId !== before;
        out(opts, changed ? `reverted ${path}: version ${r.versionId}` : `nothing changed: ${path} already holds the content of version ${id}`, {
          path,
          ...r,
          changed,
        });
      });
    });

  sub('redact', "forget a version's content, path, hash and size, then compact the store")
    .argument('<dir>', 'store directory or postgres:// URL')
    .argument('<versionId>', 'version id (32 hex digits)')
    .action(async (dir: string, id: string, opts: Common) => {
      await withHandler(dir, opts, async (h) => {
        const v = await h.redact(id);
        out(opts, `redacted ${v.id} at ${v.redactedAt?.toISOString() ?? ''}; the store is compacted`, json(v));
      });
    });
}
