#!/usr/bin/env node
/** The `rabosh-memory` executable (package.json "bin"). */
import { readFileSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** This file sits at dist/ in the app package; npm's bin link is resolved first. */
function packageVersion(): string | undefined {
  try {
    const here = dirname(realpathSync(process.argv[1] ?? ''));
    const pkg = JSON.parse(readFileSync(join(here, '..', 'package.json'), 'utf8')) as { version?: string };
    return pkg.version;
  } catch {
    return undefined;
  }
}

function fail(e: unknown): void {
  process.stderr.write(`rabosh-memory: ${e instanceof Error ? e.stack : String(e)}\n`);
  process.exitCode = 1;
}

// The program is imported here, not at the top, so that a dependency missing from a broken
// install (the library, commander) is named as a package to install, not printed as a stack.
import('./program.js').then(
  ({ run }) =>
    run(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, version: packageVersion() }).then((code) => {
      process.exitCode = code;
    }, fail),
  async (e: unknown) => {
    const { missingPackage } = await import('./cli-error.js');
    const missing = missingPackage(e);
    if (missing === null) return fail(e);
    process.stderr.write(`rabosh-memory: ${missing.message}\n`);
    process.exitCode = missing.exitCode;
  },
);
