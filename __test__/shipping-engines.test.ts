// Which Node a contributor needs to build, and which a user needs to run, read from the packages
// themselves: every package the lock file installs on this platform declares the Node versions it
// supports (`engines.node`), and npm warns EBADENGINE for each one a version falls outside. The
// build floor CONTRIBUTING and README state must be the lowest 22.x that satisfies all of them
// (the build tools; 22.12 draws warnings from @napi-rs/cli, its @napi-rs/lzma and @inquirer/*),
// and package.json's engines floor (what the installed package promises) must satisfy every
// runtime dependency. That the addon and the quick start really run on that floor is
// node-versions.test.ts's job, under the official binary of exactly that version.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import semver from 'semver';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '..');
const read = (f: string) => readFileSync(join(root, f), 'utf8');
const manifest = JSON.parse(read('package.json')) as { engines: { node: string }; dependencies: Record<string, string> };
interface Locked {
  version?: string;
  dev?: boolean;
  optional?: boolean;
  os?: string[];
  cpu?: string[];
  libc?: string[];
  engines?: { node?: string } | string[];
}
const locked = Object.entries((JSON.parse(read('package-lock.json')) as { packages: Record<string, Locked> }).packages).filter(
  ([p]) => p !== '',
);

/** What npm installs here: optional platform packages only for this os/cpu. */
function installedHere(m: Locked): boolean {
  const fits = (list: string[] | undefined, value: string) =>
    list === undefined || (list.some((v) => !v.startsWith('!')) ? list.includes(value) : !list.includes(`!${value}`));
  return fits(m.os, process.platform) && fits(m.cpu, process.arch);
}

/** `name (range)` of each package installed here whose engines.node refuses `version`. */
function refusing(version: string, only: (path: string, m: Locked) => boolean = () => true): string[] {
  return locked
    .filter(([p, m]) => installedHere(m) && only(p, m))
    .flatMap(([p, m]) => {
      const range = Array.isArray(m.engines) ? undefined : m.engines?.node;
      return range !== undefined && !semver.satisfies(version, range) ? [`${p.slice(p.lastIndexOf('node_modules/') + 13)} (${range})`] : [];
    });
}

/** The lowest 22.x.0 every installed package accepts. */
function lowest22(): string {
  for (let minor = 0; minor < 100; minor++) if (refusing(`22.${minor}.0`).length === 0) return `22.${minor}.0`;
  throw new Error('no 22.x satisfies every package');
}

describe('Node floors', () => {
  it('the build floor CONTRIBUTING and README state is the lowest 22.x every dev tool accepts', () => {
    const floor = lowest22();
    const short = floor.replace(/\.0$/, '');
    expect(floor).toBe('22.20.0'); // change the docs with it
    expect(refusing('22.19.0').length).toBeGreaterThan(0);
    expect(read('CONTRIBUTING.md')).toContain(`To build and test you need Node.js 22 (≥ ${short}), 24 (≥ 24.12) or 26`);
    expect(read('README.md')).toContain(`Building from source needs Node 22 (≥ ${short}), 24 (≥ 24.12) or 26`);
    for (const v of ['24.12.0', '26.0.0']) expect(refusing(v), v).toEqual([]);
    // and 22.12, the runtime floor, really draws the warnings the docs say a build there prints
    expect(refusing('22.12.0').some((p) => p.startsWith('@napi-rs/cli '))).toBe(true);
  });

  it("package.json's engines floor is accepted by every runtime dependency (the library has none; the app's)", () => {
    const floor = /^\^(\d+\.\d+\.\d+) /.exec(manifest.engines.node)![1]!;
    expect(floor).toBe('22.12.0');
    expect(read('README.md')).toContain('Supported Node.js lines: **22 (≥ 22.12), 24 and 26**');
    expect(refusing(floor, (_p, m) => m.dev !== true)).toEqual([]);
    expect(manifest.dependencies).toBeUndefined();
    const app = JSON.parse(read('apps/cli/package.json')) as { dependencies: Record<string, string>; engines: unknown };
    expect(Object.keys(app.dependencies).length).toBeGreaterThan(1);
    expect(app.engines).toEqual(manifest.engines);
  });
});

describe('a fresh npm ci stays fast', () => {
  // better-sqlite3 compiled for two of the three minutes of the first `npm ci` (its prebuilt
  // binary comes from a download that is not always reachable); only the benchmark needs it, so
  // it is installed into bench/peers/ by the benchmark. At the root, every install script that
  // runs is one package.json allows by name, and none of them compiles (bun and esbuild pick a
  // prebuilt binary from their optional packages).
  it('runs only the install scripts package.json allows, none of them a compile', () => {
    const allow = (JSON.parse(read('package.json')) as { allowScripts: Record<string, boolean> }).allowScripts;
    const scripted = locked
      .filter(([, m]) => (m as { hasInstallScript?: boolean }).hasInstallScript)
      .map(([p]) => p.slice(p.lastIndexOf('node_modules/') + 13));
    expect(scripted.filter((name) => allow[name] !== false).sort()).toEqual(['bun', 'esbuild']);
    expect(locked.some(([p]) => p.endsWith('node_modules/better-sqlite3'))).toBe(false);
    const peers = JSON.parse(read('bench/peers/package.json')) as { dependencies: Record<string, string> };
    expect(Object.keys(peers.dependencies)).toEqual(['better-sqlite3']);
  });
});
