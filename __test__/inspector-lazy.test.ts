// The inspector is bounded by what it shows, not by the store: in chromium, with thousands of
// memories in a directory nobody opens, the page's first answers stay small, a closed directory
// is never fetched, a long directory comes a page at a time, the filter is answered by the
// server, and a write elsewhere re-fetches only the opened directories it changed.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { RaboshMemoryToolHandler } from '../index.js';
import { openBrowser, raw, startUi, stopUi, writeFromAnotherProcess, type Ui } from './inspector-harness.js';

const work = mkdtempSync(join(tmpdir(), 'rabosh-inspector-lazy-'));
const store = join(work, 'store');
const WAIT = 30_000;
const poll = <T>(read: () => T | Promise<T>) => expect.poll(read, { timeout: WAIT, interval: 100 });
/** Memories in /memories/big, which the page never opens. */
const BIG = 3_000;
/** Memories in /memories/flat: more than one page of names. */
const FLAT = 450;

let ui: Ui;
let context: BrowserContext;
let page: Page;
const problems: string[] = [];
/**
 * Every API request the page made, recorded when its response arrives (before the page can show
 * what it holds, so a test that saw the page change can count it), and the size of its answer
 * once read (`read`).
 */
let requests: { url: URL; bytes: number; read: Promise<void> }[] = [];

const row = (path: string) => page.locator(`.tree button.row[data-path="${path}"]`);
const fileRows = () => page.locator('.tree button.row.file');
const asked = (name: string) => requests.filter((r) => r.url.pathname.endsWith(`/api/${name}`));
const childrenAsked = () => asked('children').map((r) => r.url.searchParams.get('path'));

beforeAll(async () => {
  const h = await RaboshMemoryToolHandler.open(store);
  const line = 'x'.repeat(100);
  await h.importMemories([
    ...Array.from({ length: BIG }, (_, i) => ({ path: `/memories/big/m${String(i).padStart(5, '0')}.md`, content: line })),
    ...Array.from({ length: FLAT }, (_, i) => ({ path: `/memories/flat/f${String(i).padStart(4, '0')}.md`, content: 'f' })),
    { path: '/memories/notes/a.md', content: 'a' },
    { path: '/memories/user/prefs.md', content: 'short answers' },
    { path: '/memories/top.md', content: 'top' },
  ]);
  await h.close();
  ui = await startUi(store);
  ({ context, page } = await openBrowser(work, problems));
  page.setDefaultTimeout(WAIT);
  page.on('response', (res) => {
    const url = new URL(res.url());
    if (!url.pathname.includes('/api/') || url.pathname.endsWith('/api/events')) return;
    const entry = { url, bytes: -1, read: Promise.resolve() };
    entry.read = res.body().then(
      (b) => {
        entry.bytes = b.length;
      },
      () => {},
    );
    requests.push(entry);
  });
}, 300_000);

afterAll(async () => {
  await context?.close();
  if (ui) await stopUi(ui);
  rmSync(work, { recursive: true, force: true });
});

beforeEach(() => {
  requests = [];
});

