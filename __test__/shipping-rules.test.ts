// Build rules (scripts/build-rules.mjs) over the real tree, and over a planted tree to prove
// each rule can fail: a rule that never reports anything would pass here vacuously otherwise.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compactViolations, pathImportViolations } from '../scripts/build-rules.mjs';

const root = resolve(import.meta.dirname, '..');
const planted = mkdtempSync(join(tmpdir(), 'rabosh-rules-'));
afterAll(() => rmSync(planted, { recursive: true, force: true }));

function plant(files: Record<string, string>): string {
  const dir = mkdtempSync(join(planted, 't-'));
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, rel)), { recursive: true });
    writeFileSync(join(dir, rel), text);
  }
  return dir;
}

describe('no path or fs in the facade', () => {
  it('holds for this tree', () => {
    expect(pathImportViolations(root)).toEqual([]);
  });

  it('catches every spelling, and leaves the CLI and comments alone', () => {
    const dir = plant({
      'index.ts': "import { join } from 'node:path';\n",
      'src/a.ts': "import * as fs from 'fs';\n// import 'node:path' in a comment is fine\n",
      'src/b.ts': "const p = require('path');\nconst q = await import('node:fs/promises');\n",
      'src/c.ts': "export { posix } from 'path/posix';\n",
      'src/cli/main.ts': "import { join } from 'node:path';\n",
      'src/ok.ts': "import { pathish } from './path.js';\n",
    });
    expect(pathImportViolations(dir)).toEqual([
      "index.ts:1: from 'node:path'",
      "src/a.ts:1: from 'fs'",
      "src/b.ts:1: require('path'",
      "src/b.ts:2: import('node:fs/promises'",
      "src/c.ts:1: from 'path/posix'",
    ]);
  });
});

describe('compact( only in expireBefore and maintenance APIs', () => {
  it('holds for this tree', () => {
    expect(compactViolations(root)).toEqual([]);
  });

  it('catches a call in a write path, not definitions, allowed callers or test modules', () => {
    const dir = plant({
      'crates/rabosh/src/lib.rs': 'pub fn compact(&self) -> Result<()> {\n    Ok(())\n}\n',
      'crates/rabosh-memory/src/expiry.rs':
        'pub fn expire_before(&self) {\n    self.store.engine().compact()?;\n}\n',
      'crates/rabosh-memory/src/commands.rs':
        'pub fn delete(&self) {\n    // compact() here would be wrong\n    self.engine.compact()?;\n}\n#[cfg(test)]\nmod tests {\n    fn t() { s.compact().unwrap(); }\n}\n',
      'crates/rabosh/tests/compaction.rs': 'fn t() { store.compact().unwrap(); }\n',
      'src/handler.ts': 'export class H {\n  async remove(p: string) {\n    await this.db.compact();\n  }\n}\n',
    });
    expect(compactViolations(dir)).toEqual([
      'src/handler.ts:3 in remove: await this.db.compact();',
      'crates/rabosh-memory/src/commands.rs:3 in delete: self.engine.compact()?;',
    ]);
  });
});
