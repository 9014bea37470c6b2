#!/usr/bin/env node
// A create → view → usage round trip through the installed public API, run with Node
// or Bun against whatever binary the loader finds (CI's Bun job, the release jobs).
// Exits non-zero with a message on any mismatch. With a directory argument the store is
// left at <dir>/store for a later step (e.g. the CLI) to read.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RaboshMemoryToolHandler } from '../dist/esm/index.js';

const keep = process.argv[2];
const dir = keep ?? mkdtempSync(join(tmpdir(), 'rabosh-smoke-'));
function check(cond, what) {
  if (!cond) {
    console.error(`smoke: ${what}`);
    process.exit(1);
  }
}
try {
  const handler = await RaboshMemoryToolHandler.open(join(dir, 'store'), {});
  try {
    const created = await handler.execute({ command: 'create', path: '/memories/smoke.txt', file_text: 'hello\n' });
    check(!created.isError, `create failed: ${created.text}`);
    const viewed = await handler.execute({ command: 'view', path: '/memories/smoke.txt' });
    check(!viewed.isError && viewed.text.includes('hello'), `view did not return the file: ${viewed.text}`);
    const usage = await handler.usage();
    check(usage.memories === 1, `usage reports ${usage.memories} memories, expected 1`);
  } finally {
    await handler.close();
  }
  console.log(`smoke: ok (${process.versions.bun ? `bun ${process.versions.bun}` : `node ${process.version}`})`);
} finally {
  if (!keep) rmSync(dir, { recursive: true, force: true });
}
