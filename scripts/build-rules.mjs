// Two build rules that no type checker enforces, checked by __test__/shipping-rules.test.ts.
//
// 1. The library (index.ts, src/**) never imports `path` or `fs`: memory
//    paths are keys, not file names, and MemoryPath.normalise must give the same key on every
//    OS. The one exception is the place that takes the store directory from the host.
// 2. Nothing calls `compact(` except expireBefore and explicit maintenance entry points:
//    the contract says deleting never compacts, and a compaction hidden in a write path would
//    turn every delete into a rewrite of the store.
// 3. No import cycle among index.ts and src/** (type-only imports count too): a cycle makes
//    module evaluation order matter (a class read before it is defined under CommonJS) and
//    means two modules cannot be understood, or changed, one without the other.
// 4. The library has no runtime dependency: a static import that is not type-only names a
//    relative module or a `node:` builtin. The SDK is an optional peer, imported type-only or
//    dynamically where a call needs it; the apps (apps/**) are where packages come in.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, posix, sep } from 'node:path';

/** Facade files allowed to touch the filesystem APIs: where the store directory comes in. */
export const STORE_DIR_FILES = new Set([]);

/**
 * Where `compact(` may be called: { file, fn } where fn is the enclosing function.
 * Definitions (`fn compact(`, a TS method `compact(...) {`) are never calls.
 */
export const COMPACT_CALLERS = [
  { file: 'crates/rabosh-memory/src/expiry.rs', fn: 'expire_before' },
  // The embedded backend's reclaim(), which only expire_before calls (through the Backend seam).
  { file: 'crates/rabosh-memory/src/backends/embedded/mod.rs', fn: 'reclaim' },
  // The explicit maintenance entry point, db.compact(), at each layer it passes through:
  // the engine's public Store::compact, the binding's NativeStore.compact, the facade's Rabosh.compact.
  { file: 'crates/rabosh/src/store/compact.rs', fn: 'compact' },
  { file: 'crates/rabosh-memory/src/store.rs', fn: 'compact' },
  { file: 'crates/rabosh-memory/src/backends/embedded/mod.rs', fn: 'compact' },
  { file: 'crates/rabosh-memory/src/backends/embedded/engine.rs', fn: 'compact' },
  { file: 'crates/rabosh-node/src/store.rs', fn: 'compact' },
  { file: 'src/store.ts', fn: 'compact' },
];

const FORBIDDEN_MODULES = ['path', 'path/posix', 'path/win32', 'fs', 'fs/promises'];

function walk(root, dir, out, accept) {
  let names;
  try {
    names = readdirSync(join(root, dir));
  } catch {
    return out;
  }
  for (const name of names.sort()) {
    if (name === 'node_modules' || name === 'target' || name.startsWith('.')) continue;
    const rel = dir ? join(dir, name) : name;
    const st = statSync(join(root, rel));
    if (st.isDirectory()) walk(root, rel, out, accept);
    else if (accept(rel)) out.push(rel.split(sep).join('/'));
  }
  return out;
}

