// The cost of a first look against the store's size, from the scale runs' results
// (bench/results/scale-<size>.json, written by `npm run bench -- --scale 1m`): a Markdown table
// and an SVG chart (log–log, one panel a row), both plain text built here, so
// `npm run docs:performance` reproduces them with no dependency.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The chart's rows: how each is read from a results file, per memory where the issue asks it. */
export const PANELS = [
  { title: 'open + first file view', unit: 'ms', value: (m) => m.open_view_ms },
  { title: 'open + first listing (100 files)', unit: 'ms', value: (m) => m.open_list_ms },
  { title: 'RSS after open + first listing', unit: 'MiB', value: (m) => m.rss_list_mib },
  { title: 'import per memory', unit: 'µs', value: (m, size) => m.import_s && (m.import_s * 1e6) / size },
  { title: 'disk per memory', unit: 'B', value: (m, size) => m.disk_mib && (m.disk_mib * 2 ** 20) / size },
];

/** The sides charted: ours, and the stores a user would pick instead (SQLite+ shares SQLite's store). */
const SIDES = [
  { name: 'ours', pick: (b) => b.ours, colour: '#1f5fbf', dash: '' },
  { name: 'SQLite', pick: (b) => b.id === 'sqlite', colour: '#d9480f', dash: '7 4' },
  { name: 'LMDB', pick: (b) => b.id === 'lmdb', colour: '#2b8a3e', dash: '2 3' },
];

function sizeName(n) {
  return n % 1_000_000 === 0 ? `${n / 1_000_000}M` : `${n / 1_000}k`;
}

/** Every scale run under `dir`/bench/results, smallest store first: size, source line, medians per side. */
export function scaleRuns(dir) {
  const results = join(dir, 'bench', 'results');
  if (!existsSync(results)) return [];
  return readdirSync(results)
    .filter((f) => /^scale-\d+[km]\.json$/.test(f))
    .map((f) => {
      const r = JSON.parse(readFileSync(join(results, f), 'utf8'));
      const sides = {};
      for (const side of SIDES) {
        const b = r.backends.find(side.pick);
        if (!b) continue;
        const medians = {};
        for (const row of r.rows) if (row.cells[b.id]) medians[row.metric] = row.cells[b.id].median;
        sides[side.name] = medians;
      }
      return { file: f, size: r.size, date: r.date.slice(0, 10), commit: r.machine.commit, load: r.load, runs: r.runs, sides };
    })
    .sort((a, b) => a.size - b.size);
}

function num(x) {
  if (x === undefined || !Number.isFinite(x)) return '—';
  const a = Math.abs(x);
  if (a >= 1000) return Math.round(x).toLocaleString('en-US');
  if (a >= 100) return x.toFixed(0);
  if (a >= 10) return x.toFixed(1);
  return x.toPrecision(2);
}

/** The chart's figures as a Markdown table: one line per row and side, one column per size. */
export function scaleTable(runs) {
  const head = ['', 'side', ...runs.map((r) => sizeName(r.size))];
  const lines = [`| ${head.join(' | ')} |`, `|---|---|${runs.map(() => '---:').join('|')}|`];
  for (const p of PANELS) {
    for (const side of SIDES) {
      const cells = runs.map((r) => (r.sides[side.name] ? num(p.value(r.sides[side.name], r.size)) : '—'));
      lines.push(`| ${side === SIDES[0] ? `${p.title} (${p.unit})` : ''} | ${side.name} | ${cells.join(' | ')} |`);
    }
  }
  return lines.join('\n');
}

/** Where each size's figures come from: its file, day, commit and the machine's load. */
export function scaleSources(runs) {
  return runs
    .map(
      (r) => `- ${sizeName(r.size)}: [${r.file}](../bench/results/${r.file}), ${r.date}, commit ${r.commit}, ${r.runs} run(s), ${r.load}`,
    )
    .join('\n');
}

const W = 300;
const H = 210;
const PAD = { left: 46, right: 12, top: 30, bottom: 34 };
const f1 = (x) => x.toFixed(1);

