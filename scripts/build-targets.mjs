#!/usr/bin/env node
// Builds the addon for every published target from this Linux x86_64 machine, each into its
// npm/<platform>/ folder (`npm run build:targets`; the toolchains come from
// scripts/install-cross.sh):
//
//   linux-x64-gnu    cargo, natively
//   linux-x64-musl   cargo-zigbuild (zig from the `ziglang` PyPI package)
//   linux-arm64-gnu  cargo-zigbuild
//   darwin-x64       cargo-zigbuild: zig links against its own libSystem stubs, no Apple SDK
//   darwin-arm64     cargo-zigbuild
//   win32-x64-msvc   the same code for x86_64-pc-windows-gnu with mingw-w64, named as the msvc
//                    package's binary so the official Node loads it. The published Windows
//                    binary is the MSVC build the release workflow makes; here the msvc target
//                    is only type-checked (`--check-msvc`, see docs/guide/platforms.md, "Building from source").
//
// Usage: node scripts/build-targets.mjs [--profile cross|release|dev] [--only a,b] [--check-msvc]
//        [--native-from-root]   (linux-x64-gnu: take the addon `npm run build` left at the root)
// By default a target that runs here (under qemu or Wine) builds with profile `cross`, release
// without LTO; one that is only inspected here (how it links: musl, macOS) with `cross-inspect`,
// unoptimised (Cargo.toml says why). `--profile` builds every target with the one it names.

import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { foreignNode } from './targets/foreign.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Every napi target, with how it is built here. */
export const TARGETS = [
  { triple: 'x86_64-unknown-linux-gnu', platform: 'linux-x64-gnu', via: 'cargo' },
  { triple: 'x86_64-unknown-linux-musl', platform: 'linux-x64-musl', via: 'zig', inspected: true },
  { triple: 'aarch64-unknown-linux-gnu', platform: 'linux-arm64-gnu', via: 'zig' },
  { triple: 'x86_64-apple-darwin', platform: 'darwin-x64', via: 'zig', inspected: true },
  { triple: 'aarch64-apple-darwin', platform: 'darwin-arm64', via: 'zig', inspected: true },
  { triple: 'x86_64-pc-windows-gnu', platform: 'win32-x64-msvc', via: 'mingw' },
];

/** Where the addon of `platform` lands. */
export function addonPath(platform) {
  return join(root, 'npm', platform, `rabosh-memory.${platform}.node`);
}

/** The directory of the Cargo artifacts of `triple` under `profile`. */
function artifactDir(triple, profile) {
  return join(root, 'target', triple, profile === 'dev' ? 'debug' : profile);
}

function artifactName(triple) {
  if (triple.includes('windows')) return 'rabosh_node.dll';
  if (triple.includes('apple')) return 'librabosh_node.dylib';
  return 'librabosh_node.so';
}

/**
 * The GNU Windows target links napi's functions against node.exe, as an addon built by node-gyp
 * does: an import library made from the official node.exe's own export table (gendef, dlltool).
 * napi-build looks for a `libnode.dll` in LIBNODE_PATH; the linker takes libnode.dll.a first.
 */
function libnodeDir() {
  const dir = join(root, 'target', 'libnode-win');
  const lib = join(dir, 'libnode.dll.a');
  if (existsSync(lib)) return dir;
  mkdirSync(dir, { recursive: true });
  const nodeExe = foreignNode('win32-x64', 22);
  const def = join(dir, 'node.def');
  writeFileSync(def, execFileSync('gendef', ['-', nodeExe], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }));
  execFileSync('x86_64-w64-mingw32-dlltool', ['-d', def, '-D', 'node.exe', '-l', lib], { stdio: 'inherit' });
  copyFileSync(lib, join(dir, 'libnode.dll'));
  return dir;
}

/**
 * The PostgreSQL client's `whoami` dependency links the SystemConfiguration and CoreFoundation
 * frameworks on macOS (for a device name the client never asks for; dead-stripped from the
 * addon). Zig has libSystem but no frameworks, and Apple's SDK is neither here nor
 * redistributable, so the linker is given text stubs that only name each framework's install
 * path: nothing is resolved against them, and on a Mac the real framework is what loads.
 */
const APPLE_FRAMEWORKS = ['CoreFoundation', 'SystemConfiguration'];

