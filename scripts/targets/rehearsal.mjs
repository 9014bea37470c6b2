// A release rehearsal: the root package, the app package and all six platform packages published exactly as the
// release workflow publishes them (check-release, `napi pre-publish -t npm` writing the
// optionalDependencies, `npm publish`), but to a throwaway Verdaccio on 127.0.0.1 whose storage
// is a temporary directory, so that apps can `npm install rabosh-memory` by name from it.
//
// Every package.json published here has its publishConfig.registry rewritten to the local
// registry first, and publishing refuses to start unless each one names it: nothing can reach
// the public registry from this script. Packages the apps need besides ours (the SDK,
// commander, …) come through Verdaccio's uplink, the registry npm is configured with.

import { execFileSync, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { root, supportedNode } from './foreign.mjs';

const runnerDir = join(root, 'node_modules', '.cache', 'rabosh-verdaccio');

/** Verdaccio from scripts/rehearsal's lock file, installed once into node_modules/.cache. */
function verdaccioBin() {
  const bin = join(runnerDir, 'node_modules', 'verdaccio', 'bin', 'verdaccio');
  const lock = readFileSync(join(root, 'scripts', 'rehearsal', 'package-lock.json'), 'utf8');
  const stamp = join(runnerDir, 'installed-lock.json');
  if (existsSync(bin) && existsSync(stamp) && readFileSync(stamp, 'utf8') === lock) return bin;
  rmSync(runnerDir, { recursive: true, force: true });
  mkdirSync(runnerDir, { recursive: true });
  cpSync(join(root, 'scripts', 'rehearsal', 'package.json'), join(runnerDir, 'package.json'));
  writeFileSync(join(runnerDir, 'package-lock.json'), lock);
  execFileSync('npm', ['ci', '--no-audit', '--no-fund', '--ignore-scripts'], { cwd: runnerDir, stdio: 'inherit' });
  writeFileSync(stamp, lock);
  return bin;
}

function freePort() {
  return new Promise((resolvePort, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolvePort(port));
    });
  });
}

/** Starts a throwaway Verdaccio; resolves `{ url, npmrc, stop }`. */
export async function startRegistry() {
  const bin = verdaccioBin();
  const dir = mkdtempSync(join(tmpdir(), 'rabosh-registry-'));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/`;
  const uplink = execFileSync('npm', ['config', 'get', 'registry'], { encoding: 'utf8' }).trim();
  const config = join(dir, 'config.yaml');
  writeFileSync(
    config,
    [
      `storage: ${join(dir, 'storage')}`,
      'auth:',
      '  htpasswd:',
      `    file: ${join(dir, 'htpasswd')}`,
      'uplinks:',
      '  upstream:',
      `    url: ${uplink}`,
      'packages:',
      // Ours exist only here: never looked up upstream, so a name clash cannot leak in.
      "  'rabosh-memory*':",
      '    access: $all',
      '    publish: $authenticated',
      "  '**':",
      '    access: $all',
      '    publish: $authenticated',
      '    proxy: upstream',
      `listen: 127.0.0.1:${port}`,
      'log: { type: stdout, format: pretty, level: warn }',
      '',
    ].join('\n'),
  );
  const server = spawn(process.execPath, [bin, '--config', config], { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  server.stdout.on('data', (d) => (log += d));
  server.stderr.on('data', (d) => (log += d));
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      const r = await fetch(`${url}-/ping`);
      if (r.ok) break;
    } catch {}
    if (server.exitCode !== null || Date.now() > deadline) {
      server.kill('SIGKILL');
      throw new Error(`verdaccio did not start:\n${log}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  // A user of this registry only, for publishing.
  const user = await fetch(`${url}-/user/org.couchdb.user:rehearsal`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'rehearsal', password: 'rehearsal-only' }),
  });
  const { token } = await user.json();
  if (!token) throw new Error(`verdaccio gave no token (${user.status})`);
  const npmrc = join(dir, '.npmrc');
  writeFileSync(npmrc, `registry=${url}\n//127.0.0.1:${port}/:_authToken=${token}\n`);
  const stop = () =>
    new Promise((done) => {
      if (server.exitCode !== null) return done();
      server.once('exit', () => {
        rmSync(dir, { recursive: true, force: true });
        done();
      });
      server.kill('SIGTERM');
    });
  return { url, npmrc, stop, log: () => log };
}

/**
 * npm under the official Node 22, not whatever Node runs the tests: npm leaves out an optional
 * dependency whose `engines` the running Node does not meet, and every platform package
 * requires a supported line (22, 24, 26), so under an older Node not one would be installed.
 */
