// The inspector in a real browser: Debian's chromium driven by playwright-core opens the page
// `rabosh-memory ui` (a real process) prints, navigates the tree, views a memory and a diff
// between versions, reverts, redacts (through the confirmation), sees another process's write
// appear, and shows a memory holding markup as inert text. The screenshots in docs/guide/img/ come from
// this run (RABOSH_SCREENSHOTS=1 writes them).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Rabosh, RaboshMemoryToolHandler } from '../index.js';
import { openBrowser, runInAnotherProcess, startUiWith, stopUi, writeFromAnotherProcess, type Ui } from './inspector-harness.js';

const work = mkdtempSync(join(tmpdir(), 'rabosh-inspector-'));
const store = join(work, 'agent-memory');
const docs = resolve(import.meta.dirname, '..', 'docs', 'guide', 'img');
const screenshots = process.env['RABOSH_SCREENSHOTS'] === '1';
/** Generous: the machine is shared with other builds. */
const WAIT = 30_000;
/** expect.poll with the generous wait (its default is one second). */
const poll = <T>(read: () => T | Promise<T>) => expect.poll(read, { timeout: WAIT, interval: 100 });

const DECISIONS = `# Decisions

- Store memories in rabosh, not in plain files.
- One commit per command; durable before the call returns.
- Share one directory between the agent processes.
`;
const DECISIONS_NOW = DECISIONS.replace('not in plain files', 'not in a JSON file').replace(
  '- Share one directory between the agent processes.\n',
  '- Share one directory between the agent processes (no lost update).\n- History on: every change is a version.\n',
);
const QUESTIONS = '- Retention: 90 days?\n- Export format for backups\n';
const HOSTILE = '<script>window.__pwned = 1</script><img src="x" onerror="window.__pwned = 2">\n<b>bold?</b>';

let ui: Ui;
let context: BrowserContext;
let page: Page;
const problems: string[] = [];

async function seed(): Promise<void> {
  const db = await Rabosh.open(store, { history: true });
  const agent = new RaboshMemoryToolHandler(db, { actor: { type: 'session', id: 'agent-7f3a' } });
  const user = new RaboshMemoryToolHandler(db, { actor: { type: 'user', id: 'maria' } });
  const run = async (h: RaboshMemoryToolHandler, input: Record<string, unknown>) => {
    const r = await h.execute(input);
    if (r.isError) throw new Error(r.text);
  };
  await run(agent, { command: 'create', path: '/memories/projects/rabosh/decisions.md', file_text: DECISIONS });
  await run(agent, {
    command: 'str_replace',
    path: '/memories/projects/rabosh/decisions.md',
    old_str: '- Share one directory between the agent processes.\n',
    new_str: '- Share one directory between the agent processes (no lost update).\n- History on: every change is a version.\n',
  });
  await run(user, {
    command: 'str_replace',
    path: '/memories/projects/rabosh/decisions.md',
    old_str: 'not in plain files',
    new_str: 'not in a JSON file',
  });
  await run(agent, { command: 'create', path: '/memories/projects/rabosh/open-questions.md', file_text: QUESTIONS });
  await run(agent, { command: 'create', path: '/memories/user/preferences.md', file_text: 'Prefers short answers.\nWorks in UTC.\n' });
  await run(agent, { command: 'create', path: '/memories/notes/2026-11-30.md', file_text: 'Met with the storage team.\n' });
  await run(agent, { command: 'create', path: '/memories/notes/hostile.md', file_text: HOSTILE });
  await run(agent, { command: 'create', path: '/memories/.index.md', file_text: 'hidden index\n' });
  await db.close();
}

async function versionsOf(
  path: string,
): Promise<{ id: string; operation: string; actor: { type: string; id: string } | null; redactedAt: string | null }[]> {
  const r = await fetch(`${ui.url}api/versions?path=${encodeURIComponent(path)}`);
  return ((await r.json()) as { data: never[] }).data;
}

const row = (path: string) => page.locator(`.tree button.row[data-path="${path}"]`);
const timeline = () => page.locator('#timeline li.event');

beforeAll(async () => {
  await seed();
  ui = await startUiWith({ cwd: work }, 'agent-memory');
  // Any script error or CSP violation on the page is a failure (checked at the end).
  ({ context, page } = await openBrowser(work, problems));
  page.setDefaultTimeout(WAIT);
  await page.goto(ui.url);
  await page.locator('#live[data-state="live"]').waitFor();
}, 300_000);

afterAll(async () => {
  await context?.close();
  if (ui) await stopUi(ui);
  rmSync(work, { recursive: true, force: true });
});

