// Differential test: random command scripts run against the real handler and against a reference
// model written longhand below (a Map from normalised path to content, with its own path rules and
// its own string formatting — it shares no code with src/). After every command the answer text and
// isError must be identical; after close + reopen the store must hold exactly what the model holds.
//
// Knobs: RABOSH_FC_SEED replays a failing run, RABOSH_FC_RUNS scripts (default 100),
// RABOSH_FC_LEN commands per script (default 30).
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Rabosh, RaboshMemoryToolHandler } from '../index.js';
import { makeTempDir, removeDir } from './tmp-dir.js';

// ---------------------------------------------------------------- reference model

const ROOT = '/memories';

function utf8Length(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n += 4;
        i++;
      } else n += 3;
    } else n += 3;
  }
  return n;
}

function containsPercentDotDot(raw: string): boolean {
  for (let i = 0; i + 5 < raw.length; i++) {
    if (
      raw[i] === '%' && raw[i + 1] === '2' && (raw[i + 2] === 'e' || raw[i + 2] === 'E') &&
      raw[i + 3] === '%' && raw[i + 4] === '2' && (raw[i + 5] === 'e' || raw[i + 5] === 'E')
    ) return true;
  }
  return false;
}

function hasUnpairedSurrogate(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xdc00 && c <= 0xdfff) return true;
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = i + 1 < s.length ? s.charCodeAt(i + 1) : 0;
      if (!(d >= 0xdc00 && d <= 0xdfff)) return true;
      i++;
    }
  }
  return false;
}

function modelNormalise(raw: string): string | null {
  if (containsPercentDotDot(raw)) return null;
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if (c === 0x5c || c < 0x20 || c === 0x7f) return null;
  }
  if (raw.slice(0, ROOT.length) !== ROOT) return null;
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
  if (joined !== ROOT && joined.slice(0, ROOT.length + 1) !== ROOT + '/') return null;
  if (hasUnpairedSurrogate(raw)) return null;
  if (utf8Length(joined) > 1024) return null;
  for (const seg of kept) if (utf8Length(seg) > 255) return null;
  return joined;
}

function humanSize(bytes: number): string {
  if (bytes === 0) return '0B';
  const units = ['B', 'K', 'M', 'G'];
  let u = 0;
  let div = 1;
  while (u < 3 && bytes >= div * 1024) {
    u++;
    div *= 1024;
  }
  if (bytes % div === 0) return `${bytes / div}${units[u]}`;
  let tenths = Math.floor((bytes * 10) / div);
  const rest = bytes * 10 - tenths * div;
  if (rest * 2 > div || (rest * 2 === div && tenths % 2 === 1)) tenths++;
  return `${Math.floor(tenths / 10)}.${tenths % 10}${units[u]}`;
}

function numbered(n: number, line: string): string {
  let num = String(n);
  while (num.length < 6) num = ' ' + num;
  return `${num}\t${line}`;
}

function asText(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

function isInt(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v);
}

function clamp(v: number, lo: number, hi: number): number {
  return v < lo ? lo : v > hi ? hi : v;
}

function codeUnitLess(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const d = a.charCodeAt(i) - b.charCodeAt(i);
    if (d !== 0) return d;
  }
  return a.length - b.length;
}

interface ModelOptions {
  maxMemoryBytes: number;
  viewMaxChars: number;
  createOverwrites: boolean;
}

type Answer = { text: string; isError: boolean };
const good = (text: string): Answer => ({ text, isError: false });
const bad = (text: string): Answer => ({ text, isError: true });

class Model {
  readonly memories = new Map<string, string>();
  constructor(readonly options: ModelOptions) {}

  private under(path: string): string[] {
    const prefix = path + '/';
    return [...this.memories.keys()].filter((k) => k.slice(0, prefix.length) === prefix);
  }

  private sizeLimit(path: string): Answer {
    return bad(`Error: File ${path} exceeds the maximum memory file size of ${this.options.maxMemoryBytes} bytes`);
  }

