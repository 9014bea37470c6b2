// The contract's pure parts (paths, sizes, file views, listings, edits), written longhand for the
// benchmark's alternative handlers. Deliberately not imported from the product: an alternative
// that shared our strings module could not disagree with us, and the run asserts that they agree.

export const ROOT = '/memories';
const LINE_LIMIT = 999_999;

export function normalisePath(raw: string): string | null {
  if (/%2e%2e/i.test(raw)) return null;
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if (c === 0x5c || c < 0x20 || c === 0x7f) return null;
  }
  if (!raw.startsWith(ROOT)) return null;
  const kept: string[] = [];
  for (const seg of raw.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') {
      if (kept.length === 0) return null;
      kept.pop();
      continue;
    }
    kept.push(seg);
  }
  const joined = '/' + kept.join('/');
  if (joined !== ROOT && !joined.startsWith(ROOT + '/')) return null;
  if (hasLoneSurrogate(raw)) return null;
  if (Buffer.byteLength(joined) > 1024) return null;
  if (kept.some((seg) => Buffer.byteLength(seg) > 255)) return null;
  return joined;
}

function hasLoneSurrogate(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const next = s.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i++;
      else return true;
    } else if (c >= 0xdc00 && c <= 0xdfff) return true;
  }
  return false;
}

export function formatSize(bytes: number): string {
  if (bytes === 0) return '0B';
  const units = ['B', 'K', 'M', 'G'];
  let unit = 0;
  while (unit < 3 && bytes >= 1024 ** (unit + 1)) unit++;
  const divisor = 1024 ** unit;
  if (bytes % divisor === 0) return `${bytes / divisor}${units[unit]}`;
  // Tenths rounded half to even on the exact quotient; toFixed would round 1280 B up to 1.3K.
  const scaled = bytes * 10;
  let tenths = Math.floor(scaled / divisor);
  const twiceRest = 2 * (scaled - tenths * divisor);
  if (twiceRest > divisor || (twiceRest === divisor && tenths % 2 === 1)) tenths++;
  return `${Math.floor(tenths / 10)}.${tenths % 10}${units[unit]}`;
}

export function lineCount(content: string): number {
  let n = 1;
  for (let i = content.indexOf('\n'); i !== -1; i = content.indexOf('\n', i + 1)) n++;
  return n;
}

function clamp(v: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, v));
}

function numbered(lineNo: number, line: string): string {
  return `${String(lineNo).padStart(6, ' ')}\t${line}`;
}

export function renderFile(
  path: string,
  content: string,
  storedLines: number,
  viewRange: unknown,
  viewMaxChars: number,
): string {
  if (storedLines > LINE_LIMIT) return `File ${path} exceeds maximum line limit of 999,999 lines.`;
  const lines = content.split('\n');
  const n = lines.length;
  let first = 0;
  let last = n;
  if (
    Array.isArray(viewRange) &&
    viewRange.length === 2 &&
    Number.isInteger(viewRange[0]) &&
    Number.isInteger(viewRange[1])
  ) {
    const [start, end] = viewRange as [number, number];
    first = clamp(Math.max(1, start) - 1, 0, n);
    last = end === -1 ? n : end < -1 ? clamp(n + end, 0, n) : clamp(end, 0, n);
  }
  let out = `Here's the content of ${path} with line numbers:`;
  if (last <= first) return out;
  let used = 0;
  let shown = first;
  for (let i = first; i < last; i++) {
    const rendered = numbered(i + 1, lines[i]!);
    const cost = rendered.length + (i > first ? 1 : 0);
    if (i > first && used + cost > viewMaxChars) break;
    out += '\n' + rendered;
    used += cost;
    shown = i + 1;
  }
  if (shown < last) {
    out += `\n[Truncated: showing lines ${first + 1} to ${shown} of ${n}. Use view_range [${shown + 1}, -1] to read the rest.]`;
  }
  return out;
}

interface Level2 {
  file: number | null;
  below: number;
  hasBelow: boolean;
}
interface Level1 extends Level2 {
  children: Map<string, Level2>;
}

