/**
 * The sidebar: the scope as a tree the user opens a directory at a time. Only opened directories
 * are fetched (their names and sizes, a page at a time, from the server's listing data) and only
 * they are in the DOM; a change re-fetches and redraws only the opened directories it touched.
 * The filter asks the server for matching paths, a page at a time.
 */
import { api, type ChildRow, type Children } from './client.js';
import { clear, count, h, size } from './dom.js';

const ROOT = '/memories';
/** Names shown per directory at first, and added by each "show more". */
const PAGE = 200;
/** The most names one directory shows; past it the filter finds the rest. */
const MAX_SHOWN = 5_000;
/** A filter waits this long after the last keystroke before it asks the server. */
const FILTER_DELAY_MS = 150;

interface DirState {
  /** How many names the page asks for (grows with "show more"). */
  limit: number;
  data: Children | null;
  /** The `<ul role="group">` holding its names; replaced in place when they change. */
  group: HTMLElement;
  /** Each name's rows as last drawn: an unchanged name keeps its rows, a resized one is patched. */
  rows: Map<string, Drawn>;
}

/** A name's rows: the memory at it and the directory below it, either or both. */
interface Drawn {
  /** The entry they show. */
  key: string;
  file: HTMLElement | null;
  dir: HTMLElement | null;
}

const baseName = (path: string) => path.slice(path.lastIndexOf('/') + 1);
const under = (path: string, dir: string) => path === dir || path.startsWith(`${dir}/`);

/**
 * Makes `parent`'s children exactly `wanted`, moving as few as it can: a redraw where one name
 * changed touches one row, so the browser restyles and lays out that row, not the whole tree.
 */
function keepOnly(parent: HTMLElement, wanted: HTMLElement[]): void {
  const keep = new Set(wanted);
  for (const c of [...parent.children]) if (!keep.has(c as HTMLElement)) c.remove();
  let at = parent.firstElementChild;
  for (const el of wanted) {
    if (el === at) at = at.nextElementSibling;
    else parent.insertBefore(el, at);
  }
}

/** Shows a new size on a row drawn before (the `.size` of its button, and the title given). */
function resize(item: HTMLElement, bytes: number, title?: string): void {
  const row = item.querySelector<HTMLElement>(':scope > button.row')!;
  row.querySelector('.size')!.textContent = size(bytes);
  if (title !== undefined) row.title = title;
}

const dirTitle = (path: string, memories: number) => `${path} — ${count(memories, 'memory', 'memories')}`;

export class TreeView {
  readonly #open = new Set<string>([ROOT]);
  readonly #dirs = new Map<string, DirState>();
  readonly #treeEl = h('ul', { role: 'tree' });
  /** The root's row, kept across redraws (its size changes with every write). */
  #rootItem: HTMLElement | null = null;
  readonly #resultsEl = h('div', { class: 'results' });
  #selected: string | null = null;
  #query = '';
  #queryTimer = 0;
  #querySeq = 0;

  constructor(
    private readonly root: HTMLElement,
    private readonly onSelect: (path: string) => void,
    private readonly onError: (e: unknown) => void,
  ) {}

  /** Loads and draws the root directory. */
  async start(): Promise<void> {
    clear(this.root);
    this.root.append(this.#treeEl);
    await this.#load(ROOT);
    performance.mark('inspector:tree-ready');
  }

  set selected(path: string | null) {
    const old = this.#selected;
    this.#selected = path;
    for (const p of [old, path]) {
      if (p === null) continue;
      const rows = [this.#treeEl, this.#resultsEl].flatMap((el) => [
        ...el.querySelectorAll<HTMLElement>(`button.row.file[data-path="${CSS.escape(p)}"]`),
      ]);
      for (const row of rows) {
        if (p === path) row.setAttribute('aria-current', 'true');
        else row.removeAttribute('aria-current');
      }
    }
  }

