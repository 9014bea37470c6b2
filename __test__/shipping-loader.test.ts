// The error a user meets when no platform package matches (issue 6): it must name the package
// to install, in one short paragraph (napi-rs's own error printed as some 60 lines of nested
// causes), keeping napi-rs's error reachable as the non-enumerable `loadError`. The package is laid out in a temp dir
// exactly as installed but without any addon (no `.node` beside binding.cjs, no platform
// package in node_modules), and loaded through both public entries in a child process.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '..');
const work = mkdtempSync(join(tmpdir(), 'rabosh-loader-'));
const pkg = join(work, 'rabosh-memory');
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** The napi-rs suffix of this machine, worked out independently of the loader under test. */
function expectedSuffix(): string {
  const { platform, arch } = process;
  if (platform === 'linux') {
    const header = (process.report.getReport() as { header?: { glibcVersionRuntime?: string } }).header;
    return `linux-${arch}-${header?.glibcVersionRuntime ? 'gnu' : 'musl'}${arch === 'arm' ? 'eabihf' : ''}`;
  }
  if (platform === 'win32') return `win32-${arch}-msvc`;
  return `${platform}-${arch}`;
}

/** The package as installed under `<work>/<name>/rabosh-memory`, without any addon. */
function layout(name: string, optionalDependencies?: Record<string, string>): string {
  const dir = join(work, name, 'rabosh-memory');
  for (const p of ['dist', 'binding.cjs', 'binding.d.cts', 'package.json']) cpSync(join(root, p), join(dir, p), { recursive: true });
  // Dependencies (the SDK) resolve; no rabosh-memory-* platform package is among them.
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'), 'junction');
  if (optionalDependencies) {
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Record<string, unknown>;
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ ...manifest, optionalDependencies }));
  }
  return dir;
}

beforeAll(() => {
  layout('.');
});

interface Loaded {
  ok: boolean;
  message?: string;
  loadErrorMessage?: string;
}

/** Loads the package from `pkg` in a fresh Node and reports what was thrown. */
function load(flavour: 'import' | 'require', env: Record<string, string> = {}, dir = pkg): Loaded {
  const entry = join(dir, 'dist', flavour === 'import' ? 'esm' : 'cjs', 'index.js');
  const report = `(e) => console.log(JSON.stringify({ ok: false, message: e.message, loadErrorMessage: e.loadError?.message }))`;
  const script =
    flavour === 'import'
      ? `import(${JSON.stringify(entry)}).then(() => console.log('{"ok":true}'), ${report});`
      : `try { require(${JSON.stringify(entry)}); console.log('{"ok":true}'); } catch (e) { (${report})(e); }`;
  const childEnv: NodeJS.ProcessEnv = { ...process.env, ...env };
  if (!('NAPI_RS_NATIVE_LIBRARY_PATH' in env)) delete childEnv['NAPI_RS_NATIVE_LIBRARY_PATH'];
  const r = spawnSync(process.execPath, ['-e', script], { cwd: work, env: childEnv, encoding: 'utf8' });
  // Node 20 also prints a throwing CommonJS module's source line to stderr under `import`; only
  // the child's own report on stdout counts.
  expect(r.stdout, r.stderr).toMatch(/^\{.*\}\s*$/);
  return JSON.parse(r.stdout) as Loaded;
}

