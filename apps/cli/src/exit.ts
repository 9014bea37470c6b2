/** How a thrown value reads to an operator: the library's errors described, with their exit codes. */
import { InvalidOptionError, StoreLockedError, RaboshError, type LockHolder } from 'rabosh-memory';
import { CliError, EXIT, missingPackage } from './cli-error.js';

export { CliError, EXIT };

export function describeHolder(h: LockHolder): string {
  const who = h.pid === null ? 'an unknown process' : `pid ${h.pid}`;
  const where = h.host === null ? '' : ` on host ${h.host}`;
  const since = h.startedAt === null ? '' : `, started ${h.startedAt.toISOString()}`;
  const state = h.thisProcess ? 'this very process' : h.isRunning ? 'still running' : 'not seen running on this host';
  return `${who}${where}${since} (${state})`;
}

/** Any thrown value as a CliError, with the exit code and a message an operator can act on. */
export function asCliError(e: unknown, dir?: string): CliError {
  if (e instanceof CliError) return e;
  const missing = missingPackage(e);
  if (missing !== null) return missing;
  if (e instanceof StoreLockedError) {
    const h = e.holder;
    return new CliError(
      // The CLI always opens shared, so a refusal means the holder opened the store exclusively.
      `store ${dir ?? ''} is locked by ${describeHolder(h)}, which opened it exclusively (exclusive: true); this command opens it shared and cannot run until that process closes it (the lock is never taken over)`.replace(
        'store  is',
        'store is',
      ),
      EXIT.locked,
      e.code,
      { holder: { ...h, startedAt: h.startedAt?.toISOString() ?? null } },
    );
  }
  // Every option the CLI passes on comes from the command line.
  if (e instanceof InvalidOptionError) return new CliError(e.message, EXIT.usage, e.code);
  if (e instanceof RaboshError) return new CliError(e.message, EXIT.failed, e.code);
  if (e instanceof Error) {
    const code = (e as NodeJS.ErrnoException).code;
    return new CliError(e.message, EXIT.failed, typeof code === 'string' ? code : 'CLI_FAILED');
  }
  return new CliError(String(e));
}