  /** Opens every directory above `path`, so its row shows once they load. */
  reveal(path: string): void {
    const segs = path.split('/').slice(2, -1);
    let dir = ROOT;
    for (const s of segs) {
      dir = `${dir}/${s}`;
      this.#open.add(dir);
    }
    // Rows drawn closed must be drawn again, open: outermost first.
    const loaded = [...this.#dirs.keys()].sort((a, b) => a.length - b.length);
    for (const d of loaded) {
      this.#dirs.get(d)!.rows.clear();
      this.#redraw(d);
    }
  }

  set filter(text: string) {
    window.clearTimeout(this.#queryTimer);
    const q = text.trim();
    if (q === this.#query) return;
    this.#query = q;
    if (q === '') {
      this.#querySeq++;
      clear(this.root);
      this.root.append(this.#treeEl);
      return;
    }
    this.#queryTimer = window.setTimeout(() => void this.#search(q, null).catch(this.onError), FILTER_DELAY_MS);
  }

  /**
   * The store changed. With the changed paths known, re-fetch the opened directories above
   * them; without, ask the server which opened directories' names moved and re-fetch those.
   */
  async changed(paths: string[] | null): Promise<void> {
    const loaded = [...this.#dirs.entries()].filter(([, s]) => s.data !== null);
    let stale: string[];
    if (paths !== null) {
      stale = loaded.map(([p]) => p).filter((dir) => paths.some((changed) => under(changed, dir)));
    } else {
      const { digests } = await api.digests(loaded.map(([path, s]) => ({ path, limit: s.limit })));
      stale = loaded.filter(([p, s]) => digests[p] !== s.data?.digest).map(([p]) => p);
    }
    await Promise.all(stale.map((dir) => this.#load(dir)));
    if (this.#query !== '') await this.#search(this.#query, null);
  }

  async #load(dir: string): Promise<void> {
    const state = this.#state(dir);
    const data = await api.children(dir, state.limit);
    // Closed meanwhile: keep nothing of it.
    if (this.#dirs.get(dir) !== state) return;
    if (state.data !== null && state.data.digest === data.digest) return;
    state.data = data;
    this.#redraw(dir);
  }

  #state(dir: string): DirState {
    let state = this.#dirs.get(dir);
    if (state === undefined) {
      state = {
        limit: PAGE,
        data: null,
        group: h('ul', { role: 'group' }, h('li', { class: 'tree-note' }, 'Loading…')),
        rows: new Map(),
      };
      this.#dirs.set(dir, state);
    }
    return state;
  }

  /** Redraws `dir`'s own names (and, for the root, the root's row); opened subdirectories keep their groups. */
  #redraw(dir: string): void {
    const state = this.#dirs.get(dir);
    if (state === undefined || state.data === null) return;
    if (dir === ROOT) {
      const { total, memories, bytes } = state.data;
      if (total === 0) {
        this.#rootItem = null;
        this.#treeEl.replaceChildren(h('li', { class: 'tree-empty' }, 'This scope holds no memories.'));
        return;
      }
      if (this.#rootItem !== null && this.#rootItem.parentElement === this.#treeEl && state.rows.size > 0) {
        resize(this.#rootItem, bytes, dirTitle(ROOT, memories));
      } else {
        this.#rootItem = this.#dirItem(ROOT, 'memories', memories, bytes, 0);
        this.#treeEl.replaceChildren(this.#rootItem);
      }
    }
    const depth = dir.split('/').length - 2;
    keepOnly(state.group, this.#rows(dir, state, depth + 1));
    performance.mark('inspector:dir-shown');
  }

  #rows(dir: string, state: DirState, depth: number): HTMLElement[] {
    const data = state.data!;
    const rows: HTMLElement[] = [];
    const drawn = new Map<string, Drawn>();
    for (const entry of data.entries as ChildRow[]) {
      const [name, memoryBytes, below, bytesBelow] = entry;
      const key = JSON.stringify(entry);
      const path = `${dir}/${name}`;
      let d = state.rows.get(name);
      // Only the sizes moved: patch the rows in place rather than draw new ones.
      if (d !== undefined && d.key !== key && (memoryBytes !== null) === (d.file !== null) && below > 0 === (d.dir !== null)) {
        if (d.file !== null) resize(d.file, memoryBytes!);
        if (d.dir !== null) resize(d.dir, bytesBelow, dirTitle(path, below));
        d.key = key;
      }
      if (d === undefined || d.key !== key) {
        d = {
          key,
          file: memoryBytes === null ? null : this.#file(path, memoryBytes, depth),
          dir: below > 0 ? this.#dirItem(path, name, below, bytesBelow, depth) : null,
        };
      }
      drawn.set(name, d);
      if (d.file !== null) rows.push(d.file);
      if (d.dir !== null) rows.push(d.dir);
    }
    state.rows = drawn;
    const more = data.total - data.entries.length;
    if (more > 0) rows.push(this.#more(dir, more, depth));
    return rows;
  }

  #more(dir: string, more: number, depth: number): HTMLElement {
    const state = this.#dirs.get(dir)!;
    if (state.limit >= MAX_SHOWN) {
      return h('li', { class: 'tree-note' }, `${count(more, 'more name', 'more names')}: use the filter to find them`);
    }
    const button = h('button', { type: 'button', class: 'row more', 'data-more': dir }, `Show more (${more.toLocaleString()} not shown)`);
    button.style.paddingLeft = `${8 + depth * 14}px`;
    button.addEventListener('click', () => {
      state.limit = Math.min(state.limit + PAGE, MAX_SHOWN);
      void this.#load(dir).catch(this.onError);
    });
    return h('li', { role: 'none' }, button);
  }

  #dirItem(path: string, name: string, memories: number, bytes: number, depth: number): HTMLElement {
    const open = this.#open.has(path);
    const toggle = h(
      'button',
      {
        type: 'button',
        class: 'row dir',
        'data-path': path,
        'aria-expanded': String(open),
        title: dirTitle(path, memories),
      },
      h('span', { class: 'twisty' }, open ? '▾' : '▸'),
      h('span', { class: 'label' }, `${name}/`),
      h('span', { class: 'size' }, size(bytes)),
    );
    toggle.style.paddingLeft = `${8 + depth * 14}px`;
    const item = h('li', { role: 'treeitem', 'aria-expanded': String(open) }, toggle);
    toggle.addEventListener('click', () => this.#toggle(path, item, toggle));
    if (open) this.#attach(path, item);
    return item;
  }

  /** Puts `dir`'s group under its row, loading it the first time. */
  #attach(dir: string, item: HTMLElement): void {
    const fresh = !this.#dirs.has(dir);
    const state = this.#state(dir);
    item.append(state.group);
    if (fresh) void this.#load(dir).catch(this.onError);
  }

  #toggle(dir: string, item: HTMLElement, toggle: HTMLElement): void {
    const open = !this.#open.has(dir);
    toggle.setAttribute('aria-expanded', String(open));
    item.setAttribute('aria-expanded', String(open));
    toggle.querySelector('.twisty')!.textContent = open ? '▾' : '▸';
    if (open) {
      this.#open.add(dir);
      this.#attach(dir, item);
      return;
    }
    this.#open.delete(dir);
    // A closed directory keeps nothing: reopened, it is fetched again as it is then.
    for (const [p, s] of this.#dirs) {
      if (under(p, dir)) {
        s.group.remove();
        this.#dirs.delete(p);
      }
    }
  }

  #file(path: string, bytes: number, depth: number): HTMLElement {
    const name = baseName(path);
    const hidden = name.startsWith('.') || name === 'node_modules';
    const row = h(
      'button',
      {
        type: 'button',
        class: `row file${hidden ? ' hidden-file' : ''}`,
        'data-path': path,
        'aria-current': path === this.#selected ? 'true' : undefined,
        title: hidden ? `${path} (hidden: a directory view leaves it out)` : path,
      },
      h('span', { class: 'twisty' }, ''),
      h('span', { class: 'label' }, depth < 0 ? path.slice(ROOT.length + 1) : name),
      h('span', { class: 'size' }, size(bytes)),
    );
    row.style.paddingLeft = `${8 + Math.max(depth, 0) * 14}px`;
    row.addEventListener('click', () => this.onSelect(path));
    return h('li', { role: 'treeitem' }, row);
  }

  /** One page of the server's matches; `after` null starts over. */
  async #search(q: string, after: string | null): Promise<void> {
    const seq = ++this.#querySeq;
    const page = await api.search(q, after);
    if (seq !== this.#querySeq || q !== this.#query) return;
    const list = after === null ? h('ul', { role: 'tree' }) : this.#resultsEl.querySelector('ul')!;
    this.#resultsEl.querySelector('.more-results')?.remove();
    if (after === null) {
      clear(this.#resultsEl);
      this.#resultsEl.append(list);
      clear(this.root);
      this.root.append(this.#resultsEl);
    }
    for (const m of page.memories) list.append(this.#file(m.path, m.bytes, -1));
    if (after === null && page.memories.length === 0) {
      this.#resultsEl.append(h('p', { class: 'tree-empty' }, 'No path matches the filter.'));
    }
    if (page.next !== null) {
      const next = page.next;
      const more = h('button', { type: 'button', class: 'row more more-results' }, 'More matches');
      more.addEventListener('click', () => void this.#search(q, next).catch(this.onError));
      this.#resultsEl.append(more);
    }
    performance.mark('inspector:filter-shown');
  }
}
