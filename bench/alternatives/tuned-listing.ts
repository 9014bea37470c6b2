// The directory view built the way a user chasing speed would write it over rows of
// (path, size): one pass into at most two levels of maps, plain-number half-even sizes, one
// join. Independent of the product's formatter; the run checks it byte for byte against ours.

interface Node {
  /** Size of the memory with exactly this name; -1 when there is none. */
  file: number;
  below: number;
  hasBelow: boolean;
  children: Map<string, Node> | null;
}

const node = (): Node => ({ file: -1, below: 0, hasBelow: false, children: null });
const UNITS = ['B', 'K', 'M', 'G'];

/** The contract's size: whole units bare, otherwise tenths rounded half to even. */
export function tunedSize(n: number): string {
  if (n < 1024) return `${n}B`;
  let k = 1;
  while (k < 3 && n >= 1024 ** (k + 1)) k++;
  const d = 1024 ** k;
  const whole = Math.floor(n / d);
  const r = n - whole * d; // exact: d is a power of two and n a safe integer
  if (r === 0) return `${whole}${UNITS[k]}`;
  const t = Math.floor((r * 10) / d);
  const rem = r * 10 - t * d;
  let tenths = whole * 10 + t;
  if (rem * 2 > d || (rem * 2 === d && tenths % 2 === 1)) tenths++;
  return `${Math.floor(tenths / 10)}.${tenths % 10}${UNITS[k]}`;
}

function isHidden(p: string, from: number): boolean {
  if (p.charCodeAt(from) !== 46 && !p.includes('/.', from) && !p.includes('node_modules', from)) return false;
  return p
    .slice(from)
    .split('/')
    .some((s) => s.startsWith('.') || s === 'node_modules');
}

function child(parent: Node, name: string): Node {
  parent.children ??= new Map();
  const map = parent.children;
  let n = map.get(name);
  if (!n) {
    n = node();
    map.set(name, n);
  }
  return n;
}

/**
 * The view of `dir` from rows of [full path, size] for every memory under `dir/`; null when
 * nothing visible is there and `dir` is not the root.
 */
export function tunedListing(dir: string, isRoot: boolean, rows: readonly (readonly [string, number])[]): string | null {
  const cut = dir.length + 1;
  const top = node();
  let total = 0;
  let any = false;
  for (let i = 0; i < rows.length; i++) {
    const p = rows[i]![0];
    const n = rows[i]![1];
    if (isHidden(p, cut)) continue;
    any = true;
    total += n;
    const s1 = p.indexOf('/', cut);
    if (s1 === -1) {
      child(top, p.slice(cut)).file = n;
      continue;
    }
    const first = child(top, p.slice(cut, s1));
    first.below += n;
    first.hasBelow = true;
    const s2 = p.indexOf('/', s1 + 1);
    const second = child(first, s2 === -1 ? p.slice(s1 + 1) : p.slice(s1 + 1, s2));
    if (s2 === -1) second.file = n;
    else {
      second.below += n;
      second.hasBelow = true;
    }
  }
  if (!any && !isRoot) return null;
  let out = `Here're the files and directories up to 2 levels deep in ${dir}, excluding hidden items and node_modules:\n${tunedSize(total)}\t${dir}`;
  const walk = (base: string, at: Node, deep: boolean) => {
    if (!at.children) return;
    for (const name of [...at.children.keys()].sort()) {
      const c = at.children.get(name)!;
      if (c.file !== -1) out += `\n${tunedSize(c.file)}\t${base}/${name}`;
      if (!c.hasBelow) continue;
      out += `\n${tunedSize(c.below)}\t${base}/${name}/`;
      if (deep) walk(`${base}/${name}`, c, false);
    }
  };
  walk(dir, top, true);
  return out;
}