describe('rabosh-memory ui in chromium', () => {
  it('shows the tree with sizes, and a memory with its content and history', async () => {
    await poll(() => page.locator('#usage').textContent()).toContain('6 memories');
    // Directories start closed: each is fetched when opened.
    expect(await row('/memories/projects/rabosh').count()).toBe(0);
    await row('/memories/projects').click();
    await row('/memories/projects/rabosh').click();
    // A memory's size is its UTF-8 bytes; a directory's, the sum of what is below it.
    const questions = Buffer.byteLength(QUESTIONS);
    const decisions = Buffer.byteLength(DECISIONS_NOW);
    await poll(() => row('/memories/projects/rabosh/open-questions.md').locator('.size').textContent()).toBe(`${questions} B`);
    await poll(() => row('/memories/projects/rabosh/decisions.md').locator('.size').textContent()).toBe(`${decisions} B`);
    await poll(() => row('/memories/projects/rabosh').locator('.size').textContent()).toBe(`${questions + decisions} B`);
    await poll(() => row('/memories/.index.md').getAttribute('class')).toContain('hidden-file');

    // The filter keeps the matching memories (and their directories) only.
    await page.locator('#filter').fill('pref');
    await poll(() => page.locator('.tree button.row.file').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-path')))).toEqual([
      '/memories/user/preferences.md',
    ]);
    await page.locator('#filter').fill('');
    await row('/memories/notes').click();
    await row('/memories/notes/hostile.md').waitFor();

    // Folding a directory hides its memories; unfolding shows them again.
    await row('/memories/notes').click();
    await poll(() => row('/memories/notes/2026-11-30.md').count()).toBe(0);
    await row('/memories/notes').click();
    await row('/memories/notes/2026-11-30.md').waitFor();

    await row('/memories/projects/rabosh/decisions.md').click();
    await poll(() => page.locator('#memory-path').textContent()).toBe('/memories/projects/rabosh/decisions.md');
    await poll(() => page.locator('#view').textContent()).toContain('not in a JSON file');
    await poll(() => timeline().count()).toBe(3);
    await poll(() => timeline().nth(0).textContent()).toContain('user: maria');
    await poll(() => timeline().nth(2).textContent()).toContain('session: agent-7f3a');
    await poll(() => timeline().nth(2).textContent()).toContain('Created');
    if (screenshots) await page.screenshot({ path: join(docs, 'inspector-tree.png') });
  });

  it('shows the diff between a version and the one before it, and between any two', async () => {
    await timeline().nth(1).click();
    await poll(() => page.locator('#tab-diff').getAttribute('aria-selected')).toBe('true');
    const added = page.locator('#view tr.add .tx');
    const removed = page.locator('#view tr.del .tx');
    await poll(() => added.allTextContents()).toEqual([
      '- Share one directory between the agent processes (no lost update).',
      '- History on: every change is a version.',
    ]);
    await poll(() => removed.allTextContents()).toEqual(['- Share one directory between the agent processes.']);
    if (screenshots) await page.screenshot({ path: join(docs, 'inspector-diff.png') });

    // Newest against the first: both edits at once.
    await timeline().nth(0).click();
    const versions = await versionsOf('/memories/projects/rabosh/decisions.md');
    await page.locator('#tab-extra select').selectOption(versions[2]!.id);
    await poll(() => removed.allTextContents()).toEqual([
      '- Store memories in rabosh, not in plain files.',
      '- Share one directory between the agent processes.',
    ]);
    await poll(() => added.count()).toBe(3);
  });

  it('reverts to an old version after a confirmation, recorded as the inspector', async () => {
    const path = '/memories/projects/rabosh/decisions.md';
    await timeline().nth(2).click();
    await timeline().nth(2).getByRole('button', { name: 'Revert to this' }).click();
    const dialog = page.getByRole('dialog');
    await poll(() => dialog.textContent()).toContain('Revert this memory?');
    // Cancel writes nothing.
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await poll(() => dialog.isVisible()).toBe(false);
    expect(await versionsOf(path)).toHaveLength(3);

    await timeline().nth(2).getByRole('button', { name: 'Revert to this' }).click();
    await dialog.getByRole('button', { name: 'Revert' }).click();
    await poll(() => timeline().count()).toBe(4);
    await poll(() => page.locator('#view').textContent()).toContain('not in plain files');
    await poll(() => page.locator('#toast').textContent()).toContain(`Reverted ${path}`);
    const newest = (await versionsOf(path))[0]!;
    expect(newest.operation).toBe('modified');
    expect(newest.actor).toEqual({ type: 'user', id: 'inspector' });
    const db = await Rabosh.open(store);
    const h = new RaboshMemoryToolHandler(db);
    try {
      expect((await h.get(path))?.content).toBe(DECISIONS);
    } finally {
      await db.close();
    }
  });

  it('redacts a version only after the confirmation that says what redaction guarantees', async () => {
    const path = '/memories/projects/rabosh/decisions.md';
    // The second version (the agent's edit) is no longer the live content after the revert.
    const target = (await versionsOf(path))[2]!;
    await page.locator(`#timeline li.event[data-version="${target.id}"]`).click();
    await page.locator(`#timeline li.event[data-version="${target.id}"]`).getByRole('button', { name: 'Redact…' }).click();
    const dialog = page.getByRole('dialog');
    await poll(() => dialog.textContent()).toContain('the bytes leave every file of the store directory');
    await poll(() => dialog.textContent()).toContain('change the live memory');
    await poll(() => dialog.textContent()).toContain('checkpoints, backups, exports');
    const ok = dialog.getByRole('button', { name: 'Redact version' });
    expect(await ok.isDisabled()).toBe(true);
    await dialog.getByRole('checkbox').check();
    expect(await ok.isDisabled()).toBe(false);
    if (screenshots) await page.screenshot({ path: join(docs, 'inspector-redact.png') });
    await ok.click();
    await poll(() => page.locator(`#timeline li.event[data-version="${target.id}"]`).getAttribute('class')).toContain('redacted');
    const after = (await versionsOf(path)).find((v) => v.id === target.id)!;
    expect(after.redactedAt).not.toBeNull();
    const db = await Rabosh.open(store, { history: true });
    try {
      const v = await new RaboshMemoryToolHandler(db).version(target.id);
      expect(v?.content).toBeNull();
      expect(v?.path).toBeNull();
    } finally {
      await db.close();
    }
  });

  it('refreshes when another process writes to the store', async () => {
    writeFromAnotherProcess(store, '/memories/notes/from-elsewhere.md', 'written by another process\n');
    await row('/memories/notes/from-elsewhere.md').waitFor({ timeout: WAIT });
    await poll(() => page.locator('#usage').textContent()).toContain('7 memories');
    await row('/memories/notes/from-elsewhere.md').click();
    await poll(() => page.locator('#view').textContent()).toContain('written by another process');
    await poll(() => timeline().nth(0).textContent()).toContain('session: other-process');

    // Deleted elsewhere while shown: the page says so and keeps the history, from which a
    // revert brings it back.
    runInAnotherProcess(store, { command: 'delete', path: '/memories/notes/from-elsewhere.md' });
    await poll(() => page.locator('#view').textContent()).toContain('No memory at this path now');
    await poll(() => row('/memories/notes/from-elsewhere.md').count()).toBe(0);
    await poll(() => timeline().nth(0).textContent()).toContain('Deleted');
    await timeline().nth(1).click();
    await timeline().nth(1).getByRole('button', { name: 'Revert to this' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Revert' }).click();
    await poll(() => page.locator('#view').textContent()).toContain('written by another process');
    await row('/memories/notes/from-elsewhere.md').waitFor();
  });

  it('shows a memory holding markup as text, and runs none of it', async () => {
    await row('/memories/notes/hostile.md').click();
    await poll(() => page.locator('#view').textContent()).toContain('<script>window.__pwned = 1</script>');
    await poll(() => page.locator('#view').textContent()).toContain('<b>bold?</b>');
    expect(await page.locator('#view script, #view img, #view b').count()).toBe(0);
    // The diff view too.
    await timeline().nth(0).click();
    await poll(() => page.locator('#view tr.add .tx').first().textContent()).toContain('<img src="x"');
    expect(await page.locator('#view script, #view img, #view b').count()).toBe(0);
    expect(await page.evaluate(() => (globalThis as { __pwned?: number }).__pwned)).toBeUndefined();
  });

  it('keeps the selection across a reload, and logged no error and no CSP violation', async () => {
    await row('/memories/user').click();
    await row('/memories/user/preferences.md').click();
    await poll(() => page.locator('#view').textContent()).toContain('Works in UTC.');
    await page.reload();
    await poll(() => page.locator('#memory-path').textContent()).toBe('/memories/user/preferences.md');
    await poll(() => page.locator('#view').textContent()).toContain('Works in UTC.');
    // The directories above the selection open again, so its row shows, marked.
    await poll(() => row('/memories/user/preferences.md').getAttribute('aria-current')).toBe('true');
    expect(await page.title()).toBe('agent-memory · rabosh-memory inspector');
    expect(problems).toEqual([]);
  });
});
