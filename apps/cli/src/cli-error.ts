/**
 * Exit codes and the one error type the CLI's commands throw. Imports nothing, so the executable
 * can still say what is missing when a dependency of the rest failed to load.
 */

/** 0 ok; 1 the operation failed; 2 the command line is wrong; 3 another process holds the store. */
export const EXIT = { ok: 0, failed: 1, usage: 2, locked: 3 } as const;

export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT.failed,
    readonly code: string = 'CLI_FAILED',
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/**
 * A package this command needs that is not installed, as an instruction rather than a stack: the
 * name from Node's `Cannot find package 'NAME' imported from …` (a bare specifier's first one or
 * two segments), or null when `e` is another error.
 */
export function missingPackage(e: unknown): CliError | null {
  if (!(e instanceof Error) || (e as NodeJS.ErrnoException).code !== 'ERR_MODULE_NOT_FOUND') return null;
  const name = /Cannot find (?:package|module) '((?:@[^/']+\/)?[^/'.][^/']*)/.exec(e.message)?.[1];
  if (name === undefined) return null;
  return new CliError(
    `this command needs the package ${name}, which is not installed: install it beside rabosh-memory-cli (npm install ${name}), or reinstall rabosh-memory-cli with its dependencies`,
    EXIT.failed,
    'CLI_MISSING_PACKAGE',
    { package: name },
  );
}