/** `entries` are the memories strictly under `dir` as [path relative to `dir/`, size]. */
export function renderListing(dir: string, entries: Iterable<readonly [string, number]>): string | null {
  const top = new Map<string, Level1>();
  let total = 0;
  let any = false;
  for (const [rel, size] of entries) {
    const segs = rel.split('/');
    if (segs.some((s) => s.startsWith('.') || s === 'node_modules')) continue;
    any = true;
    total += size;
    let one = top.get(segs[0]!);
    if (!one) top.set(segs[0]!, (one = { file: null, below: 0, hasBelow: false, children: new Map() }));
    if (segs.length === 1) {
      one.file = size;
      continue;
    }
    one.below += size;
    one.hasBelow = true;
    let two = one.children.get(segs[1]!);
    if (!two) one.children.set(segs[1]!, (two = { file: null, below: 0, hasBelow: false }));
    if (segs.length === 2) two.file = size;
    else {
      two.below += size;
      two.hasBelow = true;
    }
  }
  if (!any && dir !== ROOT) return null;
  let out =
    `Here're the files and directories up to 2 levels deep in ${dir}, excluding hidden items and node_modules:` +
    `\n${formatSize(total)}\t${dir}`;
  for (const name of [...top.keys()].sort()) {
    const one = top.get(name)!;
    const at = `${dir}/${name}`;
    if (one.file !== null) out += `\n${formatSize(one.file)}\t${at}`;
    if (!one.hasBelow) continue;
    out += `\n${formatSize(one.below)}\t${at}/`;
    for (const child of [...one.children.keys()].sort()) {
      const two = one.children.get(child)!;
      if (two.file !== null) out += `\n${formatSize(two.file)}\t${at}/${child}`;
      if (two.hasBelow) out += `\n${formatSize(two.below)}\t${at}/${child}/`;
    }
  }
  return out;
}

export type Edit = { ok: true; content: string; answer: string } | { ok: false; answer: string };

export function strReplace(path: string, content: string, oldStr: string, newStr: string): Edit {
  const notFound = `No replacement was performed, old_str \`${oldStr}\` did not appear verbatim in ${path}.`;
  if (oldStr === '') return { ok: false, answer: notFound };
  const at = content.indexOf(oldStr);
  if (at === -1) return { ok: false, answer: notFound };
  if (content.indexOf(oldStr, at + oldStr.length) !== -1) {
    const lines: number[] = [];
    for (let i = at; i !== -1; i = content.indexOf(oldStr, i + 1)) lines.push(lineOf(content, i));
    return {
      ok: false,
      answer: `No replacement was performed. Multiple occurrences of old_str \`${oldStr}\` in lines: ${lines.join(', ')}. Please ensure it is unique`,
    };
  }
  const edited = content.slice(0, at) + newStr + content.slice(at + oldStr.length);
  const changed = lineOf(content, at);
  const lines = edited.split('\n');
  let answer = 'The memory file has been edited. Here is the snippet showing the change (with line numbers):';
  for (let no = Math.max(1, changed - 2); no <= Math.min(lines.length, changed + 2); no++) {
    answer += '\n' + numbered(no, lines[no - 1]!);
  }
  return { ok: true, content: edited, answer };
}

function lineOf(content: string, offset: number): number {
  let line = 1;
  for (let i = content.indexOf('\n'); i !== -1 && i < offset; i = content.indexOf('\n', i + 1)) line++;
  return line;
}

export function insertLines(path: string, content: string, insertLine: unknown, text: string): Edit {
  const body = content.endsWith('\n') ? content.slice(0, -1) : content;
  const lines = content === '' ? [] : body.split('\n');
  if (typeof insertLine !== 'number' || !Number.isInteger(insertLine) || insertLine < 0 || insertLine > lines.length) {
    return {
      ok: false,
      answer: `Error: Invalid \`insert_line\` parameter: ${String(insertLine)}. It should be within the range of lines of the file: [0, ${lines.length}]`,
    };
  }
  lines.splice(insertLine, 0, text.endsWith('\n') ? text.slice(0, -1) : text);
  let edited = lines.join('\n');
  if (!edited.endsWith('\n')) edited += '\n';
  return { ok: true, content: edited, answer: `The file ${path} has been edited.` };
}

export function tooBig(path: string, max: number): string {
  return `Error: File ${path} exceeds the maximum memory file size of ${max} bytes`;
}
