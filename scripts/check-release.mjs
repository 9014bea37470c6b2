#!/usr/bin/env node
// Release gate, run by the release workflow and by `prepublishOnly`:
//   node scripts/check-release.mjs                        full check before `npm publish`
//   node scripts/check-release.mjs --before-pre-publish   binaries in place, optionalDependencies not yet written
// A plain `npm publish` from a checkout fails here instead of shipping a root package whose
// optionalDependencies are missing, i.e. one that installs but cannot load its addon.
import { releaseProblems } from './release-layout.mjs';

const beforePrePublish = process.argv.includes('--before-pre-publish');
const problems = releaseProblems(process.cwd(), { binaries: true, optionalDependencies: !beforePrePublish });
if (problems.length > 0) {
  for (const p of problems) console.error(`check-release: ${p}`);
  process.exit(1);
}
console.log('check-release: ok');
