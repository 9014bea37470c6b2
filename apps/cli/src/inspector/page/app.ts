/**
 * The inspector page: tree on the left, the selected memory in the middle (content or a diff),
 * its history on the right, and a live feed that refreshes all three when the store changes.
 */
import { api, type Memory, type StoreInfo, type Usage, type Version } from './client.js';
import { confirm, redactionGuarantee } from './confirm.js';
import { append, byId, clear, count, h, size, when } from './dom.js';
import { contentView, diffView } from './render.js';
import { TreeView } from './tree.js';

interface State {
  info: StoreInfo | null;
  path: string | null;
  /** null: no memory at the path now (deleted), though it may have versions. */
  memory: Memory | null;
  versions: Version[];
  cursor: string | null;
  /** The version shown; null shows the memory as it is now. */
  version: string | null;
  /** The version the diff compares with; null: the one before it; NOTHING: empty content. */
  base: string | null;
  tab: 'content' | 'diff';
}

const NOTHING = 'nothing';
const state: State = { info: null, path: null, memory: null, versions: [], cursor: null, version: null, base: null, tab: 'content' };
const tree = new TreeView(
  byId('tree'),
  (path) => void select(path),
  (e) => failed(e),
);
/** Bumped by every render of the main view, so a slow answer never paints over a newer one. */
let generation = 0;

const OPERATION_LABEL: Record<Version['operation'], string> = {
  created: 'Created',
  modified: 'Modified',
  renamed: 'Renamed',
  deleted: 'Deleted',
};

function toast(text: string, kind: 'ok' | 'error' = 'ok'): void {
  const el = byId('toast');
  el.textContent = text;
  el.dataset['kind'] = kind;
  el.hidden = false;
  window.clearTimeout(Number(el.dataset['timer'] ?? 0));
  el.dataset['timer'] = String(window.setTimeout(() => (el.hidden = true), 5000));
}

function failed(e: unknown): void {
  toast(e instanceof Error ? e.message : String(e), 'error');
}

async function loadUsage(): Promise<void> {
  showUsage(await api.usage());
}

function showUsage(usage: Usage): void {
  const parts = [count(usage.memories, 'memory', 'memories'), size(usage.bytes)];
  if (usage.history !== undefined) parts.push(`${count(usage.history.versions, 'version', 'versions')} (${size(usage.history.bytes)})`);
  byId('usage').textContent = parts.join(' · ');
}

async function loadMemory(): Promise<void> {
  const path = state.path;
  if (path === null) return;
  const [memory, page] = await Promise.all([api.memory(path), api.versions(path)]);
  if (path !== state.path) return;
  state.memory = memory;
  state.versions = page.data;
  state.cursor = page.nextCursor;
  if (state.version !== null && !state.versions.some((v) => v.id === state.version)) state.version = null;
  if (state.base !== null && state.base !== NOTHING && !state.versions.some((v) => v.id === state.base)) state.base = null;
}

async function select(path: string): Promise<void> {
  state.path = path;
  // The fragment never reaches the server; it keeps the selection across a reload.
  history.replaceState(null, '', `#${encodeURIComponent(path)}`);
  state.version = null;
  state.base = null;
  state.tab = 'content';
  tree.selected = path;
  try {
    await loadMemory();
    await render();
  } catch (e) {
    failed(e);
  }
}

function shownVersion(): Version | undefined {
  return state.version === null ? undefined : state.versions.find((v) => v.id === state.version);
}

/** The version a diff shows: the selected one, else the newest. */
function diffTarget(): Version | undefined {
  return shownVersion() ?? state.versions[0];
}

function diffBase(target: Version): Version | null {
  if (state.base === NOTHING) return null;
  if (state.base !== null) return state.versions.find((v) => v.id === state.base) ?? null;
  return state.versions[state.versions.indexOf(target) + 1] ?? null;
}

async function render(): Promise<void> {
  const mine = ++generation;
  byId('empty').hidden = state.path !== null;
  byId('memory').hidden = state.path === null;
  byId('history').hidden = state.path === null;
  if (state.path === null) return;
  renderHead();
  renderTimeline();
  const tabContent = byId('tab-content');
  const tabDiff = byId<HTMLButtonElement>('tab-diff');
  tabContent.setAttribute('aria-selected', String(state.tab === 'content'));
  tabDiff.setAttribute('aria-selected', String(state.tab === 'diff'));
  tabDiff.disabled = state.versions.length === 0;
  const extra = byId('tab-extra');
  clear(extra);
  const view = byId('view');
  let next: HTMLElement;
  if (state.tab === 'content') {
    const v = shownVersion();
    if (v === undefined) {
      next =
        state.memory === null
          ? h('div', { class: 'note' }, 'No memory at this path now; its history is on the right.')
          : contentView(state.memory.content);
    } else {
      extra.append(h('span', { class: 'muted' }, 'As of version ', h('code', {}, v.id.slice(0, 12)), ' · ', when(v.createdAt)));
      const full = await api.version(v.id);
      next =
        full.redactedAt !== null
          ? h('div', { class: 'note' }, 'This version is redacted: its content is gone.')
          : full.content === null
            ? h('div', { class: 'note' }, 'This version is a deletion: it holds no content.')
            : contentView(full.content);
    }
  } else {
    const target = diffTarget();
    if (target === undefined) {
      next = h('div', { class: 'note' }, 'No versions recorded for this memory.');
    } else {
      const base = diffBase(target);
      extra.append(comparePicker(target, base));
      next = diffView(await api.diff(target.id, base?.id ?? null));
    }
  }
  if (mine !== generation) return;
  clear(view);
  view.append(next);
}