function npm(args, cwd, npmrc, extraEnv = {}) {
  const node = supportedNode(22);
  const npmCli = join(execFileSync('npm', ['root', '-g'], { encoding: 'utf8' }).trim(), 'npm', 'bin', 'npm-cli.js');
  return execFileSync(node, [npmCli, ...args], {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      PATH: `${dirname(node)}:${process.env.PATH}`,
      npm_config_userconfig: npmrc,
      npm_config_registry: readFileSync(npmrc, 'utf8').match(/^registry=(.*)$/m)[1],
      NPM_CONFIG_PROVENANCE: 'false',
      npm_config_update_notifier: 'false',
      ...extraEnv,
    },
  });
}

function pointAt(pkgJsonPath, url) {
  const pkg = JSON.parse(readFileSync(pkgJsonPath, 'utf8'));
  pkg.publishConfig = { ...pkg.publishConfig, registry: url };
  writeFileSync(pkgJsonPath, `${JSON.stringify(pkg, null, 2)}\n`);
}

/**
 * Copies what the release workflow's publish job has (the checkout, dist/, every npm/<platform>
 * with its binary) into a scratch directory and publishes from there as that job does.
 * Returns the published root package.json (with the optionalDependencies pre-publish wrote).
 */
export function publishAll(registry) {
  const stage = mkdtempSync(join(tmpdir(), 'rabosh-release-'));
  for (const entry of ['package.json', 'README.md', 'CONTRACT.md', 'LICENSE', 'binding.cjs', 'binding.d.cts', 'dist', 'npm', 'scripts']) {
    cpSync(join(root, entry), join(stage, entry), { recursive: true });
  }
  // The app package as the workflow's job has it: its manifest, its build and its README.
  for (const entry of ['package.json', 'README.md', 'dist']) {
    const from = join(root, 'apps', 'cli', entry);
    if (existsSync(from)) cpSync(from, join(stage, 'apps', 'cli', entry), { recursive: true });
  }
  // The workflow's job has run `npm ci`: its scripts and `napi` resolve from the repository's own.
  symlinkSync(join(root, 'node_modules'), join(stage, 'node_modules'), 'dir');
  const pkgs = [
    join(stage, 'package.json'),
    join(stage, 'apps', 'cli', 'package.json'),
    ...readdirSync(join(stage, 'npm')).map((d) => join(stage, 'npm', d, 'package.json')),
  ];
  for (const p of pkgs) pointAt(p, registry.url);
  for (const p of pkgs) {
    const to = JSON.parse(readFileSync(p, 'utf8')).publishConfig?.registry;
    if (to !== registry.url) throw new Error(`${p} would publish to ${to}; refusing`);
  }
  const gate = (...args) => execFileSync(process.execPath, ['scripts/check-release.mjs', ...args], { cwd: stage, stdio: 'pipe' });
  gate('--before-pre-publish');
  execFileSync(join(root, 'node_modules', '.bin', 'napi'), ['pre-publish', '-t', 'npm', '--no-gh-release'], {
    cwd: stage,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, npm_config_userconfig: registry.npmrc, npm_config_registry: registry.url, NPM_CONFIG_PROVENANCE: 'false' },
  });
  gate();
  // The workflow publishes with --ignore-scripts implicitly (no prepublish build); the gate ran above.
  npm(['publish', '--access', 'public', '--tag', 'latest', '--ignore-scripts'], stage, registry.npmrc);
  npm(['publish', '--access', 'public', '--tag', 'latest', '--ignore-scripts'], join(stage, 'apps', 'cli'), registry.npmrc);
  const published = JSON.parse(readFileSync(join(stage, 'package.json'), 'utf8'));
  rmSync(stage, { recursive: true, force: true });
  return published;
}

/** An empty app that installs `specs` by name from the registry; returns its directory. */
export function installApp(registry, specs, { os, cpu } = {}) {
  const app = mkdtempSync(join(tmpdir(), 'rabosh-app-'));
  writeFileSync(join(app, 'package.json'), '{ "name": "app", "private": true, "type": "module" }\n');
  const args = ['install', '--no-audit', '--no-fund', ...specs];
  if (os) args.push(`--os=${os}`);
  if (cpu) args.push(`--cpu=${cpu}`);
  npm(args, app, registry.npmrc);
  return app;
}

/** Runs `npm exec --yes -- <args>` in an empty directory against the registry: how npx users start the app. */
export function npmExec(registry, args) {
  const dir = mkdtempSync(join(tmpdir(), 'rabosh-npx-'));
  try {
    return npm(['exec', '--yes', '--', ...args], dir, registry.npmrc, { npm_config_cache: join(dir, '.npm') });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The rabosh-memory platform packages present in `app`'s node_modules. */
export function platformPackagesIn(app) {
  const nm = join(app, 'node_modules');
  return readdirSync(nm)
    .filter((n) => n.startsWith('rabosh-memory-') && n !== 'rabosh-memory-cli')
    .sort();
}
