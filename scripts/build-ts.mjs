#!/usr/bin/env node
// Compile the facade twice (ESM and CommonJS) and give each build a door to the one native
// loader at the package root, so `import` and `require` share a single addon instance.
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');

rmSync(join(root, 'dist'), { recursive: true, force: true });
for (const config of ['tsconfig.esm.json', 'tsconfig.cjs.json']) {
  execFileSync(process.execPath, [tsc, '-p', join(root, config)], { stdio: 'inherit', cwd: root });
}

for (const flavour of ['esm', 'cjs']) {
  const out = join(root, 'dist', flavour);
  mkdirSync(out, { recursive: true });
  // `module.exports = require(...)` is a re-export Node's CJS lexer sees, so ESM named imports work.
  writeFileSync(join(out, 'binding.cjs'), "'use strict';\nmodule.exports = require('../../binding.cjs');\n");
  writeFileSync(join(out, 'binding.d.cts'), "export * from '../../binding.cjs';\n");
}
writeFileSync(join(root, 'dist', 'cjs', 'package.json'), '{ "type": "commonjs" }\n');
