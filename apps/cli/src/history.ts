/**
 * The history subcommands (docs/guide/history.md): `history-on`, `history`, `show`, `revert`, `redact`.
 * `history-on` turns the store's history on (it stays on, as for every opener). Like the other
 * read commands they open with `create: false`, so a missing, empty or non-store directory is
 * refused and left as it was; and they refuse a store that does not record history (a revert
 * from the shell is then recorded like any other change, since history is the store's).
 */
import type { Command } from 'commander';
import { DEFAULT_VERSION_PAGE, MAX_VERSION_PAGE, Rabosh, RaboshMemoryToolHandler, type MemoryVersion } from 'rabosh-memory';
import { CliError, EXIT, asCliError } from './exit.js';
import { withKeyFile } from './key-open.js';
import { holdsNothing, isNotAStore, isUrl, noStore, refuseNonDirectory, storeName } from './target.js';

interface Common {
  json?: boolean;
  scope?: string;
  keyFile?: string;
}

/** Who the CLI's changes (import, expire, revert) are recorded as, as the inspector and MCP server name theirs. */
export const CLI_ACTOR = { type: 'user', id: 'cli' } as const;

/**
 * The versions of the memory at `path`, newest first, following it through renames (its
 * memoryId) to its earlier names; a path no memory's newest version holds falls back to the
 * versions recorded at that path. The CLI's `history` and the inspector answer with this one.
 */
export async function memoryVersions(h: RaboshMemoryToolHandler, path: string, page: { limit: number; cursor?: string }) {
  const newest = (await h.versions({ path, limit: 1 })).data[0];
  return h.versions({ ...(newest === undefined ? { path } : { memoryId: newest.memoryId }), ...page });
}

type Sub = (name: string, description: string) => Command;
type Out = (opts: Common, human: string, json: unknown) => void;

/** Opens an existing store (never creating one); `history: true` turns its history on. */
async function openStore(dir: string, opts: Common, history: boolean): Promise<Rabosh> {
  refuseNonDirectory(dir);
  if (!isUrl(dir) && holdsNothing(dir)) throw noStore(dir);
  try {
    return await withKeyFile(opts.keyFile, (encryption) =>
      Rabosh.open(dir, { create: false, ...(history ? { history: true } : {}), ...encryption }),
    );
  } catch (e) {
    if (isNotAStore(e)) throw noStore(dir);
    throw asCliError(e, storeName(dir));
  }
}

async function withHandler<T>(dir: string, opts: Common, work: (h: RaboshMemoryToolHandler) => Promise<T>): Promise<T> {
  const db = await openStore(dir, opts, false);
  try {
    // Not stats(): its counts walk the key directory, seconds at a million memories.
    if (db.historySince === null) {
      // A URL may carry a password: the advice spells the command without it.
      const target = isUrl(dir) ? '<url>' : dir;
      throw new CliError(
        `${storeName(dir)} does not record history: turn it on with \`rabosh-memory history-on ${target}\` (changes are recorded from then on, not before)`,
        EXIT.failed,
        'CLI_NO_HISTORY',
      );
    }
    return await work(new RaboshMemoryToolHandler(db, { ...(opts.scope === undefined ? {} : { scope: opts.scope }), actor: CLI_ACTOR }));
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
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(n) || n < 1 || n > MAX_VERSION_PAGE) {
    throw new CliError(`invalid --limit ${JSON.stringify(raw)}: an integer from 1 to ${MAX_VERSION_PAGE}`, EXIT.usage, 'CLI_USAGE');
  }
  return n;
}

export function addHistoryCommands(sub: Sub, out: Out): void {
  sub('history-on', 'turn version history on for a store: every change from now on is recorded (it stays on)')
    .argument('<dir>', 'store directory or postgres:// URL')
    .action(async (dir: string, opts: Common) => {
      const db = await openStore(dir, opts, true);
      try {
        const since = (db.historySince ?? new Date()).toISOString();
        out(opts, `${storeName(dir)} records history since ${since}: every change from then on is a version; earlier ones have none`, {
          history: true,
          since,
        });
      } finally {
        await db.close();
      }
    });

  sub('history', 'list the recorded versions of a memory (or of a directory with --prefix), newest first')
    .argument('<dir>', 'store directory or postgres:// URL')
    .argument('<path>', 'memory path')
    .option('--prefix', 'every memory at or below <path>')
    .option('--limit <n>', `at most this many versions (default ${DEFAULT_VERSION_PAGE})`, positiveInt)
    .action(async (dir: string, path: string, opts: Common & { prefix?: boolean; limit?: number }) => {
      await withHandler(dir, opts, async (h) => {
        const limit = opts.limit ?? DEFAULT_VERSION_PAGE;
        const page = opts.prefix ? await h.versions({ pathPrefix: path, limit }) : await memoryVersions(h, path, { limit });
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
        out(
          opts,
          changed ? `reverted ${path}: version ${r.versionId}` : `nothing changed: ${path} already holds the content of version ${id}`,
          {
            path,
            ...r,
            changed,
          },
        );
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
