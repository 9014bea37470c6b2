/** The main pane's two views of a memory: its content with line numbers, and a diff of two versions. */
import type { Diff } from './client.js';
import { h } from './dom.js';

/** Content as numbered lines (text nodes only). */
export function contentView(text: string): HTMLElement {
  if (text === '') return h('div', { class: 'note' }, 'This memory is empty.');
  const lines = text.split('\n');
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  const table = h('table', { class: 'code' });
  const body = h('tbody');
  lines.forEach((line, i) => {
    body.append(h('tr', {}, h('td', { class: 'ln' }, String(i + 1)), h('td', { class: 'tx' }, line)));
  });
  table.append(body);
  return table;
}

/** A unified diff: hunk headers, two line-number gutters, added and removed lines marked. */
export function diffView(d: Diff): HTMLElement {
  if (d.to.redactedAt !== null) return h('div', { class: 'note' }, 'This version is redacted: its content is gone.');
  if (d.from !== null && d.from.redactedAt !== null)
    return h('div', { class: 'note' }, 'The version compared with is redacted: its content is gone.');
  if (d.identical) return h('div', { class: 'note' }, 'No change in content between these versions.');
  if (d.hunks === null)
    return h('div', { class: 'note' }, 'These versions are too far apart to diff quickly; compare their contents instead.');
  const body = h('tbody');
  let added = 0;
  let removed = 0;
  for (const hunk of d.hunks) {
    body.append(
      h(
        'tr',
        { class: 'hunk' },
        h('td', { class: 'ln' }, '…'),
        h('td', { class: 'ln' }, '…'),
        h('td', { class: 'tx' }, `@@ -${hunk.oldStart},${hunk.oldLines} +${hunk.newStart},${hunk.newLines} @@`),
      ),
    );
    let oldLine = hunk.oldStart;
    let newLine = hunk.newStart;
    for (const line of hunk.lines) {
      const mark = line[0];
      const text = line.slice(1);
      if (mark === '\\') {
        body.append(h('tr', { class: 'eof' }, h('td', { class: 'ln' }), h('td', { class: 'ln' }), h('td', { class: 'tx' }, text.trim())));
      } else if (mark === '+') {
        added++;
        body.append(
          h('tr', { class: 'add' }, h('td', { class: 'ln' }), h('td', { class: 'ln' }, String(newLine++)), h('td', { class: 'tx' }, text)),
        );
      } else if (mark === '-') {
        removed++;
        body.append(
          h('tr', { class: 'del' }, h('td', { class: 'ln' }, String(oldLine++)), h('td', { class: 'ln' }), h('td', { class: 'tx' }, text)),
        );
      } else {
        body.append(
          h(
            'tr',
            {},
            h('td', { class: 'ln' }, String(oldLine++)),
            h('td', { class: 'ln' }, String(newLine++)),
            h('td', { class: 'tx' }, text),
          ),
        );
      }
    }
  }
  return h(
    'div',
    { class: 'diff' },
    h(
      'div',
      { class: 'diff-stat' },
      h('span', { class: 'plus' }, `+${added}`),
      ' ',
      h('span', { class: 'minus' }, `−${removed}`),
      ' lines',
    ),
    h('table', { class: 'code' }, body),
  );
}
