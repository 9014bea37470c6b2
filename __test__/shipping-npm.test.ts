// The per-platform packages under npm/ are what `napi create-npm-dirs` would write from the
// current package.json (so a version bump or a new target cannot leave them stale), and the
// release gate (scripts/release-layout.mjs) rejects a tree that would publish a broken package.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { releaseProblems } from '../scripts/release-layout.mjs';

const root = resolve(import.meta.dirname, '..');
const work = mkdtempSync(join(tmpdir(), 'rabosh-npm-dirs-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const napi = join(root, 'node_modules', '@napi-rs', 'cli', 'cli.mjs');

function copyTree(): string {
  const dir = mkdtempSync(join(work, 't-'));
  cpSync(join(root, 'package.json'), join(dir, 'package.json'));
  // The manifests only: the addons in npm/<platform>/ come and go while other steps build and
  // copy them, and the gate's checks below must see none.
  cpSync(join(root, 'npm'), join(dir, 'npm'), { recursive: true, filter: (from) => !from.endsWith('.node') });
  cpSync(join(root, 'apps', 'cli', 'package.json'), join(dir, 'apps', 'cli', 'package.json'));
  return dir;
}

describe('npm/<platform> packages', () => {
  it('match what napi create-npm-dirs generates from package.json', () => {
    const dir = mkdtempSync(join(work, 'gen-'));
    cpSync(join(root, 'package.json'), join(dir, 'package.json'));
    execFileSync(process.execPath, [napi, 'create-npm-dirs', '--cwd', dir], { stdio: 'pipe' });
    const generated = readdirSync(join(dir, 'npm')).sort();
    expect(readdirSync(join(root, 'npm')).sort()).toEqual(generated);
    for (const platform of generated) {
      for (const file of ['package.json', 'README.md']) {
        expect(readFileSync(join(root, 'npm', platform, file), 'utf8'), `npm/${platform}/${file}`).toBe(
          readFileSync(join(dir, 'npm', platform, file), 'utf8'),
        );
      }
    }
  });

  it('cover all six promised platforms with the right os/cpu/libc', () => {
    expect(releaseProblems(root)).toEqual([]);
    const names = readdirSync(join(root, 'npm')).sort();
    expect(names).toEqual(['darwin-arm64', 'darwin-x64', 'linux-arm64-gnu', 'linux-x64-gnu', 'linux-x64-musl', 'win32-x64-msvc']);
  });

  it('the release gate rejects a stale version, a missing binary and missing optionalDependencies', () => {
    const dir = copyTree();
    const manifest = join(dir, 'npm', 'linux-x64-musl', 'package.json');
    const m = JSON.parse(readFileSync(manifest, 'utf8'));
    writeFileSync(manifest, JSON.stringify({ ...m, version: '0.0.0-stale' }));
    const problems = releaseProblems(dir, { binaries: true, optionalDependencies: true });
    expect(problems).toContain(`npm/linux-x64-musl/package.json: version is "0.0.0-stale", expected ${JSON.stringify(m.version)}`);
    expect(problems.some((p) => p.includes('rabosh-memory.linux-x64-gnu.node is missing'))).toBe(true);
    expect(problems.some((p) => p.includes('root optionalDependencies entry for rabosh-memory-darwin-arm64'))).toBe(true);
  });

  it('the release gate rejects an app package that depends on another version of the library', () => {
    const dir = copyTree();
    const manifest = join(dir, 'apps', 'cli', 'package.json');
    const app = JSON.parse(readFileSync(manifest, 'utf8'));
    writeFileSync(manifest, JSON.stringify({ ...app, dependencies: { ...app.dependencies, 'rabosh-memory': '^0.0.1' } }));
    expect(releaseProblems(dir)).toEqual([
      `apps/cli/package.json: dependency rabosh-memory is "^0.0.1", expected ${JSON.stringify(app.version)}`,
    ]);
  });

  it('a fresh clone declares no optionalDependencies (napi pre-publish writes them at release)', () => {
    // Declaring unpublished packages would make `npm ci` on a fresh clone fail to resolve them.
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
    expect(pkg.optionalDependencies).toBeUndefined();
  });
});