function frameworkStubs() {
  const dir = join(root, 'target', 'macos-framework-stubs');
  for (const name of APPLE_FRAMEWORKS) {
    const fw = join(dir, `${name}.framework`);
    mkdirSync(fw, { recursive: true });
    const tbd = [
      '--- !tapi-tbd',
      'tbd-version:     4',
      'targets:         [ x86_64-macos, arm64-macos ]',
      `install-name:    '/System/Library/Frameworks/${name}.framework/Versions/A/${name}'`,
      'current-version: 1',
      '...',
      '',
    ].join('\n');
    writeFileSync(join(fw, `${name}.tbd`), tbd);
  }
  return dir;
}

function cargoEnv(target) {
  const env = { ...process.env };
  if (target.triple.includes('musl')) {
    // An addon is a shared library loaded by a dynamically linked runtime: musl's default of a
    // static C runtime cannot make one.
    const key = 'CARGO_TARGET_X86_64_UNKNOWN_LINUX_MUSL_RUSTFLAGS';
    env[key] = `${env[key] ?? ''} -C target-feature=-crt-static`.trim();
  }
  if (target.triple.includes('apple')) {
    const key = `CARGO_TARGET_${target.triple.toUpperCase().replaceAll('-', '_')}_RUSTFLAGS`;
    env[key] = `${env[key] ?? ''} -C link-arg=-F${frameworkStubs()}`.trim();
  }
  if (target.via === 'mingw') {
    env.LIBNODE_PATH = libnodeDir();
    env.CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER ??= 'x86_64-w64-mingw32-gcc';
  }
  return env;
}

export function buildTarget(target, profile) {
  const args = ['cargo'];
  args.push(target.via === 'zig' ? 'zigbuild' : 'build');
  args.push('--manifest-path', 'crates/rabosh-node/Cargo.toml', '--lib', '--target', target.triple);
  if (profile !== 'dev') args.push('--profile', profile);
  const run = spawnSync(args[0], args.slice(1), { cwd: root, stdio: 'inherit', env: cargoEnv(target) });
  if (run.status !== 0) throw new Error(`${target.triple}: cargo exited with ${run.status ?? run.signal}`);
  const built = join(artifactDir(target.triple, profile), artifactName(target.triple));
  const out = addonPath(target.platform);
  mkdirSync(dirname(out), { recursive: true });
  rmSync(out, { force: true });
  copyFileSync(built, out);
  return out;
}

/** `cargo check` of the whole workspace for the MSVC target (no MSVC linker or CRT here). */
export function checkMsvc() {
  const run = spawnSync('cargo', ['check', '--workspace', '--all-targets', '--target', 'x86_64-pc-windows-msvc'], {
    cwd: root,
    stdio: 'inherit',
  });
  if (run.status !== 0) throw new Error(`x86_64-pc-windows-msvc: cargo check exited with ${run.status ?? run.signal}`);
}

function main() {
  const argv = process.argv.slice(2);
  const value = (flag, fallback) => {
    const i = argv.indexOf(flag);
    return i >= 0 ? argv[i + 1] : fallback;
  };
  const profileFlag = value('--profile', null);
  const only = value('--only', null)?.split(',');
  // `npm test` has just built this platform's release addon at the root: reuse it.
  const nativeFromRoot = argv.includes('--native-from-root');
  for (const t of TARGETS) {
    if (only && !only.includes(t.platform) && !only.includes(t.triple)) continue;
    const started = Date.now();
    const fromRoot = join(root, `rabosh-memory.${t.platform}.node`);
    if (nativeFromRoot && t.via === 'cargo' && existsSync(fromRoot)) {
      copyFileSync(fromRoot, addonPath(t.platform));
      console.log(`build-targets: ${t.platform} copied from the root's build`);
      continue;
    }
    const out = buildTarget(t, profileFlag ?? (t.inspected ? 'cross-inspect' : 'cross'));
    const secs = ((Date.now() - started) / 1000).toFixed(0);
    console.log(`build-targets: ${t.platform} (${t.triple}, ${t.via}) -> ${out} ${statSync(out).size} bytes in ${secs} s`);
  }
  if (argv.includes('--check-msvc')) checkMsvc();
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