  execute(input: unknown): Answer {
    if (typeof input !== 'object' || input === null) return bad('Error: unknown command undefined');
    const cmd = (input as Record<string, unknown>).command;
    const i = input as Record<string, unknown>;
    switch (cmd) {
      case 'view': return this.view(asText(i.path), i.view_range);
      case 'create': return this.create(asText(i.path), asText(i.file_text));
      case 'str_replace': return this.strReplace(asText(i.path), asText(i.old_str), asText(i.new_str));
      case 'insert': return this.insert(asText(i.path), i.insert_line, asText(i.insert_text));
      case 'delete': return this.delete(asText(i.path));
      case 'rename': return this.rename(asText(i.old_path), asText(i.new_path));
      default: return bad(`Error: unknown command ${String(cmd)}`);
    }
  }

  view(raw: string, range: unknown): Answer {
    const path = modelNormalise(raw);
    const missing = (p: string) => bad(`The path ${p} does not exist. Please provide a valid path.`);
    if (path === null) return missing(raw);
    const content = path === ROOT ? undefined : this.memories.get(path);
    if (content !== undefined) return this.fileView(path, content, range);

    const prefix = path + '/';
    const visible: Array<[string[], number]> = [];
    for (const key of this.under(path)) {
      const rel = key.slice(prefix.length).split('/');
      if (rel.some((s) => s[0] === '.' || s === 'node_modules')) continue;
      visible.push([rel, utf8Length(this.memories.get(key)!)]);
    }
    if (visible.length === 0 && path !== ROOT) return missing(path);
    let total = 0;
    for (const [, size] of visible) total += size;
    let out =
      `Here're the files and directories up to 2 levels deep in ${path}, excluding hidden items and node_modules:` +
      `\n${humanSize(total)}\t${path}`;
    const level = (entries: Array<[string[], number]>, depth: number, base: string) => {
      const names = [...new Set(entries.map(([rel]) => rel[depth]!))].sort(codeUnitLess);
      for (const name of names) {
        const mine = entries.filter(([rel]) => rel[depth] === name);
        const file = mine.find(([rel]) => rel.length === depth + 1);
        if (file) out += `\n${humanSize(file[1])}\t${base}/${name}`;
        const deeper = mine.filter(([rel]) => rel.length > depth + 1);
        if (deeper.length > 0) {
          let sum = 0;
          for (const [, size] of deeper) sum += size;
          out += `\n${humanSize(sum)}\t${base}/${name}/`;
          if (depth === 0) level(deeper, 1, `${base}/${name}`);
        }
      }
    };
    level(visible, 0, path);
    return good(out);
  }

  private fileView(path: string, content: string, range: unknown): Answer {
    const lines = content.split('\n');
    const n = lines.length;
    if (n > 999_999) return bad(`File ${path} exceeds maximum line limit of 999,999 lines.`);
    let first = 0;
    let last = n;
    if (Array.isArray(range) && range.length === 2 && isInt(range[0]) && isInt(range[1])) {
      const [start, end] = range as [number, number];
      first = clamp(Math.max(1, start) - 1, 0, n);
      last = end === -1 ? n : end < -1 ? clamp(n + end, 0, n) : clamp(end, 0, n);
    }
    let out = `Here's the content of ${path} with line numbers:`;
    if (last <= first) return good(out);
    let used = 0;
    let shown = 0;
    for (let idx = first; idx < last; idx++) {
      const line = numbered(idx + 1, lines[idx]!);
      const cost = line.length + (shown > 0 ? 1 : 0);
      if (shown > 0 && used + cost > this.options.viewMaxChars) break;
      used += cost;
      shown++;
      out += '\n' + line;
    }
    if (first + shown < last) {
      const a = first + 1;
      const b = first + shown;
      out += `\n[Truncated: showing lines ${a} to ${b} of ${n}. Use view_range [${b + 1}, -1] to read the rest.]`;
    }
    return good(out);
  }

  create(raw: string, text: string): Answer {
    const path = modelNormalise(raw);
    if (path === null) return bad(`Error: File ${raw} already exists`);
    if (path === ROOT) return bad('Error: File /memories already exists');
    if (utf8Length(text) > this.options.maxMemoryBytes) return this.sizeLimit(path);
    if (this.memories.has(path) && !this.options.createOverwrites) return bad(`Error: File ${path} already exists`);
    this.memories.set(path, text);
    return good(`File created successfully at: ${path}`);
  }