/** Blank out comments but keep line numbers (strings are left alone, which only over-reports). */
export function stripComments(text) {
  return text.replace(/\/\*[\s\S]*?\*\//g, (m) => m.replace(/[^\n]/g, ' ')).replace(/(^|[^:'"])\/\/.*$/gm, (_m, lead) => lead);
}

export function facadeFiles(root) {
  const files = walk(root, 'src', [], (f) => /\.(c|m)?tsx?$|\.(c|m)?js$/.test(f));
  try {
    statSync(join(root, 'index.ts'));
    files.unshift('index.ts');
  } catch {
    /* no facade entry yet */
  }
  return files;
}

/** `file:line: imports 'x'` for every static, not type-only import of a package by the library. */
export function dependencyViolations(root) {
  const re = /^\s*(?:import|export)\s+(?!type\b)(?:[^'";]*?\sfrom\s*)?['"]([^'"]+)['"]/gm;
  const out = [];
  for (const file of facadeFiles(root)) {
    const text = stripComments(readFileSync(join(root, file), 'utf8'));
    for (const m of text.matchAll(re)) {
      const spec = m[1];
      if (spec.startsWith('.') || spec.startsWith('node:')) continue;
      const line = text.slice(0, m.index).split('\n').length + (m[0].match(/^\s*/)[0].split('\n').length - 1);
      out.push(`${file}:${line}: imports '${spec}'`);
    }
  }
  return out;
}

/** `file:line: imports 'x'` for every forbidden module reference in the facade. */
export function pathImportViolations(root) {
  const names = FORBIDDEN_MODULES.map((m) => m.replace('/', '\\/')).join('|');
  const spec = `['"](?:node:)?(?:${names})['"]`;
  const re = new RegExp(`(?:\\bfrom\\s*${spec}|\\bimport\\s*${spec}|\\brequire\\s*\\(\\s*${spec}|\\bimport\\s*\\(\\s*${spec})`);
  const out = [];
  for (const file of facadeFiles(root)) {
    if (STORE_DIR_FILES.has(file)) continue;
    const lines = stripComments(readFileSync(join(root, file), 'utf8')).split('\n');
    lines.forEach((line, i) => {
      const m = line.match(re);
      if (m) out.push(`${file}:${i + 1}: ${m[0].trim()}`);
    });
  }
  return out;
}

const NOT_A_FUNCTION = new Set(['if', 'for', 'while', 'switch', 'catch', 'return', 'await', 'match', 'loop']);

function enclosingFunction(lines, index, rust) {
  for (let i = index; i >= 0; i--) {
    const line = lines[i];
    const m = rust
      ? line.match(/\bfn\s+([A-Za-z_]\w*)/)
      : (line.match(
          /^\s*(?:export\s+)?(?:default\s+)?(?:public\s+|private\s+|protected\s+|static\s+|async\s+|function\s+|\*\s*)*([A-Za-z_$][\w$]*)\s*(?:<[^>]*>)?\s*\([^;]*$/,
        ) ?? line.match(/\b(?:const|let)\s+([A-Za-z_$][\w$]*)\s*=\s*(?:async\s*)?(?:\([^)]*\)|[A-Za-z_$][\w$]*)\s*=>/));
    if (m && !NOT_A_FUNCTION.has(m[1])) return m[1];
  }
  return '(top level)';
}

function isDefinition(line, rust) {
  return rust
    ? /\bfn\s+compact\s*[<(]/.test(line)
    : /^\s*(?:public\s+|private\s+|async\s+|static\s+)*compact\s*\([^)]*\)\s*(?::[^{=]*)?\{?\s*$/.test(line) ||
        /\bcompact\s*\([^)]*\)\s*:\s*Promise/.test(line);
}

/** Rust test code is exempt: a `#[cfg(test)]` module runs to the end of the file. */
function testModuleStart(lines) {
  const i = lines.findIndex((l) => /#\[cfg\(test\)\]/.test(l));
  return i === -1 ? lines.length : i;
}

export function compactFiles(root) {
  const src = walk(root, 'src', [], (f) => /\.(c|m)?[tj]sx?$/.test(f));
  const crates = walk(root, 'crates', [], (f) => f.endsWith('.rs')).filter((f) => !/\/(tests|benches|examples)\//.test(f));
  const top = [];
  try {
    statSync(join(root, 'index.ts'));
    top.push('index.ts');
  } catch {
    /* no facade entry yet */
  }
  return [...top, ...src, ...crates];
}

/** `file:line in fn: compact(` for every call outside COMPACT_CALLERS. */
export function compactViolations(root) {
  const out = [];
  for (const file of compactFiles(root)) {
    const rust = file.endsWith('.rs');
    const lines = stripComments(readFileSync(join(root, file), 'utf8')).split('\n');
    const end = rust ? testModuleStart(lines) : lines.length;
    for (let i = 0; i < end; i++) {
      if (!/\bcompact\s*\(/.test(lines[i]) || isDefinition(lines[i], rust)) continue;
      const fn = enclosingFunction(lines, i, rust);
      if (COMPACT_CALLERS.some((a) => a.file === file && a.fn === fn)) continue;
      out.push(`${file}:${i + 1} in ${fn}: ${lines[i].trim()}`);
    }
  }
  return out;
}

/** Relative module specifiers a file imports or re-exports (static, side-effect and dynamic). */
function relativeImports(text) {
  const code = stripComments(text);
  const out = [];
  const re = /(?:\b(?:import|export)\b[^;'"]*?\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)['"](\.{1,2}\/[^'"]+)['"]/g;
  for (let m = re.exec(code); m !== null; m = re.exec(code)) out.push(m[1]);
  return out;
}

/** The file a relative specifier names, among `files` (`./x.js` is `x.ts` in the sources). */
function resolveSpecifier(from, spec, files) {
  const base = posix.normalize(posix.join(dirname(from).split(sep).join('/'), spec));
  const stem = base.replace(/\.(c|m)?js$/, '');
  for (const candidate of [base, `${stem}.ts`, `${stem}.mts`, `${stem}.cts`, `${stem}/index.ts`]) {
    if (files.has(candidate)) return candidate;
  }
  return null;
}

/** Every import cycle among index.ts and src/**, each as `a -> b -> … -> a`, each reported once. */
export function importCycles(root) {
  const list = walk(root, 'src', [], (f) => /\.(c|m)?ts$/.test(f) && !f.endsWith('.d.ts'));
  try {
    statSync(join(root, 'index.ts'));
    list.unshift('index.ts');
  } catch {
    /* no facade entry yet */
  }
  const files = new Set(list);
  const edges = new Map(
    list.map((f) => [
      f,
      [
        ...new Set(
          relativeImports(readFileSync(join(root, f), 'utf8'))
            .map((s) => resolveSpecifier(f, s, files))
            .filter((t) => t !== null),
        ),
      ].sort(),
    ]),
  );
  const cycles = new Map();
  const state = new Map(); // 1 on the current path, 2 done
  const path = [];
  const visit = (f) => {
    state.set(f, 1);
    path.push(f);
    for (const t of edges.get(f)) {
      if (state.get(t) === 1) {
        const cycle = path.slice(path.indexOf(t));
        // One name per cycle whichever module the walk entered it by: start at the smallest.
        const i = cycle.indexOf([...cycle].sort()[0]);
        const rotated = [...cycle.slice(i), ...cycle.slice(0, i)];
        cycles.set(rotated.join(' -> '), [...rotated, rotated[0]].join(' -> '));
      } else if (!state.has(t)) visit(t);
    }
    path.pop();
    state.set(f, 2);
  };
  for (const f of list) if (!state.has(f)) visit(f);
  return [...cycles.values()].sort();
}
