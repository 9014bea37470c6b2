/**
 * `rabosh-memory sync <dir> --store memstore_…`: one `db.sync` with a hosted memory store, the
 * key from ANTHROPIC_API_KEY (and the SDK's other environment, e.g. ANTHROPIC_BASE_URL). A
 * progress bar on the first sync (on a terminal, not with --json).
 */
import type { Command } from 'commander';
import { Rabosh, type SyncReport } from 'rabosh-memory';
import { CliError, EXIT, asCliError } from './exit.js';
import { startProgress, wantProgress, type Progress, type ProgressStream } from './progress.js';
import { withKeyFile } from './key-open.js';
import { isNotAStore, isUrl, noStore, storeName } from './target.js';

interface Options {
  json?: boolean;
  scope?: string;
  store: string;
  prefix?: string;
  dryRun?: boolean;
  keyFile?: string;
}

type Sub = (name: string, description: string) => Command;
type Out = (opts: { json?: boolean }, human: string, json: unknown) => void;

async function anthropicClient(): Promise<unknown> {
  if (!process.env['ANTHROPIC_API_KEY']) {
    throw new CliError('sync needs ANTHROPIC_API_KEY in the environment', EXIT.usage, 'CLI_NO_API_KEY');
  }
  let sdk: { default: new (options?: Record<string, unknown>) => unknown };
  try {
    sdk = (await import('@anthropic-ai/sdk')) as typeof sdk;
  } catch {
    throw new CliError(
      'sync needs the @anthropic-ai/sdk package (0.91.0 or later) installed next to rabosh-memory',
      EXIT.failed,
      'CLI_NO_SDK',
    );
  }
  return new sdk.default();
}

function summary(r: SyncReport, dryRun: boolean): string {
  const n = (k: number, what: string) => `${k} ${what}`;
  const lines = [
    `${dryRun ? 'would sync' : 'synced'} ${r.memoryStoreId}${r.firstSync ? ' (first sync)' : ''}: ${n(r.pushed.length, 'pushed')}, ${n(r.pulled.length, 'pulled')}, ${n(r.deleted.length, 'deleted')}, ${n(r.conflicts.length, 'conflicts')}, ${n(r.skipped.length, 'skipped')} (${n(r.requests, 'requests')}, ${r.mode})`,
  ];
  for (const c of r.conflicts) {
    const kept =
      c.kept === null
        ? ''
        : c.kept.side === 'local'
          ? `; local edit kept as version ${c.kept.versionId}`
          : `; hosted content kept as ${c.kept.memoryVersionId}`;
    const carried = c.carriedOver === true ? ' (resolved by an earlier sync that never returned)' : '';
    lines.push(`  conflict ${c.kind} ${c.path}: ${c.winner} wins${kept}${carried}`);
  }
  for (const s of r.skipped) lines.push(`  skipped ${s.path} (${s.reason}): ${s.detail}`);
  return lines.join('\n');
}

export function addSyncCommand(sub: Sub, out: Out, stderr: ProgressStream, stdoutIsTTY: boolean | undefined): void {
  sub('sync', 'sync a scope with an Anthropic hosted memory store (key from ANTHROPIC_API_KEY)')
    .argument('<dir>', 'store directory or postgres:// URL')
    .requiredOption('--store <id>', 'hosted memory store id (memstore_…)')
    .option('--prefix <dir>', 'local directory below /memories the hosted store maps onto')
    .option('--dry-run', 'report what would change; write nothing on either side')
    .action(async (dir: string, opts: Options) => {
      const client = await anthropicClient();
      // A directory is created when absent (pulling a hosted store into a new local one); a
      // PostgreSQL URL must already hold a store.
      const url = isUrl(dir);
      let db: Rabosh;
      try {
        db = await withKeyFile(opts.keyFile, (encryption) =>
          Rabosh.open(dir, url ? { history: true, create: false, ...encryption } : { history: true, ...encryption }),
        );
      } catch (e) {
        if (isNotAStore(e)) throw noStore(dir);
        throw asCliError(e, storeName(dir));
      }
      let bar: Progress | null = null;
      let shown = 0;
      try {
        const report = await db.sync(client, {
          memoryStoreId: opts.store,
          ...(opts.scope === undefined ? {} : { scope: opts.scope }),
          ...(opts.prefix === undefined ? {} : { prefix: opts.prefix }),
          dryRun: opts.dryRun === true,
          onProgress: ({ done, total, firstSync }) => {
            if (!firstSync) return;
            bar ??= startProgress(wantProgress(stdoutIsTTY, opts.json === true), 'first sync', total, stderr);
            for (; shown < done; shown++) bar.tick();
          },
        });
        (bar as Progress | null)?.stop();
        out(opts, summary(report, opts.dryRun === true), report);
      } catch (e) {
        (bar as Progress | null)?.stop();
        if (e instanceof Error && /memoryStoreId/.test(e.message))
          throw new CliError(`invalid --store ${JSON.stringify(opts.store)}: expected a memstore_… id`, EXIT.usage, 'CLI_USAGE');
        throw e;
      } finally {
        await db.close();
      }
    });
}