  strReplace(raw: string, oldStr: string, newStr: string): Answer {
    const path = modelNormalise(raw);
    const content = path === null || path === ROOT ? undefined : this.memories.get(path);
    if (content === undefined) return bad(`Error: The path ${path ?? raw} does not exist. Please provide a valid path.`);
    const notFound = `No replacement was performed, old_str \`${oldStr}\` did not appear verbatim in ${path}.`;
    if (oldStr === '') return bad(notFound);
    const at = content.indexOf(oldStr);
    if (at < 0) return bad(notFound);
    if (content.indexOf(oldStr, at + oldStr.length) >= 0) {
      const lines: number[] = [];
      for (let p = content.indexOf(oldStr); p >= 0; p = content.indexOf(oldStr, p + 1)) {
        lines.push(content.slice(0, p).split('\n').length);
      }
      return bad(
        `No replacement was performed. Multiple occurrences of old_str \`${oldStr}\` in lines: ${lines.join(', ')}. Please ensure it is unique`,
      );
    }
    const next = content.slice(0, at) + newStr + content.slice(at + oldStr.length);
    if (utf8Length(next) > this.options.maxMemoryBytes) return this.sizeLimit(path!);
    this.memories.set(path!, next);
    const changed = content.slice(0, at).split('\n').length;
    const nextLines = next.split('\n');
    let out = 'The memory file has been edited. Here is the snippet showing the change (with line numbers):';
    for (let l = Math.max(1, changed - 2); l <= Math.min(nextLines.length, changed + 2); l++) {
      out += '\n' + numbered(l, nextLines[l - 1]!);
    }
    return good(out);
  }

  insert(raw: string, line: unknown, text: string): Answer {
    const path = modelNormalise(raw);
    const content = path === null || path === ROOT ? undefined : this.memories.get(path);
    if (content === undefined) return bad(`Error: The path ${path ?? raw} does not exist`);
    let lines: string[] = [];
    if (content !== '') lines = (content.endsWith('\n') ? content.slice(0, -1) : content).split('\n');
    if (!isInt(line) || line < 0 || line > lines.length) {
      return bad(
        `Error: Invalid \`insert_line\` parameter: ${String(line)}. It should be within the range of lines of the file: [0, ${lines.length}]`,
      );
    }
    const piece = text.endsWith('\n') ? text.slice(0, -1) : text;
    lines.splice(line, 0, piece);
    let next = lines.join('\n');
    if (!next.endsWith('\n')) next += '\n';
    if (utf8Length(next) > this.options.maxMemoryBytes) return this.sizeLimit(path!);
    this.memories.set(path!, next);
    return good(`The file ${path} has been edited.`);
  }

  delete(raw: string): Answer {
    const path = modelNormalise(raw);
    if (path === null) return bad(`Error: The path ${raw} does not exist`);
    if (path === ROOT) return bad('Error: Cannot delete the /memories directory itself');
    const doomed = this.under(path);
    if (this.memories.has(path)) doomed.push(path);
    if (doomed.length === 0) return bad(`Error: The path ${path} does not exist`);
    for (const k of doomed) this.memories.delete(k);
    return good(`Successfully deleted ${path}`);
  }

  rename(rawOld: string, rawNew: string): Answer {
    const from = modelNormalise(rawOld);
    if (from === null) return bad(`Error: The path ${rawOld} does not exist`);
    const to = modelNormalise(rawNew);
    if (to === null) return bad(`Error: The destination ${rawNew} already exists`);
    if (from === ROOT) return bad('Error: Cannot rename the /memories directory itself');
    if (to === ROOT || to === from) return bad(`Error: The destination ${to} already exists`);
    if (to.slice(0, from.length + 1) === from + '/') return bad(`Error: Cannot rename ${from} to ${to}, which is inside it`);
    const moving = this.under(from);
    if (this.memories.has(from)) moving.push(from);
    if (moving.length === 0) return bad(`Error: The path ${from} does not exist`);
    if (this.memories.has(to) || this.under(to).length > 0) return bad(`Error: The destination ${to} already exists`);
    const moved = moving.map((k) => [to + k.slice(from.length), this.memories.get(k)!] as const);
    for (const k of moving) this.memories.delete(k);
    for (const [k, v] of moved) this.memories.set(k, v);
    return good(`Successfully renamed ${from} to ${to}`);
  }
}

// ---------------------------------------------------------------- generators

