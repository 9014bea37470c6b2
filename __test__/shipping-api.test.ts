// The public-surface check (scripts/api-report.mjs): the committed reports under api/ must
// match the built TypeScript API and the generated binding declarations. A planted change to
// each, in a copy of the tree, must be reported, so the check cannot pass vacuously.
import { spawnSync } from 'node:child_process';
import { appendFileSync, cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '..');
const work = mkdtempSync(join(tmpdir(), 'rabosh-api-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function check(tree: string): { status: number | null; output: string } {
  const r = spawnSync(process.execPath, [join(tree, 'scripts', 'api-report.mjs')], { cwd: tree, encoding: 'utf8' });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

describe('API reports', () => {
  it('match the current build (run `npm run api:update` and commit api/ when the API changes on purpose)', () => {
    const r = check(root);
    expect(r.output).toContain('api-report: reports match the build');
    expect(r.status).toBe(0);
  });

  it('report a changed export and a changed binding declaration', () => {
    const tree = join(work, 'tree');
    mkdirSync(join(tree, 'dist'), { recursive: true });
    for (const p of ['api', 'scripts', join('dist', 'esm'), 'binding.d.cts', 'package.json']) {
      cpSync(join(root, p), join(tree, p), { recursive: true });
    }
    symlinkSync(join(root, 'node_modules'), join(tree, 'node_modules'), 'junction');
    appendFileSync(join(tree, 'dist', 'esm', 'index.d.ts'), '\n/** Planted by the test. */\nexport declare function planted(): void;\n');
    appendFileSync(join(tree, 'binding.d.cts'), '\nexport declare function plantedNative(): void\n');
    const r = check(tree);
    expect(r.status).toBe(1);
    expect(r.output).toContain('api/binding.api.md differs from binding.d.cts');
    expect(r.output).toContain('plantedNative');
    expect(r.output).toContain('api/rabosh-memory.api.md differs from the built API');
    expect(r.output).toContain('planted');
  });
});