describe('loader error when no prebuilt addon matches', () => {
  it('the copy really holds no addon', () => {
    expect(readdirSync(pkg).filter((f) => f.endsWith('.node'))).toEqual([]);
    expect(existsSync(join(pkg, 'node_modules', `rabosh-memory-${expectedSuffix()}`))).toBe(false);
  });

  for (const flavour of ['import', 'require'] as const) {
    it(`names the platform package to install (${flavour})`, () => {
      const suffix = expectedSuffix();
      const r = load(flavour);
      expect(r.ok).toBe(false);
      expect(r.message).toMatch(
        new RegExp(
          `^rabosh-memory: no prebuilt native addon for ${suffix}: install the optional dependency ` +
            `rabosh-memory-${suffix} \\(is npm running with --omit=optional, or was the lock file made on another platform\\?\\)\\. ` +
            `Tried: [^\\n]*rabosh-memory-${suffix}[^\\n]*\\.$`,
        ),
      );
      // napi-rs's own error, with its chain of attempts, stays reachable for a bug report.
      expect(r.loadErrorMessage).toMatch(/^Cannot find native binding/);
    });
  }

  for (const flavour of ['import', 'require'] as const) {
    it(`uncaught, it prints as one short paragraph, not a chain of causes (${flavour})`, () => {
      const entry = join(pkg, 'dist', flavour === 'import' ? 'esm' : 'cjs', 'index.js');
      const script = flavour === 'import' ? `import(${JSON.stringify(entry)});` : `require(${JSON.stringify(entry)});`;
      const env: NodeJS.ProcessEnv = { ...process.env };
      delete env['NAPI_RS_NATIVE_LIBRARY_PATH'];
      const r = spawnSync(process.execPath, ['-e', script], { cwd: work, env, encoding: 'utf8' });
      expect(r.status).not.toBe(0);
      const lines = r.stderr.split('\n').filter((l) => l.trim() !== '');
      expect(lines.filter((l) => l.includes(`install the optional dependency rabosh-memory-${expectedSuffix()}`))).toHaveLength(1);
      expect(r.stderr).not.toMatch(/cause|Require stack|Cannot find native binding/);
      // the source line Node shows, the message, Node's version: nothing else
      expect(lines.length, r.stderr).toBeLessThanOrEqual(6);
    });
  }

  it('names NAPI_RS_NATIVE_LIBRARY_PATH when that override is what failed', () => {
    const missing = join(work, 'no-such-addon.node');
    const r = load('require', { NAPI_RS_NATIVE_LIBRARY_PATH: missing });
    expect(r.ok).toBe(false);
    expect(r.message).toContain(`NAPI_RS_NATIVE_LIBRARY_PATH=${missing}`);
    expect(r.loadErrorMessage).toMatch(/^Cannot find native binding/);
  });

  it('says so when the platform package is installed but does not load', () => {
    const dir = layout('broken');
    // Where Node's resolution from the package finds it: the node_modules one level up.
    const fake = join(dir, '..', 'node_modules', `rabosh-memory-${expectedSuffix()}`);
    mkdirSync(fake, { recursive: true });
    writeFileSync(
      join(fake, 'package.json'),
      JSON.stringify({ name: `rabosh-memory-${expectedSuffix()}`, version: '0.1.0', main: 'index.js' }),
    );
    writeFileSync(join(fake, 'index.js'), "throw new Error('planted: not an addon');\n");
    const r = load('require', {}, dir);
    expect(r.message).toMatch(
      new RegExp(
        `^rabosh-memory: the native addon rabosh-memory-${expectedSuffix()} is installed but failed to load \\(planted: not an addon\\)`,
      ),
    );
    expect(r.loadErrorMessage).toMatch(/^Cannot find native binding/);
  });

  it('as published (optionalDependencies written), names the package to install', () => {
    const dir = layout('published', { [`rabosh-memory-${expectedSuffix()}`]: '0.1.0', 'rabosh-memory-other-os': '0.1.0' });
    expect(load('import', {}, dir).message).toMatch(new RegExp(`install the optional dependency rabosh-memory-${expectedSuffix()} `));
  });

  it('on a platform nothing is published for, says so instead of naming a package that does not exist', () => {
    const dir = layout('unsupported', { 'rabosh-memory-other-os': '0.1.0', 'rabosh-memory-another-os': '0.1.0' });
    expect(load('require', {}, dir).message).toMatch(
      new RegExp(
        `^rabosh-memory: no prebuilt native addon for ${expectedSuffix()}: none is published for this platform \\(published: other-os, another-os\\)`,
      ),
    );
  });

  it('loads normally when the addon is present', () => {
    // By name: the cross-platform runs may have put other platforms' addons beside it.
    const addon = `rabosh-memory.${expectedSuffix()}.node`;
    expect(existsSync(join(root, addon)), 'build the native addon first (npm run build)').toBe(true);
    const withAddon = join(work, 'with-addon');
    cpSync(pkg, withAddon, { recursive: true, verbatimSymlinks: true });
    cpSync(join(root, addon!), join(withAddon, addon!));
    const r = spawnSync(
      process.execPath,
      ['-e', `require(${JSON.stringify(join(withAddon, 'dist', 'cjs', 'index.js'))}); console.log('loaded')`],
      { encoding: 'utf8' },
    );
    expect(r.stdout.trim()).toBe('loaded');
  });
});