// A small alphabet, so scripts revisit the same paths: ordinary names most of the time, then hidden
// and node_modules names, astral and BMP characters that sort differently in UTF-8 and UTF-16, and
// names that look special but are not.
const segment = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('a', 'b.md', 'sub') },
  { weight: 2, arbitrary: fc.constantFrom('.hidden', 'node_modules') },
  { weight: 2, arbitrary: fc.constantFrom('\u{1F600}', '\uFF5E', 'é', 'A', 'a.b', 'x y', '%2e', 'C:') },
);
const cleanPath = fc
  .array(segment, { minLength: 1, maxLength: 3 })
  .map((segs) => `/memories/${segs.join('/')}`);
const messyPath = fc.oneof(
  { weight: 6, arbitrary: cleanPath },
  { weight: 2, arbitrary: fc.tuple(cleanPath, fc.constantFrom('/', '//', '/.', '/x/..', '/..')).map(([p, t]) => p + t) },
  { weight: 1, arbitrary: cleanPath.map((p) => p.replace('/memories/', '/memories//./')) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      '/memories', '/memories/', '/memories/.', '/memories//', '/memories/x/..', '/memoriesfoo.md', 'memories/a',
      '', '/memories/a\\b', '/memories/%2E%2e/a', '/memories/..', '/memories/../memories/a', '/memories/a\u0000',
      '/memories/a\u007f', 'C:/memories/a', '/memories/\uD800',
    ),
  },
);
// Long runs make sizes cross 1K, where half-even rounding shows (1280 = 2 × 640 prints 1.2K).
const textPiece = fc.oneof(
  { weight: 14, arbitrary: fc.constantFrom('a', 'b', 'ab', '\n', '\n', '$&', "$'", '$`', '$1', '\r\n', '\u{1F600}', 'é', 'x\ny', ' ') },
  { weight: 1, arbitrary: fc.constantFrom('L'.repeat(256), 'M'.repeat(640)) },
);
const text = fc.oneof(
  { weight: 12, arbitrary: fc.array(textPiece, { maxLength: 12 }).map((p) => p.join('')) },
  // sizes that are exact rounding ties: 1.25K and 2.25K print 1.2K and 2.2K
  { weight: 1, arbitrary: fc.constantFrom('T'.repeat(1280), 'T'.repeat(2304)) },
);
const shortText = fc.array(textPiece, { maxLength: 3 }).map((p) => p.join(''));
const hostileValue = fc.constantFrom<unknown>(undefined, null, 5, 1.5, true, [], {}, ['x'], '1');
const viewRange = fc.oneof(
  fc.tuple(fc.integer({ min: -8, max: 12 }), fc.integer({ min: -8, max: 12 })),
  fc.constantFrom<unknown>(undefined, [1], [1, 2, 3], ['1', '2'], [1.5, 2], 'x', null, [-1e12, 1e12]),
);
const insertLine = fc.oneof(
  { weight: 5, arbitrary: fc.integer({ min: -2, max: 8 }) },
  { weight: 1, arbitrary: fc.constantFrom<unknown>(1.5, '1', null, undefined, -0, 1e21) },
);

// `pick` lets a command refer to a path or a substring already in use, so scripts hit the success
// branches often, not only the refusals.
type Pick = { path: number; from: number; len: number };
const pick = fc.record({ path: fc.nat(), from: fc.nat(), len: fc.integer({ min: 1, max: 6 }) });

type Step =
  | { kind: 'view'; path: string; reuse: Pick | null; range: unknown }
  | { kind: 'create'; path: string; text: string }
  | { kind: 'str_replace'; path: string; reuse: Pick | null; oldStr: string | null; newStr: unknown }
  | { kind: 'insert'; path: string; reuse: Pick | null; line: unknown; text: unknown }
  | { kind: 'delete'; path: string; reuse: Pick | null }
  | { kind: 'rename'; from: string; reuse: Pick | null; to: string }
  | { kind: 'raw'; input: unknown };