function comparePicker(target: Version, base: Version | null): HTMLElement {
  const select = h('select', { 'aria-label': 'Compare with' }) as HTMLSelectElement;
  select.append(h('option', { value: '' }, '(nothing: the whole content)'));
  for (const v of state.versions) {
    if (v.id === target.id) continue;
    const opt = h(
      'option',
      { value: v.id },
      `${OPERATION_LABEL[v.operation]} ${new Date(v.createdAt).toLocaleString()}`,
    ) as HTMLOptionElement;
    opt.selected = base?.id === v.id;
    select.append(opt);
  }
  if (base === null) select.value = '';
  select.addEventListener('change', () => {
    state.base = select.value === '' ? NOTHING : select.value;
    void render().catch(failed);
  });
  return h('label', { class: 'compare' }, h('span', { class: 'muted' }, 'Compared with'), select);
}

function renderHead(): void {
  byId('memory-path').textContent = state.path ?? '';
  const meta = byId('memory-meta');
  clear(meta);
  const m = state.memory;
  if (m === null) {
    meta.append(h('span', { class: 'badge deleted' }, 'not present'));
    return;
  }
  const newest = state.versions[0];
  meta.append(
    h('span', {}, size(new TextEncoder().encode(m.content).length)),
    h('span', { title: m.contentSha256 }, 'sha256 ', h('code', {}, m.contentSha256.slice(0, 12))),
  );
  if (newest !== undefined) meta.append(h('span', {}, 'last change ', when(newest.createdAt)));
}

function actorText(v: Version): string {
  return v.actor === null ? 'unknown author' : `${v.actor.type}: ${v.actor.id}`;
}

function renderTimeline(): void {
  const list = byId('timeline');
  clear(list);
  if (state.versions.length === 0) {
    list.append(h('li', { class: 'none' }, state.info?.history ? 'No versions recorded yet.' : 'No versions recorded (history is off).'));
  }
  for (const v of state.versions) {
    const selected = v.id === (state.version ?? '');
    const current = state.memory !== null && v.id === state.memory.versionId;
    const item = h(
      'li',
      {
        class: `event ${v.operation}${selected ? ' selected' : ''}${v.redactedAt ? ' redacted' : ''}`,
        'data-version': v.id,
        tabindex: '0',
      },
      h(
        'div',
        { class: 'event-head' },
        h('span', { class: `badge ${v.operation}` }, OPERATION_LABEL[v.operation]),
        current ? h('span', { class: 'badge current' }, 'current') : null,
        when(v.createdAt),
      ),
      h(
        'div',
        { class: 'event-meta' },
        h('span', { class: 'actor' }, actorText(v)),
        h('span', {}, v.redactedAt ? 'redacted' : size(v.sizeBytes)),
      ),
      v.path !== null && v.path !== state.path ? h('div', { class: 'event-path' }, v.path) : null,
      v.redactedAt ? h('div', { class: 'event-path' }, 'Redacted ', when(v.redactedAt)) : null,
    );
    const pick = () => {
      state.version = v.id;
      state.base = null;
      state.tab = 'diff';
      void render().catch(failed);
    };
    item.addEventListener('click', pick);
    item.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' || e.key === ' ') pick();
    });
    if (selected) item.append(actions(v));
    list.append(item);
  }
  byId('older').hidden = state.cursor === null;
}

function actions(v: Version): HTMLElement {
  const revert = h(
    'button',
    { type: 'button', class: 'small', disabled: v.redactedAt !== null || v.operation === 'deleted' },
    'Revert to this',
  );
  const redact = h('button', { type: 'button', class: 'small danger-outline', disabled: v.redactedAt !== null }, 'Redact…');
  const content = h('button', { type: 'button', class: 'small link' }, 'View content');
  revert.addEventListener('click', (e) => {
    e.stopPropagation();
    void doRevert(v);
  });
  redact.addEventListener('click', (e) => {
    e.stopPropagation();
    void doRedact(v);
  });
  content.addEventListener('click', (e) => {
    e.stopPropagation();
    state.tab = 'content';
    void render().catch(failed);
  });
  return h('div', { class: 'event-actions' }, revert, redact, content);
}

