#!/usr/bin/env node
/** The `rabosh-memory` executable (package.json "bin"). */
import { readFileSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { run } from './program.js';

/** This file sits at dist/<flavour>/src/cli/ in the package; npm's bin link is resolved first. */
function packageVersion(): string | undefined {
  try {
    const here = dirname(realpathSync(process.argv[1] ?? ''));
    const pkg = JSON.parse(readFileSync(join(here, '..', '..', '..', '..', 'package.json'), 'utf8')) as { version?: string };
    return pkg.version;
  } catch {
    return undefined;
  }
}

run(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, version: packageVersion() }).then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    process.stderr.write(`rabosh-memory: ${e instanceof Error ? e.stack : String(e)}\n`);
    process.exitCode = 1;
  },
);
