// `rabosh-memory ui` on a PostgreSQL store: the same API, the redaction wording for the server,
// and the live feed, which there has no commit number to watch (stats().seq is 0), so it must
// notice another process's write by other means. Needs RABOSH_PG_URL (scripts/with-postgres.mjs).
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Rabosh, RaboshMemoryToolHandler } from '../index.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openBrowser, raw, startUi, stopUi, writeFromAnotherProcess, type Ui } from './inspector-harness.js';
import { freshPgUrl } from './pg-url.js';

let url = '';
let ui: Ui;

beforeAll(async () => {
  url = freshPgUrl('inspector');
  const db = await Rabosh.open(url, { history: true });
  const h = new RaboshMemoryToolHandler(db, { actor: { type: 'session', id: 'pg-agent' } });
  await h.execute({ command: 'create', path: '/memories/a.md', file_text: 'one\n' });
  await h.execute({ command: 'str_replace', path: '/memories/a.md', old_str: 'one', new_str: 'two' });
  await db.close();
  ui = await startUi(url);
});

afterAll(async () => {
  if (ui) await stopUi(ui);
});

const get = async (rest: string) => {
  const r = await raw(ui.port, `/${ui.token}/${rest}`);
  expect(r.status, `${rest}: ${r.body}`).toBe(200);
  return JSON.parse(r.body);
};

/** Resolves with the first `event: <name>` of the page's feed (bounded). */
function nextEvent(name: string, whileListening: () => void): Promise<string> {
  return new Promise((done, fail) => {
    const req = request(
      { host: '127.0.0.1', port: ui.port, path: `/${ui.token}/api/events`, headers: { Host: `127.0.0.1:${ui.port}` } },
      (res) => {
        let text = '';
        const timer = setTimeout(() => {
          req.destroy();
          fail(new Error(`no ${name} event in 60 s; got ${JSON.stringify(text)}`));
        }, 60_000);
        res.setEncoding('utf8');
        res.on('data', (d: string) => {
          text += d;
          const m = new RegExp(`event: ${name}\\ndata: (.*)\\n\\n`).exec(text);
          if (m) {
            clearTimeout(timer);
            req.destroy();
            done(m[1]!);
          }
        });
        // Let the feed take its first look before the other process writes.
        setTimeout(whileListening, 2_000);
      },
    );
    req.on('error', () => {});
    req.end();
  });
}

describe('rabosh-memory ui on PostgreSQL', () => {
  it('names the store by its schema only and serves the tree a directory at a time, versions and a diff', async () => {
    const info = await get('api/info');
    expect(info.backend).toBe('postgresql');
    expect(info.name).toMatch(/^the PostgreSQL store \(schema inspector_[0-9a-f]+\)$/);
    const password = new URL(url).password;
    if (password) expect(JSON.stringify(info) + ui.stderr()).not.toContain(password);
    const root = await get('api/children?path=/memories');
    expect(root.entries.map((e: [string]) => e[0])).toEqual(['a.md']);
    const versions = (await get('api/versions?path=/memories/a.md')).data;
    expect(versions.map((v: { operation: string }) => v.operation)).toEqual(['modified', 'created']);
    const diff = await get(`api/diff?to=${versions[0].id}&from=${versions[1].id}`);
    expect(diff.hunks[0].lines).toEqual(['-one', '+two']);
  });

  it('says in the redact dialog what redaction guarantees on the server, and redacts', async () => {
    const work = mkdtempSync(join(tmpdir(), 'rabosh-inspector-pg-'));
    const problems: string[] = [];
    const { context, page } = await openBrowser(work, problems);
    try {
      page.setDefaultTimeout(30_000);
      await page.goto(ui.url);
      await page.locator('.tree button.row[data-path="/memories/a.md"]').click();
      const oldest = page.locator('#timeline li.event').nth(1);
      await oldest.click();
      await oldest.getByRole('button', { name: 'Redact…' }).click();
      const dialog = page.getByRole('dialog');
      await expect.poll(() => dialog.textContent(), { timeout: 30_000 }).toContain('until VACUUM frees its space');
      const text = (await dialog.textContent()) ?? '';
      expect(text).toContain('write-ahead log, replicas and backups');
      expect(text).not.toContain('leave every file of the store directory');
      await dialog.getByRole('checkbox').check();
      await dialog.getByRole('button', { name: 'Redact version' }).click();
      await expect.poll(() => oldest.getAttribute('class'), { timeout: 30_000 }).toContain('redacted');
      expect(problems).toEqual([]);
    } finally {
      await context.close();
      rmSync(work, { recursive: true, force: true });
    }
    const versions = (await get('api/versions?path=/memories/a.md')).data;
    expect(versions[1].redactedAt).not.toBeNull();
    expect((await get(`api/version?id=${versions[1].id}`)).content).toBeNull();
  });

  it('tells the page when another process writes, with no commit number to watch', async () => {
    const event = nextEvent('change', () => writeFromAnotherProcess(url, '/memories/b.md', 'from elsewhere\n'));
    await event;
    const root = await get('api/children?path=/memories');
    expect(root.entries.map((e: [string]) => e[0])).toEqual(['a.md', 'b.md']);
  });
});
