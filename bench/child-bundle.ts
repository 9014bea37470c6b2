// The benchmark's child script as one JavaScript file, built once per run. Every cell runs in a
// fresh process, and under tsx each of them paid about 0.3 s of CPU for the loader (a loader
// thread, tsx itself, the transforms) before it measured anything: most of a small run's CPU
// (docs/investigations/ci-time.md). Bun runs the TypeScript itself and does not use this.
import { mkdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, type Plugin } from 'esbuild';

const repo = resolve(import.meta.dirname, '..');

/**
 * Each module keeps its own location: `import.meta.url`, `dirname` and `filename` are the source
 * file's, not the bundle's (the peers' directory, the shared-store peer's script), and the native
 * loader is imported where it lies, since it finds the addon beside itself.
 */
const inPlace: Plugin = {
  name: 'modules-in-place',
  setup(b) {
    b.onResolve({ filter: /\.cjs$/ }, (a) => ({ path: pathToFileURL(resolve(a.resolveDir, a.path)).href, external: true }));
    b.onLoad({ filter: /\.ts$/ }, (a) => {
      const contents = readFileSync(a.path, 'utf8')
        .replaceAll('import.meta.url', JSON.stringify(pathToFileURL(a.path).href))
        .replaceAll('import.meta.dirname', JSON.stringify(dirname(a.path)))
        .replaceAll('import.meta.filename', JSON.stringify(a.path));
      return { contents, loader: 'ts' };
    });
  },
};

/**
 * Bundles `bench/child.ts` (packages stay external) under node_modules/.cache, where Node finds
 * the repository's packages from it; the caller removes the file when the run ends.
 */
export async function bundleChild(): Promise<string> {
  const out = join(repo, 'node_modules', '.cache', 'rabosh-bench', `child-${process.pid}.mjs`);
  mkdirSync(dirname(out), { recursive: true });
  await build({
    entryPoints: [join(repo, 'bench', 'child.ts')],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    outfile: out,
    logLevel: 'warning',
    plugins: [inPlace],
  });
  return out;
}
