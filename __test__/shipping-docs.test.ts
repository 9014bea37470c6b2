// `npm run docs` must stay warning-free (issue 6: every exported symbol documented). typedoc runs
// with the committed typedoc.json (treatWarningsAsErrors, notDocumented validation) into a temp
// dir; a copy of the sources with one undocumented export planted must be refused, so the check
// cannot pass vacuously (e.g. if the validation options were dropped).
import { spawnSync } from 'node:child_process';
import { appendFileSync, cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs script without declarations
import { performanceDoc, scaleChart } from '../scripts/perf-doc.mjs';

const root = resolve(import.meta.dirname, '..');
const typedoc = join(createRequire(import.meta.url).resolve('typedoc/package.json'), '..', 'bin', 'typedoc');
const work = mkdtempSync(join(tmpdir(), 'rabosh-docs-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function runTypedoc(tree: string, out: string): { status: number | null; output: string } {
  const r = spawnSync(process.execPath, [typedoc, '--out', out], { cwd: tree, encoding: 'utf8' });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

describe('API documentation (typedoc)', () => {
  it('generates without a single warning', () => {
    const r = runTypedoc(root, join(work, 'site'));
    expect(r.output).not.toMatch(/\[warning\]/);
    expect(r.output).not.toMatch(/\[error\]/);
    expect(r.status).toBe(0);
  });

  // The index was an alphabetical wall of ~60 names: it is now an overview holding README's
  // quick start (included from README, so the two cannot drift), and the module page opens with
  // the handler and its two adapters.
  it('opens on an overview with the quick start, and lists the handler first', () => {
    const entities: Record<string, string> = { '&#39;': "'", '&quot;': '"', '&amp;': '&', '&lt;': '<', '&gt;': '>' };
    const text = (file: string) =>
      readFileSync(join(work, 'site', file), 'utf8')
        .replace(/<[^>]+>/g, ' ')
        .replace(/&#39;|&quot;|&amp;|&lt;|&gt;/g, (e) => entities[e]!)
        .replace(/\s+/g, ' ');
    const index = text('index.html');
    expect(index).toContain('rabosh-memory API');
    expect(index).toContain('Quick start: the SDK');
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    const quick = /<!-- #region quick-start -->\n([\s\S]*?)<!-- #endregion quick-start -->/.exec(readme)![1]!;
    // the quick start's first sentence and its code, as rendered words
    expect(index).toContain('Save as agent.mjs and run node agent.mjs');
    expect(index).toMatch(/RaboshMemoryToolHandler \. open \( '\.\/agent-memory' \)/);
    expect(quick).toContain("RaboshMemoryToolHandler.open('./agent-memory')");
    const modules = text('modules.html');
    const start = modules.indexOf(' Start here ');
    expect(start).toBeGreaterThan(-1);
    expect(modules.slice(start, start + 80)).toMatch(/^ Start here RaboshMemoryToolHandler memoryResult memoryTool Classes /);
  });

  it('refuses an undocumented export', () => {
    const tree = join(work, 'tree');
    for (const p of [
      'index.ts',
      'src',
      'binding.cjs',
      'binding.d.cts',
      'package.json',
      'typedoc.json',
      'tsconfig.json',
      'tsconfig.esm.json',
      'README.md',
      'docs',
    ]) {
      cpSync(join(root, p), join(tree, p), { recursive: true });
    }
    symlinkSync(join(root, 'node_modules'), join(tree, 'node_modules'), 'junction');
    appendFileSync(join(tree, 'index.ts'), '\nexport const plantedUndocumented = 1;\n');
    const r = runTypedoc(tree, join(work, 'tree-site'));
    expect(r.output).toMatch(/plantedUndocumented .*does not have any documentation/);
    expect(r.status).not.toBe(0);
  });
});

describe('library guide advice', () => {
  // Memory results are the cheapest to clear (a view reads each back); excluding them from
  // context editing keeps the one kind of result that never needed keeping.
  it('the context-editing example clears memory results too', () => {
    const guide = readFileSync(join(root, 'docs', 'guide', 'library.md'), 'utf8');
    const section = guide.slice(guide.indexOf('\n## Context editing\n'));
    const block = /\n```ts\n([\s\S]*?)\n```\n/.exec(section)![1]!;
    expect(block).toContain('clear_tool_uses_20250919');
    expect(block).not.toMatch(/exclude_tools:\s*\[[^\]]*'memory'/);
    expect(section.slice(0, section.indexOf('```'))).toMatch(/read back with a `view`/);
  });
});

// docs/performance.md is generated from bench/results/*.md (scripts/perf-doc.mjs): a rerun of the
// bench that is committed without the page, or a page edited by hand, fails here.
describe('docs/performance.md', () => {
  it('is what scripts/perf-doc.mjs builds from bench/results', () => {
    expect(readFileSync(join(root, 'docs', 'performance.md'), 'utf8')).toBe((performanceDoc as (dir: string) => string)(root));
  });

  it('charts the scale runs as scripts/perf-doc.mjs draws them (docs/performance-scale.svg)', () => {
    const svg = join(root, 'docs', 'performance-scale.svg');
    const chart = (scaleChart as (dir: string) => string | null)(root);
    if (chart === null) expect(existsSync(svg)).toBe(false);
    else expect(readFileSync(svg, 'utf8')).toBe(chart);
  });
});

/** README, CONTRIBUTING and every markdown file under docs/. */
function userDocs(): string[] {
  const under = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? under(join(dir, e.name)) : e.name.endsWith('.md') ? [join(dir, e.name)] : [],
    );
  return [join(root, 'README.md'), join(root, 'CONTRIBUTING.md'), join(root, 'CHANGELOG.md'), ...under(join(root, 'docs'))];
}

/** Relative link targets of a markdown text (inline links and images), without their #fragment. */
function relativeLinks(text: string): string[] {
  const code = /```[\s\S]*?```|`[^`\n]*`/g;
  return [...text.replace(code, '').matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)]
    .map((m) => m[1]!)
    .filter((t) => !/^[a-z][a-z0-9+.-]*:/i.test(t) && !t.startsWith('#'))
    .map((t) => decodeURIComponent(t.split('#')[0]!));
}

describe('markdown links', () => {
  it('every relative link in README, CONTRIBUTING, CHANGELOG and docs/ points to a file that exists', () => {
    const broken = userDocs().flatMap((file) =>
      relativeLinks(readFileSync(file, 'utf8'))
        .filter((target) => !existsSync(resolve(dirname(file), target)))
        .map((target) => `${relative(root, file)} → ${target}`),
    );
    expect(broken).toEqual([]);
  });

  it('the check sees a broken link', () => {
    expect(relativeLinks('see [a](missing.md#x), `[b](code.md)`, [c](https://x.y/z) and ![d](img/d.png)')).toEqual([
      'missing.md',
      'img/d.png',
    ]);
  });
});
