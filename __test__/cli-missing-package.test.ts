// The app with a dependency missing (a broken install, `--omit`, a copied dist): the executable
// names the package to install, once, with no stack; and a command runs without the library's
// optional peer, the SDK, which no command needs.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { missingPackage } from '../apps/cli/src/cli-error.js';

const root = resolve(import.meta.dirname, '..');
const work = mkdtempSync(join(tmpdir(), 'rabosh-missing-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('a dependency the app cannot find', () => {
  it('is named as a package to install, scoped names whole', async () => {
    for (const spec of ['no-such-package-for-rabosh', '@no-such-scope/pkg/deep/file.js']) {
      const e = await import(spec).catch((err: unknown) => err);
      const err = missingPackage(e);
      expect(err?.code).toBe('CLI_MISSING_PACKAGE');
      expect(err?.message).toContain(`needs the package ${spec.startsWith('@') ? '@no-such-scope/pkg' : spec}, which is not installed`);
    }
    expect(missingPackage(new Error('other'))).toBeNull();
  });

  it('the executable without the library says so, with no stack, even for --version', () => {
    // The app's build alone, outside any node_modules: nothing it imports by name resolves.
    const app = join(work, 'app');
    cpSync(join(root, 'apps', 'cli', 'dist'), join(app, 'dist'), { recursive: true });
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'rabosh-memory-cli', version: '0.0.0', type: 'module' }));
    const r = spawnSync(process.execPath, [join(app, 'dist', 'main.js'), '--version'], { encoding: 'utf8', cwd: work });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/^rabosh-memory: this command needs the package (rabosh-memory|commander), which is not installed/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });
});
