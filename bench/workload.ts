// Deterministic memories and store layouts. Every body is lines of 64 bytes ("L0001 <name> xxx…\n"),
// so each line carries a unique token that str_replace can target and a body of B bytes has B/64
// lines.

export type Entry = readonly [path: string, content: string];

const LINE = 64;

export function pad(n: number, width: number): string {
  return String(n).padStart(width, '0');
}

export function body(name: string, bytes: number): string {
  if (bytes % LINE !== 0) throw new Error(`body size ${bytes} is not a multiple of ${LINE}`);
  let out = '';
  for (let k = 1; k <= bytes / LINE; k++) {
    const head = `L${pad(k, 4)} ${name} `;
    out += `${head.padEnd(LINE - 1, 'x').slice(0, LINE - 1)}\n`;
  }
  return out;
}

export function noteName(i: number): string {
  return `note${pad(i, 5)}.md`;
}

/** `count` memories directly under /memories: note00000.md … */
export function* flat(count: number, bytes: number): Generator<Entry> {
  for (let i = 0; i < count; i++) yield [`/memories/${noteName(i)}`, body(noteName(i), bytes)];
}

/** `count` memories spread over 500 leaf directories three levels deep (10 × 10 × 5). */
export function* nested(count: number, bytes: number): Generator<Entry> {
  for (let i = 0; i < count; i++) {
    const leaf = i % 500;
    const dir = `d${Math.floor(leaf / 50)}/e${Math.floor(leaf / 5) % 10}/f${leaf % 5}`;
    yield [`/memories/${dir}/${noteName(i)}`, body(noteName(i), bytes)];
  }
}

/** `trees` subtrees /memories/t{j} of `perTree` memories each, in 10 groups. */
export function* subtrees(trees: number, perTree: number, bytes: number): Generator<Entry> {
  for (let j = 0; j < trees; j++) {
    for (let i = 0; i < perTree; i++) {
      yield [`/memories/t${j}/g${i % 10}/${noteName(i)}`, body(noteName(i), bytes)];
    }
  }
}

export interface Dataset {
  id: string;
  label: string;
  layout: 'flat' | 'nested';
  count: number;
  bytes: number;
}

export function entries(ds: Dataset): Generator<Entry> {
  return ds.layout === 'flat' ? flat(ds.count, ds.bytes) : nested(ds.count, ds.bytes);
}
