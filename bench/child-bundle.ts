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
      const contents = requiredDoor(readFileSync(a.path, 'utf8'))
        .replaceAll('import.meta.url', JSON.stringify(pathToFileURL(a.path).href))
        .replaceAll('import.meta.dirname', JSON.stringify(dirname(a.path)))
        .replaceAll('import.meta.filename', JSON.stringify(a.path));
      return { contents, loader: 'ts' };
    });
  },
};

/**
 * The addon's door re-exports the CommonJS loader; the library's ESM build requires it instead
 * (scripts/build-ts.mjs: an ESM import of CommonJS runs Node's export lexer, some 6 MB resident),
 * and so does the bundle, so the bench's memory rows are what the package's users get.
 */
function requiredDoor(source: string): string {
  return source.replace(/export \{([^}]*)\} from '\.\.\/binding\.cjs';/, (_, names: string) =>
    [
      "import { createRequire } from 'node:module';",
      "const binding = createRequire(import.meta.url)('../binding.cjs');",
      `export const { ${names.trim().replace(/,$/, '')} } = binding;`,
    ].join('\n'),
  );
}

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