async function doRevert(v: Version): Promise<void> {
  const path = state.path;
  if (path === null) return;
  const ok = await confirm({
    title: 'Revert this memory?',
    body: [
      h('p', {}, 'Write the content of the version of ', when(v.createdAt), ' back at ', h('code', {}, path), ' as a new version.'),
      h('p', {}, 'Nothing is lost: the current content stays in the history and can be reverted to in turn.'),
    ],
    ok: 'Revert',
  });
  if (!ok) return;
  try {
    const r = await api.revert(path, v.id);
    toast(r.versionId === null ? `${path} already holds that content` : `Reverted ${path}`);
    state.version = null;
    state.tab = 'content';
    await refresh();
  } catch (e) {
    failed(e);
  }
}

async function doRedact(v: Version): Promise<void> {
  if (state.info === null) return;
  const ok = await confirm({
    title: 'Redact this version?',
    body: redactionGuarantee(state.info),
    ok: 'Redact version',
    danger: true,
    acknowledge: 'I understand that the content of this version is erased for good.',
  });
  if (!ok) return;
  try {
    await api.redact(v.id);
    toast('Version redacted; the store was compacted');
    await refresh();
  } catch (e) {
    failed(e);
  }
}

/**
 * One refresh at a time; changes arriving meanwhile are folded into one more after it. The
 * paths changed, when the events name them (null: some event did not), bound what is re-fetched.
 */
let refreshing: Promise<void> | null = null;
let pending: { paths: string[] | null } | null = null;

function changedPaths(data: string | undefined): string[] | null {
  try {
    const parsed = JSON.parse(data ?? '{}') as { paths?: unknown };
    const paths = parsed.paths;
    return Array.isArray(paths) && paths.every((p) => typeof p === 'string') ? (paths as string[]) : null;
  } catch {
    return null;
  }
}

async function refresh(paths: string[] | null = null): Promise<void> {
  pending = pending === null ? { paths } : { paths: pending.paths === null || paths === null ? null : [...pending.paths, ...paths] };
  if (refreshing !== null) return refreshing;
  refreshing = (async () => {
    try {
      while (pending !== null) {
        const now = pending;
        pending = null;
        // Asked side by side and shown together: one frame for the header and the tree.
        const [, usage] = await Promise.all([tree.changed(now.paths), api.usage()]);
        showUsage(usage);
        const shown = state.path;
        if (shown !== null && (now.paths === null || now.paths.includes(shown))) {
          await loadMemory();
          await render();
        }
      }
    } finally {
      refreshing = null;
    }
  })();
  return refreshing;
}

function live(): void {
  const el = byId('live');
  const text = byId('live-text');
  let opened = false;
  const events = new EventSource('api/events');
  events.addEventListener('open', () => {
    el.dataset['state'] = 'live';
    text.textContent = 'live';
    // After a reconnect the store may have changed while nobody listened.
    if (opened) void refresh().catch(failed);
    opened = true;
  });
  events.addEventListener('error', () => {
    el.dataset['state'] = 'down';
    text.textContent = 'reconnecting';
  });
  events.addEventListener('change', (e) => {
    void refresh(changedPaths((e as MessageEvent<string>).data))
      .then(() => {
        text.textContent = `live · updated ${new Date().toLocaleTimeString()}`;
      })
      .catch(failed);
  });
  events.addEventListener('fault', (e) => {
    const fault = byId('fault');
    fault.textContent = `The store cannot be read right now: ${(JSON.parse((e as MessageEvent<string>).data) as { message: string }).message}`;
    fault.hidden = false;
  });
  events.addEventListener('recovered', () => {
    byId('fault').hidden = true;
  });
}

async function start(): Promise<void> {
  byId('tab-content').addEventListener('click', () => {
    state.tab = 'content';
    void render().catch(failed);
  });
  byId('tab-diff').addEventListener('click', () => {
    state.tab = 'diff';
    void render().catch(failed);
  });
  byId<HTMLInputElement>('filter').addEventListener('input', (e) => {
    tree.filter = (e.target as HTMLInputElement).value;
  });
  byId('older').addEventListener('click', () => {
    const path = state.path;
    const cursor = state.cursor;
    if (path === null || cursor === null) return;
    api
      .versions(path, cursor)
      .then((page) => {
        state.versions = [...state.versions, ...page.data];
        state.cursor = page.nextCursor;
        renderTimeline();
      })
      .catch(failed);
  });
  state.info = await api.info();
  const info = state.info;
  append(
    byId('store'),
    h('span', { class: 'store-name', title: info.name }, info.name),
    h('span', { class: 'badge' }, info.backend === 'directory' ? 'directory' : 'PostgreSQL'),
    h('span', { class: 'badge' }, `scope ${info.scope}`),
    info.history ? null : h('span', { class: 'badge warn', title: 'Reverts made here record no version' }, 'history off'),
  );
  document.title = `${info.name} · rabosh-memory inspector`;
  await Promise.all([loadUsage(), tree.start()]);
  const remembered = decodeURIComponent(location.hash.slice(1));
  if (remembered.startsWith('/memories/')) {
    tree.reveal(remembered);
    await select(remembered);
  }
  live();
}

start().catch(failed);
