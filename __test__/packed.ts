// The tarballs a user installs: the library (the root package) as `npm pack` makes it, this
// machine's platform package (npm/<platform>/ with the freshly built addon copied in, which is
// what the release workflow publishes), and the app package (apps/cli: the CLI, MCP server and
// inspector), which depends on the library by version.
import { cpSync, mkdirSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { npm } from './npm-cli.js';

const root = resolve(import.meta.dirname, '..');

/** The built addon for this machine, i.e. the one the loader picked in the repo. */
function hostAddon(): { file: string; abi: string } {
  const prefix = `${process.platform}-${process.arch}`;
  const found = readdirSync(root).filter((f) => f.startsWith(`rabosh-memory.${prefix}`) && f.endsWith('.node'));
  if (found.length !== 1)
    throw new Error(`expected one built addon for ${prefix} in the repo root, found ${JSON.stringify(found)}; run npm run build`);
  const file = found[0]!;
  return { file, abi: file.slice('rabosh-memory.'.length, -'.node'.length) };
}

/** This machine's platform package suffix, e.g. `linux-x64-gnu`. */
export function hostAbi(): string {
  return hostAddon().abi;
}

export interface Packed {
  rootTarball: string;
  platformTarball: string;
  appTarball: string;
  /** The paths inside the root tarball. */
  rootFiles: string[];
  /** The paths inside the app tarball. */
  appFiles: string[];
}

export function packTarballs(work: string): Packed {
  const tarballs = join(work, 'tarballs');
  mkdirSync(tarballs, { recursive: true });
  const { file, abi } = hostAddon();
  const platformDir = join(work, abi);
  cpSync(join(root, 'npm', abi), platformDir, { recursive: true });
  cpSync(join(root, file), join(platformDir, file));
  const packed = JSON.parse(npm(['pack', '--json', '--ignore-scripts', '--pack-destination', tarballs], root)) as Array<{
    filename: string;
    files: Array<{ path: string }>;
  }>;
  const platformPacked = JSON.parse(npm(['pack', '--json', '--ignore-scripts', '--pack-destination', tarballs], platformDir)) as Array<{
    filename: string;
  }>;
  const appPacked = JSON.parse(
    npm(['pack', '--json', '--ignore-scripts', '--pack-destination', tarballs], join(root, 'apps', 'cli')),
  ) as Array<{ filename: string; files: Array<{ path: string }> }>;
  return {
    rootTarball: join(tarballs, packed[0]!.filename),
    platformTarball: join(tarballs, platformPacked[0]!.filename),
    appTarball: join(tarballs, appPacked[0]!.filename),
    rootFiles: packed[0]!.files.map((f) => f.path),
    appFiles: appPacked[0]!.files.map((f) => f.path),
  };
}