describe('the inspector, bounded by what it shows', () => {
  it('answers a directory with its names and sizes, whatever lies below them', async () => {
    const r = await raw(ui.port, `/${ui.token}/api/children?path=%2Fmemories`);
    expect(r.status).toBe(200);
    const body = JSON.parse(r.body) as { entries: unknown[]; memories: number; total: number };
    expect(body.memories).toBe(BIG + FLAT + 3);
    expect(body.entries).toEqual([
      ['big', null, BIG, BIG * 100],
      ['flat', null, FLAT, FLAT],
      ['notes', null, 1, 1],
      ['top.md', 3, 0, 0],
      ['user', null, 1, 13],
    ]);
    // Five names: a few hundred bytes, though the directory below holds thousands of memories.
    expect(r.body.length).toBeLessThan(1_000);
  });

  it('loads only the root at first: small answers, and a closed directory is never fetched', async () => {
    await page.goto(ui.url);
    await row('/memories/big').waitFor();
    await page.locator('#live[data-state="live"]').waitFor();
    await poll(() => page.locator('#usage').textContent()).toContain(`${(BIG + FLAT + 3).toLocaleString()} memories`);
    expect(childrenAsked()).toEqual(['/memories']);
    await Promise.all(requests.map((r) => r.read));
    const bytes = requests.reduce((n, r) => n + r.bytes, 0);
    expect(bytes, JSON.stringify(requests.map((r) => [r.url.pathname, r.bytes]))).toBeLessThan(4_000);
    expect(await page.locator('#tree *').count()).toBeLessThan(100);
    expect(await row('/memories/big').getAttribute('aria-expanded')).toBe('false');
  });

  it('opens a long directory a page of names at a time', async () => {
    await row('/memories/flat').click();
    await poll(() => fileRows().count()).toBe(1 + 200);
    expect(childrenAsked()).toEqual(['/memories/flat']);
    await page.getByRole('button', { name: /Show more/ }).click();
    await poll(() => fileRows().count()).toBe(1 + 400);
    await page.getByRole('button', { name: /Show more/ }).click();
    await poll(() => fileRows().count()).toBe(1 + FLAT);
    expect(await page.getByRole('button', { name: /Show more/ }).count()).toBe(0);
    // Closed again, its names leave the page.
    await row('/memories/flat').click();
    await poll(() => fileRows().count()).toBe(1);
  });

  it('asks the server to filter, and shows its matches without opening their directories', async () => {
    await page.locator('#filter').fill('BIG/M0012');
    await poll(() => fileRows().evaluateAll((rows) => rows.map((r) => r.getAttribute('data-path')))).toEqual(
      Array.from({ length: 10 }, (_, i) => `/memories/big/m0012${i}.md`),
    );
    expect(asked('search').length).toBeGreaterThan(0);
    expect(childrenAsked()).not.toContain('/memories/big');
    await page.locator('#filter').fill('');
    await row('/memories/big').waitFor();
  });

  it('reads a filter that is a path as one: the memories whose path starts with it', async () => {
    await page.locator('#filter').fill('/memories/big/m0012');
    await poll(() => fileRows().evaluateAll((rows) => rows.map((r) => r.getAttribute('data-path')))).toEqual(
      Array.from({ length: 10 }, (_, i) => `/memories/big/m0012${i}.md`),
    );
    await page.locator('#filter').fill('');
    await row('/memories/big').waitFor();
  });

  it('re-fetches only the opened directories a write elsewhere changed', async () => {
    await row('/memories/notes').click();
    await row('/memories/user').click();
    await row('/memories/notes/a.md').waitFor();
    await row('/memories/user/prefs.md').waitFor();
    // Rows whose names are still there stay the same elements: only sizes move, in place.
    const kept = ['/memories', '/memories/notes', '/memories/user', '/memories/notes/a.md', '/memories/user/prefs.md'];
    type Marked = { kept?: boolean };
    const keptNow = () => Promise.all(kept.map((p) => row(p).evaluate((el) => (el as unknown as Marked).kept === true)));
    for (const p of kept) {
      await row(p).evaluate((el) => {
        (el as unknown as Marked).kept = true;
      });
    }
    requests = [];
    writeFromAnotherProcess(store, '/memories/notes/b.md', 'from elsewhere\n');
    await row('/memories/notes/b.md').waitFor();
    await poll(() => row('/memories/notes').getAttribute('title')).toBe('/memories/notes — 2 memories');
    await poll(() => row('/memories').getAttribute('title')).toBe(`/memories — ${(BIG + FLAT + 4).toLocaleString()} memories`);
    expect(await keptNow()).toEqual(kept.map(() => true));
    await poll(() => childrenAsked().sort()).toEqual(['/memories', '/memories/notes']);
    // The change feed names the path, so no directory's fingerprint needs asking.
    expect(asked('digests')).toEqual([]);
    expect(childrenAsked()).not.toContain('/memories/user');
    expect(problems).toEqual([]);
  });
});
