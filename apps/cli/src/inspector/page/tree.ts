/** The sidebar: every memory of the scope as a tree of directories, each with its total size. */
import type { TreeEntry } from './client.js';
import { clear, count, h, size } from './dom.js';

interface Dir {
  name: string;
  path: string;
  dirs: Map<string, Dir>;
  files: TreeEntry[];
  bytes: number;
  memories: number;
}

function build(entries: TreeEntry[]): Dir {
  const root: Dir = { name: 'memories', path: '/memories', dirs: new Map(), files: [], bytes: 0, memories: 0 };
  for (const e of entries) {
    const parts = e.path.split('/').slice(2, -1);
    let dir = root;
    dir.bytes += e.bytes;
    dir.memories++;
    for (const part of parts) {
      let next = dir.dirs.get(part);
      if (next === undefined) {
        next = { name: part, path: `${dir.path}/${part}`, dirs: new Map(), files: [], bytes: 0, memories: 0 };
        dir.dirs.set(part, next);
      }
      dir = next;
      dir.bytes += e.bytes;
      dir.memories++;
    }
    dir.files.push(e);
  }
  return root;
}

const baseName = (path: string) => path.slice(path.lastIndexOf('/') + 1);

export class TreeView {
  /** Directories the user folded (everything starts open). */
  readonly #folded = new Set<string>();
  #entries: TreeEntry[] = [];
  #selected: string | null = null;
  #filter = '';

  constructor(
    private readonly root: HTMLElement,
    private readonly onSelect: (path: string) => void,
  ) {}

  set entries(entries: TreeEntry[]) {
    this.#entries = entries;
    this.render();
  }

  set selected(path: string | null) {
    this.#selected = path;
    this.render();
  }

  set filter(text: string) {
    this.#filter = text.trim().toLowerCase();
    this.render();
  }

  render(): void {
    const shown = this.#filter === '' ? this.#entries : this.#entries.filter((e) => e.path.toLowerCase().includes(this.#filter));
    clear(this.root);
    if (this.#entries.length === 0) {
      this.root.append(h('p', { class: 'tree-empty' }, 'This scope holds no memories.'));
      return;
    }
    if (shown.length === 0) {
      this.root.append(h('p', { class: 'tree-empty' }, 'No path matches the filter.'));
      return;
    }
    this.root.append(h('ul', { role: 'tree' }, this.#dir(build(shown), 0)));
  }

  #dir(dir: Dir, depth: number): HTMLElement {
    // A filter shows every match, folded or not.
    const open = this.#filter !== '' || !this.#folded.has(dir.path);
    const toggle = h(
      'button',
      {
        type: 'button',
        class: 'row dir',
        'data-path': dir.path,
        'aria-expanded': String(open),
        title: `${dir.path} — ${count(dir.memories, 'memory', 'memories')}`,
      },
      h('span', { class: 'twisty' }, open ? '▾' : '▸'),
      h('span', { class: 'label' }, `${dir.name}/`),
      h('span', { class: 'size' }, size(dir.bytes)),
    );
    toggle.style.paddingLeft = `${8 + depth * 14}px`;
    toggle.addEventListener('click', () => {
      if (this.#folded.has(dir.path)) this.#folded.delete(dir.path);
      else this.#folded.add(dir.path);
      this.render();
    });
    const item = h('li', { role: 'treeitem', 'aria-expanded': String(open) }, toggle);
    if (open) {
      const children = h('ul', { role: 'group' });
      for (const sub of [...dir.dirs.values()].sort((a, b) => (a.name < b.name ? -1 : 1))) children.append(this.#dir(sub, depth + 1));
      for (const f of dir.files) children.append(this.#file(f, depth + 1));
      item.append(children);
    }
    return item;
  }

  #file(f: TreeEntry, depth: number): HTMLElement {
    const name = baseName(f.path);
    const row = h(
      'button',
      {
        type: 'button',
        class: `row file${name.startsWith('.') ? ' hidden-file' : ''}`,
        'data-path': f.path,
        'aria-current': f.path === this.#selected ? 'true' : undefined,
        title: name.startsWith('.') ? `${f.path} (hidden: a directory view leaves it out)` : f.path,
      },
      h('span', { class: 'twisty' }, ''),
      h('span', { class: 'label' }, name),
      h('span', { class: 'size' }, size(f.bytes)),
    );
    row.style.paddingLeft = `${8 + depth * 14}px`;
    row.addEventListener('click', () => this.onSelect(f.path));
    return h('li', { role: 'treeitem' }, row);
  }
}
