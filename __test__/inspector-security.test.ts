// The inspector's security rules, each over plain HTTP with the headers a hostile page (or a
// DNS-rebinding one) would send, against `rabosh-memory ui` running as a real process.
import { mkdtempSync, rmSync } from 'node:fs';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createConnection } from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Rabosh, RaboshMemoryToolHandler } from '../index.js';
import { cli } from './cli-harness.js';
import { GRACEFUL_SIGNALS, raw, startUi, stopUi, type Ui } from './inspector-harness.js';

const work = mkdtempSync(join(tmpdir(), 'rabosh-inspector-sec-'));
const store = join(work, 'store');
let ui: Ui;
let versionId = '';
let stopped = false;

beforeAll(async () => {
  const db = await Rabosh.open(store, { history: true });
  const h = new RaboshMemoryToolHandler(db);
  await h.execute({ command: 'create', path: '/memories/a.md', file_text: 'first\n' });
  await h.execute({ command: 'str_replace', path: '/memories/a.md', old_str: 'first', new_str: 'second' });
  versionId = (await h.versions({ path: '/memories/a.md' })).data[1]!.id;
  await db.close();
  ui = await startUi(store);
});

afterAll(async () => {
  if (!stopped) await ui?.stop();
  rmSync(work, { recursive: true, force: true });
});

const api = (rest: string) => `/${ui.token}/${rest}`;
const revertBody = () => JSON.stringify({ path: '/memories/a.md', versionId });

describe('rabosh-memory ui: who may ask', () => {
  it('answers the page, its script and the API with the token', async () => {
    for (const path of [api(''), api('app.js'), api('style.css'), api('api/children')]) {
      expect((await raw(ui.port, path)).status, path).toBe(200);
    }
  });

  it('refuses every request without the token: 401', async () => {
    for (const path of ['/', '/app.js', '/api/children', `/api/version?id=${versionId}`]) {
      const r = await raw(ui.port, path);
      expect(r.status, path).toBe(401);
      expect(r.body).not.toContain('second');
    }
  });

  it('refuses a wrong token, of any length: 401', async () => {
    const same = ui.token.slice(0, -1) + (ui.token.endsWith('A') ? 'B' : 'A');
    for (const token of [same, ui.token.slice(0, 20), `${ui.token}x`, 'x'.repeat(43)]) {
      for (const rest of ['', 'app.js', 'api/children']) {
        expect((await raw(ui.port, `/${token}/${rest}`)).status, `${token}/${rest}`).toBe(401);
      }
    }
    const post = await raw(ui.port, `/${same}/api/revert`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: revertBody(),
    });
    expect(post.status).toBe(401);
  });

  it('refuses a foreign Origin: 403, reads and writes alike', async () => {
    for (const origin of ['http://evil.example', 'null', `http://127.0.0.1:${ui.port + 1}`, `https://127.0.0.1:${ui.port}`]) {
      expect((await raw(ui.port, api('api/children'), { headers: { Origin: origin } })).status, origin).toBe(403);
      const post = await raw(ui.port, api('api/revert'), {
        method: 'POST',
        headers: { Origin: origin, 'Content-Type': 'application/json' },
        body: revertBody(),
      });
      expect(post.status, origin).toBe(403);
    }
    // The page's own origin is fine.
    expect((await raw(ui.port, api('api/children'), { headers: { Origin: `http://127.0.0.1:${ui.port}` } })).status).toBe(200);
  });

  it('refuses a rebinding Host: 403, even with the token', async () => {
    for (const host of [
      `evil.example:${ui.port}`,
      `127.0.0.1:${ui.port + 1}`,
      '127.0.0.1',
      `localhost.evil.example:${ui.port}`,
      `[::1]:${ui.port}`,
    ]) {
      const r = await raw(ui.port, api('api/children'), { headers: { Host: host } });
      expect(r.status, host).toBe(403);
      expect(r.body).not.toContain('/memories/a.md');
    }
    expect((await raw(ui.port, api('api/children'), { headers: { Host: `localhost:${ui.port}` } })).status).toBe(200);
  });

  it('takes writes only as POST with a JSON body: GET is 405, a form or text body 415', async () => {
    for (const write of ['api/revert', 'api/redact']) {
      const get = await raw(ui.port, api(`${write}?path=/memories/a.md&versionId=${versionId}`));
      expect(get.status, write).toBe(405);
      expect(get.headers['allow']).toBe('POST');
      for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
        const post = await raw(ui.port, api(write), { method: 'POST', headers: { 'Content-Type': type }, body: revertBody() });
        expect(post.status, `${write} ${type}`).toBe(415);
      }
    }
    // None of those wrote: the memory still holds the second version.
    const memory = await raw(ui.port, api('api/memory?path=/memories/a.md'));
    expect(JSON.parse(memory.body).content).toBe('second\n');
  });

  it('sends no CORS header, answers no preflight, and sets the strict headers on every answer', async () => {
    const preflight = await raw(ui.port, api('api/revert'), {
      method: 'OPTIONS',
      headers: { Origin: 'http://evil.example', 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'content-type' },
    });
    expect(preflight.status).toBe(403);
    for (const path of [api(''), api('app.js'), api('api/children'), '/', api('api/nothing')]) {
      const r = await raw(ui.port, path);
      const names = Object.keys(r.headers);
      expect(
        names.filter((n) => n.startsWith('access-control-')),
        path,
      ).toEqual([]);
      expect(r.headers['content-security-policy'], path).toMatch(
        /default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'/,
      );
      expect(r.headers['content-security-policy'], path).toContain("frame-ancestors 'none'");
      expect(r.headers['x-content-type-options'], path).toBe('nosniff');
      expect(r.headers['referrer-policy'], path).toBe('no-referrer');
    }
  });

  it('listens on 127.0.0.1 only', async () => {
    const others = Object.values(networkInterfaces())
      .flat()
      .filter((a) => a !== undefined && !a.internal && a.family === 'IPv4')
      .map((a) => a!.address);
    for (const address of others) {
      const refused = await new Promise<boolean>((done) => {
        const s = createConnection({ host: address, port: ui.port });
        s.setTimeout(10_000, () => {
          s.destroy();
          done(true);
        });
        s.once('connect', () => {
          s.destroy();
          done(false);
        });
        s.once('error', () => done(true));
      });
      expect(refused, address).toBe(true);
    }
  });

  it('a token is 256 random bits, new on every start', async () => {
    expect(Buffer.from(ui.token, 'base64url').length).toBe(32);
    const second = await startUi(store);
    try {
      expect(second.token).not.toBe(ui.token);
      expect((await raw(second.port, `/${ui.token}/api/children`)).status).toBe(401);
    } finally {
      await stopUi(second);
    }
  });
});

