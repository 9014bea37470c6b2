// Build rules (scripts/build-rules.mjs) over the real tree, and over a planted tree to prove
// each rule can fail: a rule that never reports anything would pass here vacuously otherwise.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compactViolations, dependencyViolations, importCycles, pathImportViolations } from '../scripts/build-rules.mjs';

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

  it('catches every spelling, and leaves the apps and comments alone', () => {
    const dir = plant({
      'index.ts': "import { join } from 'node:path';\n",
      'src/a.ts': "import * as fs from 'fs';\n// import 'node:path' in a comment is fine\n",
      'src/b.ts': "const p = require('path');\nconst q = await import('node:fs/promises');\n",
      'src/c.ts': "export { posix } from 'path/posix';\n",
      'apps/cli/src/main.ts': "import { join } from 'node:path';\n",
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
      'crates/rabosh-memory/src/expiry.rs': 'pub fn expire_before(&self) {\n    self.store.engine().compact()?;\n}\n',
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

describe('no runtime dependency in the library', () => {
  it('holds for this tree', () => {
    expect(dependencyViolations(root)).toEqual([]);
  });

  it('catches a static import of a package, not type-only or dynamic ones, builtins or the apps', () => {
    const dir = plant({
      'index.ts': "export { run } from 'commander';\n",
      'src/a.ts':
        "import type { X } from '@anthropic-ai/sdk';\nimport { join } from 'node:path';\nimport {\n  Server,\n} from '@modelcontextprotocol/sdk/server/index.js';\n",
      'src/b.ts': "const m = await import('@anthropic-ai/sdk/resources/beta/messages');\nimport './side-effect.js';\nimport 'zod';\n",
      'apps/cli/src/main.ts': "import { Command } from 'commander';\n",
    });
    expect(dependencyViolations(dir)).toEqual([
      "index.ts:1: imports 'commander'",
      "src/a.ts:3: imports '@modelcontextprotocol/sdk/server/index.js'",
      "src/b.ts:3: imports 'zod'",
    ]);
  });
});

describe('no import cycle in index.ts and src/', () => {
  it('holds for this tree', () => {
    expect(importCycles(root)).toEqual([]);
  });

  it('catches a cycle of any length, type-only and re-exports included, not comments or packages', () => {
    const dir = plant({
      'index.ts': "export { H } from './src/handler.js';\n",
      'src/handler.ts': "import {\n  Store,\n} from './store.js';\nimport { x } from 'some-package';\nexport class H {}\n",
      'src/store.ts': "import { h } from './history.js';\nexport class Store {}\n",
      'src/history.ts': "import type { H } from './handler.js';\n// import { y } from './a.js'\nexport const h = 1;\n",
      'src/a.ts': "export * from './b.js';\n",
      'src/b.ts': "const a = await import('./a.js');\n",
      'apps/cli/src/main.ts': "import '../../../index.js';\n",
      'src/leaf.ts': "import { Store } from './store.js';\n",
    });
    expect(importCycles(dir)).toEqual([
      'src/a.ts -> src/b.ts -> src/a.ts',
      'src/handler.ts -> src/store.ts -> src/history.ts -> src/handler.ts',
    ]);
  });
});