const maybePick = fc.option(pick, { freq: 4 });
const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('view' as const), path: messyPath, reuse: maybePick, range: viewRange }) },
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('create' as const), path: messyPath, text }) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('str_replace' as const),
      path: messyPath,
      reuse: maybePick,
      oldStr: fc.option(shortText, { freq: 2 }),
      newStr: fc.oneof(shortText, hostileValue),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('insert' as const),
      path: messyPath,
      reuse: maybePick,
      line: insertLine,
      text: fc.oneof({ weight: 4, arbitrary: shortText }, { weight: 1, arbitrary: hostileValue }),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('delete' as const), path: messyPath, reuse: maybePick }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('rename' as const), from: messyPath, reuse: maybePick, to: messyPath }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('raw' as const),
      input: fc.oneof(
        fc.constantFrom<unknown>(null, 'view', 42, [], {}, { command: 'VIEW', path: '/memories' }, { command: ['view'] }),
        fc.record({
          command: fc.constantFrom<unknown>('view', 'create', 'str_replace', 'insert', 'delete', 'rename', 'nope', null, 7),
          path: fc.oneof(messyPath, hostileValue),
          file_text: fc.oneof(text, hostileValue),
          old_str: fc.oneof(shortText, hostileValue),
          new_str: fc.oneof(shortText, hostileValue),
          insert_line: insertLine,
          insert_text: fc.oneof(shortText, hostileValue),
          old_path: fc.oneof(messyPath, hostileValue),
          new_path: fc.oneof(messyPath, hostileValue),
          view_range: viewRange,
        }, { requiredKeys: ['command'] }),
      ),
    }),
  },
);

// Turns a step into the tool input, resolving `reuse` against the model's current memories.
function toInput(s: Step, model: Model): unknown {
  const keys = [...model.memories.keys()];
  const reusePath = (r: Pick | null, fallback: string) => (r && keys.length > 0 ? keys[r.path % keys.length]! : fallback);
  const parentOf = (p: string) => (p.lastIndexOf('/') > '/memories'.length ? p.slice(0, p.lastIndexOf('/')) : p);
  switch (s.kind) {
    case 'view': {
      const p = reusePath(s.reuse, s.path);
      const path = s.reuse && s.reuse.from % 3 === 0 ? parentOf(p) : p;
      return s.range === undefined ? { command: 'view', path } : { command: 'view', path, view_range: s.range };
    }
    case 'create':
      return { command: 'create', path: s.path, file_text: s.text };
    case 'str_replace': {
      const path = reusePath(s.reuse, s.path);
      let oldStr = s.oldStr;
      if (oldStr === null) {
        const content = model.memories.get(path) ?? '';
        // Cut on code-point boundaries: half an astral character is a lone surrogate, which the
        // contract does not cover (UTF-8 storage cannot hold one; see the report on that choice).
        const lowHalf = (at: number) => at > 0 && at < content.length && /[\uDC00-\uDFFF]/.test(content[at]!);
        let from = s.reuse ? s.reuse.from % (content.length + 1) : 0;
        if (lowHalf(from)) from--;
        let to = Math.min(content.length, from + (s.reuse?.len ?? 2));
        if (lowHalf(to)) to++;
        oldStr = content.slice(from, to);
      }
      return s.newStr === undefined
        ? { command: 'str_replace', path, old_str: oldStr }
        : { command: 'str_replace', path, old_str: oldStr, new_str: s.newStr };
    }
    case 'insert':
      return { command: 'insert', path: reusePath(s.reuse, s.path), insert_line: s.line, insert_text: s.text };
    case 'delete': {
      const p = reusePath(s.reuse, s.path);
      return { command: 'delete', path: s.reuse && s.reuse.from % 2 === 0 ? parentOf(p) : p };
    }
    case 'rename': {
      const p = reusePath(s.reuse, s.from);
      return { command: 'rename', old_path: s.reuse && s.reuse.from % 2 === 0 ? parentOf(p) : p, new_path: s.to };
    }
    case 'raw':
      return s.input;
  }
}

const handlerOptions = fc.record({
  maxMemoryBytes: fc.constantFrom(8, 24, 64, 1 << 20),
  viewMaxChars: fc.constantFrom(12, 40, 100, 16_000),
  createOverwrites: fc.boolean(),
  listingIndex: fc.boolean(),
});

// ---------------------------------------------------------------- the test

const RUNS = Number(process.env.RABOSH_FC_RUNS ?? 100);
const LEN = Number(process.env.RABOSH_FC_LEN ?? 30);
const SEED = process.env.RABOSH_FC_SEED === undefined ? undefined : Number(process.env.RABOSH_FC_SEED);