function tick(v) {
  if (v >= 1e6) return `${v / 1e6}M`;
  if (v >= 1e3) return `${v / 1e3}k`;
  return String(v);
}

function xmlText(s) {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;');
}

function panel(p, runs, x0, y0) {
  const sizes = runs.map((r) => r.size);
  const lx = sizes.map(Math.log10);
  const [xa, xb] = [Math.min(...lx), Math.max(...lx)];
  const values = runs.flatMap((r) => SIDES.map((s) => r.sides[s.name] && p.value(r.sides[s.name], r.size))).filter((v) => v > 0);
  const ya = Math.floor(Math.log10(Math.min(...values)));
  const yb = Math.max(ya + 1, Math.ceil(Math.log10(Math.max(...values))));
  const iw = W - PAD.left - PAD.right;
  const ih = H - PAD.top - PAD.bottom;
  const px = (n) => x0 + PAD.left + (xb === xa ? iw / 2 : ((Math.log10(n) - xa) / (xb - xa)) * iw);
  const py = (v) => y0 + PAD.top + ih - ((Math.log10(v) - ya) / (yb - ya)) * ih;
  const out = [`<text x="${f1(x0 + PAD.left)}" y="${f1(y0 + 18)}" class="t">${xmlText(`${p.title} (${p.unit})`)}</text>`];
  for (let e = ya; e <= yb; e++) {
    const y = f1(py(10 ** e));
    out.push(`<line x1="${f1(x0 + PAD.left)}" y1="${y}" x2="${f1(x0 + W - PAD.right)}" y2="${y}" class="g"/>`);
    out.push(`<text x="${f1(x0 + PAD.left - 4)}" y="${y}" class="y">${tick(10 ** e)}</text>`);
  }
  for (const n of sizes) out.push(`<text x="${f1(px(n))}" y="${f1(y0 + H - PAD.bottom + 16)}" class="x">${sizeName(n)}</text>`);
  for (const side of SIDES) {
    const pts = runs
      .map((r) => [r.size, r.sides[side.name] && p.value(r.sides[side.name], r.size)])
      .filter(([, v]) => v > 0)
      .map(([n, v]) => [f1(px(n)), f1(py(v))]);
    if (pts.length === 0) continue;
    const dash = side.dash ? ` stroke-dasharray="${side.dash}"` : '';
    out.push(`<polyline points="${pts.map((q) => q.join(',')).join(' ')}" fill="none" stroke="${side.colour}" stroke-width="2"${dash}/>`);
    for (const [x, y] of pts) out.push(`<circle cx="${x}" cy="${y}" r="3" fill="${side.colour}"/>`);
  }
  return out;
}

/** The chart: one log–log panel per row, store size across, the sides as lines; a legend last. */
export function scaleSvg(runs) {
  const cols = 3;
  const rows = Math.ceil((PANELS.length + 1) / cols);
  const width = cols * W;
  const height = rows * H;
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="11">`,
    '<style>.t{font-weight:bold}.g{stroke:#ddd}.y{text-anchor:end;dominant-baseline:middle}.x{text-anchor:middle}</style>',
    `<rect width="${width}" height="${height}" fill="#fff"/>`,
  ];
  PANELS.forEach((p, i) => {
    parts.push(...panel(p, runs, (i % cols) * W, Math.floor(i / cols) * H));
  });
  const lx = (PANELS.length % cols) * W + PAD.left;
  const ly = Math.floor(PANELS.length / cols) * H + PAD.top;
  parts.push(`<text x="${lx}" y="${ly}" class="t">memories in the store → (log scales)</text>`);
  SIDES.forEach((side, i) => {
    const y = ly + 24 + i * 20;
    const dash = side.dash ? ` stroke-dasharray="${side.dash}"` : '';
    parts.push(`<line x1="${lx}" y1="${y}" x2="${lx + 30}" y2="${y}" stroke="${side.colour}" stroke-width="2"${dash}/>`);
    parts.push(`<text x="${lx + 38}" y="${y}" dominant-baseline="middle">${side.name}</text>`);
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}