describe('rabosh-memory ui: hostile input to the API', () => {
  const RUNS = Number(process.env['RABOSH_FC_RUNS'] ?? 150);
  const text = fc.oneof(
    fc.string({ unit: 'binary', maxLength: 40 }),
    fc.constantFrom('', '/memories', '/memories/a.md', '/memories/../etc', '0'.repeat(32), 'f'.repeat(32), '%00', '\u0000'),
  );

  it('answers every query with JSON and a 200, 400 or 404, never a crash', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('memory', 'versions', 'version', 'diff', 'usage', 'children', 'digests', 'search', 'info', 'nothing'),
        fc.dictionary(fc.constantFrom('path', 'id', 'to', 'from', 'cursor', 'after', 'limit', 'q', 'd'), text),
        async (name, query) => {
          const r = await raw(ui.port, api(`api/${name}?${new URLSearchParams(query)}`));
          expect([200, 400, 404], `${name} ${JSON.stringify(query)}: ${r.body}`).toContain(r.status);
          expect(r.headers['content-type']).toBe('application/json; charset=utf-8');
          JSON.parse(r.body);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('answers every write body with JSON and a 200, 400 or 413, never a crash', async () => {
    const body = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 60 }),
      fc.json(),
      fc.record({ path: text, versionId: fc.oneof(text, fc.constant(versionId)) }).map((o) => JSON.stringify(o)),
      fc.constant('x'.repeat(70 * 1024)),
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('revert', 'redact'), body, async (name, payload) => {
        // Redacting the seeded version would change what the other tests see.
        fc.pre(!(name === 'redact' && payload.includes(versionId)));
        const r = await raw(ui.port, api(`api/${name}`), {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: payload,
        });
        expect([200, 400, 413], `${name} ${payload.slice(0, 200)}: ${r.body}`).toContain(r.status);
        JSON.parse(r.body);
      }),
      { numRuns: RUNS },
    );
    // Still serving, and the seeded memory is one of its own versions' contents.
    const memory = JSON.parse((await raw(ui.port, api('api/memory?path=/memories/a.md'))).body);
    expect(['first\n', 'second\n']).toContain(memory.content);
  });
});

describe('rabosh-memory ui: the command line', () => {
  it('refuses a directory without a store and a bad port, creating nothing', () => {
    const missing = cli('ui', join(work, 'missing'));
    expect(missing.status).toBe(1);
    expect(missing.stderr).toContain('no store at');
    const port = cli('ui', store, '--port', '70000');
    expect(port.status).toBe(2);
    expect(port.stderr).toContain('invalid --port');
  });

  it('prints the URL as JSON with --json and serves the scope it is given', async () => {
    const scoped = await startUi(store, '--json', '--scope', 'other');
    try {
      const info = JSON.parse((await raw(scoped.port, `/${scoped.token}/api/info`)).body);
      expect(info).toMatchObject({ scope: 'other', backend: 'directory', history: true, actor: { type: 'user', id: 'inspector' } });
      expect(JSON.parse((await raw(scoped.port, `/${scoped.token}/api/children`)).body).entries).toEqual([]);
    } finally {
      await stopUi(scoped);
    }
  });

  it('exits 3 naming the holder when another process holds the store exclusively', async () => {
    const other = join(work, 'exclusive');
    const db = await Rabosh.open(other, { exclusive: true });
    try {
      const r = cli('ui', other);
      expect(r.status).toBe(3);
      expect(r.stderr).toContain(`is locked by pid ${process.pid}`);
    } finally {
      await db.close();
    }
  });

  it.runIf(GRACEFUL_SIGNALS)('stops on SIGINT (Ctrl+C) with exit 0', async () => {
    await stopUi(await startUi(store), 'SIGINT');
  });

  it('stops on SIGTERM with exit 0 and closes the store', async () => {
    await stopUi(ui);
    stopped = true;
    // Its lock is gone: an exclusive open (refused while any handle has the store) succeeds.
    const db = await Rabosh.open(store, { exclusive: true });
    await db.close();
  });
});