// After a reopen the handler must hold exactly the model's memories: the same count and bytes, every
// memory's full content, and the same listing of every directory that any memory implies.
async function wholeStoreMatches(handler: RaboshMemoryToolHandler, model: Model) {
  let bytes = 0;
  for (const v of model.memories.values()) bytes += utf8Length(v);
  expect(await handler.usage()).toEqual({ memories: model.memories.size, bytes });
  const dirs = new Set<string>([ROOT]);
  for (const path of model.memories.keys()) {
    expect(await handler.execute({ command: 'view', path })).toEqual(model.execute({ command: 'view', path }));
    for (let cut = path.lastIndexOf('/'); cut > ROOT.length; cut = path.lastIndexOf('/', cut - 1)) dirs.add(path.slice(0, cut));
  }
  for (const path of dirs) {
    expect(await handler.execute({ command: 'view', path: path + '/' })).toEqual(model.execute({ command: 'view', path: path + '/' }));
  }
}

describe('differential: handler vs reference model', () => {
  it(`${RUNS} scripts of up to ${LEN} commands give identical answers, and the store survives a reopen`, async () => {
    await fc.assert(
      fc.asyncProperty(handlerOptions, fc.array(step, { minLength: 1, maxLength: LEN, size: 'max' }), async (options, steps) => {
        const dir = makeTempDir('rabosh-diff');
        const model = new Model(options);
        let handler = await RaboshMemoryToolHandler.open(dir, options);
        try {
          for (const [i, s] of steps.entries()) {
            const input = toInput(s, model);
            const got = await handler.execute(input);
            const want = model.execute(input);
            if (got.text !== want.text || got.isError !== want.isError) {
              expect({ step: i, input, ...got }).toEqual({ step: i, input, ...want });
            }
          }
          await handler.close();
          // Reopened with the listing index flipped and no view cap, so every byte is compared.
          const wide = { ...options, viewMaxChars: 10_000_000, listingIndex: !options.listingIndex };
          handler = await RaboshMemoryToolHandler.open(dir, wide);
          const reread = new Model(wide);
          for (const [k, v] of model.memories) reread.memories.set(k, v);
          await wholeStoreMatches(handler, reread);
        } finally {
          await handler.close();
          removeDir(dir);
        }
      }),
      { numRuns: RUNS, seed: SEED },
    );
  });

  it('the model itself agrees with hand-checked contract examples', () => {
    // Guards the guard: a model bug would otherwise let the same bug through in the handler.
    expect(humanSize(0)).toBe('0B');
    expect(humanSize(1280)).toBe('1.2K');
    expect(humanSize(1331)).toBe('1.3K');
    expect(humanSize(4096)).toBe('4K');
    expect(humanSize(1_572_864)).toBe('1.5M');
    expect(modelNormalise('/memories/p/..')).toBe('/memories');
    expect(modelNormalise('/memoriesish/a.md')).toBeNull();
    expect(modelNormalise('/memories/%2E%2e')).toBeNull();
    expect(modelNormalise('/memories/%2e')).toBe('/memories/%2e');
    expect(utf8Length('é\u{1F600}a')).toBe(7);
    const m = new Model({ maxMemoryBytes: 100, viewMaxChars: 16_000, createOverwrites: false });
    m.create('/memories/a', 'ab ab');
    expect(m.strReplace('/memories/a', 'ab', 'x').text).toBe(
      'No replacement was performed. Multiple occurrences of old_str `ab` in lines: 1, 1. Please ensure it is unique',
    );
    m.create('/memories/d/x', 'q');
    expect(m.view('/memories', undefined).text).toBe(
      "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:" +
        '\n6B\t/memories\n5B\t/memories/a\n1B\t/memories/d/\n1B\t/memories/d/x',
    );
  });

  it('a store shared by two scopes keeps them apart under random scripts', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(fc.boolean(), step), { minLength: 1, maxLength: LEN, size: 'max' }), async (steps) => {
        const dir = makeTempDir('rabosh-diff-scope');
        const db = await Rabosh.open(dir);
        const opts = { maxMemoryBytes: 64, viewMaxChars: 100, createOverwrites: false };
        const handlers = [new RaboshMemoryToolHandler(db, { ...opts, scope: 'one' }), new RaboshMemoryToolHandler(db, { ...opts, scope: 'two' })];
        const models = [new Model(opts), new Model(opts)];
        try {
          for (const [which, s] of steps) {
            const k = which ? 1 : 0;
            const input = toInput(s, models[k]!);
            expect(await handlers[k]!.execute(input)).toEqual(models[k]!.execute(input));
          }
        } finally {
          await db.close();
          removeDir(dir);
        }
      }),
      { numRuns: Math.max(5, Math.floor(RUNS / 5)), seed: SEED },
    );
  });
});
