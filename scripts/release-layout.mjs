// What a publishable tree must look like, checked before anything reaches the registry
// (napi's own commands only warn when a binary is missing, and npm has no rollback).
// Shared by scripts/check-release.mjs and __test__/shipping-npm.test.ts.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseTriple } from '@napi-rs/cli';

const LIBC = { gnu: 'glibc', musl: 'musl' };

/**
 * @param {string} root repository root
 * @param {{ binaries?: boolean, optionalDependencies?: boolean }} want
 *   binaries: each platform package holds its .node file;
 *   optionalDependencies: the root declares every platform package at its own version
 *   (true only after `napi pre-publish` has written them).
 * @returns {string[]} problems, empty when the tree is publishable
 */
export function releaseProblems(root, want = {}) {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const { binaryName, targets = [] } = pkg.napi ?? {};
  const problems = [];
  if (!binaryName) problems.push('package.json: napi.binaryName is missing');
  if (targets.length === 0) problems.push('package.json: napi.targets is empty');
  for (const triple of targets) {
    const t = parseTriple(triple);
    const abi = t.platformArchABI;
    const dir = join('npm', abi);
    const manifestPath = join(root, dir, 'package.json');
    if (!existsSync(manifestPath)) {
      problems.push(`${dir}/package.json is missing (run: npx napi create-npm-dirs)`);
      continue;
    }
    const m = JSON.parse(readFileSync(manifestPath, 'utf8'));
    const file = `${binaryName}.${abi}.node`;
    const expect = (what, actual, wanted) => {
      if (JSON.stringify(actual) !== JSON.stringify(wanted)) {
        problems.push(`${dir}/package.json: ${what} is ${JSON.stringify(actual)}, expected ${JSON.stringify(wanted)}`);
      }
    };
    expect('name', m.name, `${pkg.name}-${abi}`);
    expect('version', m.version, pkg.version);
    expect('main', m.main, file);
    expect('files', m.files, [file]);
    expect('os', m.os, [t.platform]);
    expect('cpu', m.cpu, [t.arch]);
    expect('libc', m.libc, LIBC[t.abi] ? [LIBC[t.abi]] : undefined);
    expect('license', m.license, pkg.license);
    expect('engines', m.engines, pkg.engines);
    if (want.binaries && !existsSync(join(root, dir, file))) {
      problems.push(`${dir}/${file} is missing: the ${triple} build did not reach its package`);
    }
    if (want.optionalDependencies) {
      expect(`root optionalDependencies entry for ${m.name}`, pkg.optionalDependencies?.[m.name], pkg.version);
    }
  }
  // The app package ships beside the library at the same version and depends on exactly it.
  const appPath = join(root, 'apps', 'cli', 'package.json');
  if (existsSync(appPath)) {
    const app = JSON.parse(readFileSync(appPath, 'utf8'));
    if (app.version !== pkg.version)
      problems.push(`apps/cli/package.json: version is ${JSON.stringify(app.version)}, expected ${JSON.stringify(pkg.version)}`);
    if (app.dependencies?.[pkg.name] !== pkg.version) {
      problems.push(
        `apps/cli/package.json: dependency ${pkg.name} is ${JSON.stringify(app.dependencies?.[pkg.name])}, expected ${JSON.stringify(pkg.version)}`,
      );
    }
    if (JSON.stringify(app.engines) !== JSON.stringify(pkg.engines))
      problems.push("apps/cli/package.json: engines differ from the library's");
  } else {
    problems.push('apps/cli/package.json is missing');
  }
  return problems;
}
