// Official Node.js binaries of each supported line, fetched from the npm registry (the
// `node-<os>-<arch>` packages ship them) and cached under node_modules/.cache, so the addon and
// the README can be tried under every line from one machine, whatever Node runs the tests.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { npm } from './npm-cli.js';

export const SUPPORTED_NODE_MAJORS = [22, 24, 26] as const;

const root = resolve(import.meta.dirname, '..');
const cache = join(root, 'node_modules', '.cache', 'rabosh-node-binaries');

function packageName(): string {
  const os = process.platform === 'win32' ? 'win' : process.platform;
  return `node-${os}-${process.arch}`;
}

function executableIn(dir: string): string | null {
  for (const rel of ['package/bin/node', 'package/bin/node.exe', 'package/node.exe']) {
    if (existsSync(join(dir, rel))) return join(dir, rel);
  }
  return null;
}

/**
 * The path of the newest published Node `major`.x for this platform, or of exactly the version
 * given as `x.y.z` (the engines floor); downloads it once.
 */
export function nodeBinary(major: number | string): string {
  const dir = join(cache, String(major));
  const cached = executableIn(dir);
  if (cached) return cached;
  const partial = `${dir}.partial-${process.pid}`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial, { recursive: true });
  npm(['pack', `${packageName()}@${major}`, '--pack-destination', partial, '--silent'], partial);
  const tarball = readdirSync(partial).find((f) => f.endsWith('.tgz'));
  if (!tarball) throw new Error(`npm pack ${packageName()}@${major} wrote no tarball`);
  execFileSync('tar', ['xzf', tarball], { cwd: partial });
  rmSync(join(partial, tarball));
  if (!executableIn(partial)) throw new Error(`${packageName()}@${major} holds no node executable where expected`);
  // Whole or absent: a killed download never leaves a half-extracted binary in the cache. Test
  // files run side by side, so another may have put the same binary in place meanwhile: that one
  // stays (it may be running), and this copy goes.
  if (!executableIn(dir)) {
    rmSync(dir, { recursive: true, force: true });
    try {
      renameSync(partial, dir);
    } catch (err) {
      if (!executableIn(dir)) throw err;
    }
  }
  rmSync(partial, { recursive: true, force: true });
  return executableIn(dir)!;
}
