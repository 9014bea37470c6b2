// What the inspector's tests share: Debian's chromium (installed by the project's own script when
// missing and this is root on Debian), the `ui` command as a real process, and raw HTTP requests
// with whatever Host and Origin a hostile page would send.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { type IncomingMessage, request, type ServerResponse } from 'node:http';
import { join, resolve } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { expect } from 'vitest';
import type { Api } from '../apps/cli/src/inspector/api.js';

const root = resolve(import.meta.dirname, '..');
const bin = resolve(root, 'apps', 'cli', 'dist', 'main.js');

/** Where a Chrome is preinstalled on the hosted CI runners (macOS, Windows, Ubuntu). */
const PREINSTALLED = [
  '/usr/bin/google-chrome',
  '/Applications/Google Chrome.app/Contents/MacOS/Google Chrome',
  'C:\\Program Files\\Google\\Chrome\\Application\\chrome.exe',
];

/**
 * The browser: RABOSH_CHROMIUM, else Debian's (installed here by scripts/install-chromium.sh
 * when this is root on Debian), else a Chrome the machine already has.
 */
export function chromiumPath(): string {
  const given = process.env['RABOSH_CHROMIUM'];
  if (given) return given;
  const debian = '/usr/bin/chromium';
  if (!existsSync(debian) && process.getuid?.() === 0 && existsSync('/usr/bin/apt-get')) {
    execFileSync('bash', [resolve(root, 'scripts', 'install-chromium.sh')], { stdio: 'inherit', timeout: 900_000 });
  }
  const found = [debian, ...PREINSTALLED].find((p) => existsSync(p));
  if (found === undefined)
    throw new Error('chromium is missing: run scripts/install-chromium.sh as root on Debian, or set RABOSH_CHROMIUM');
  return found;
}

/**
 * Signals end the inspector gracefully (exit 0, store closed) where there are signals; on
 * Windows a kill is TerminateProcess, with no handler to run.
 */
export const GRACEFUL_SIGNALS = process.platform !== 'win32';

/** Stops `ui` and, where signals exist, checks it closed down cleanly. */
export async function stopUi(ui: Ui, signal?: NodeJS.Signals): Promise<void> {
  const code = await ui.stop(signal);
  if (GRACEFUL_SIGNALS) {
    expect(code, ui.stderr()).toBe(0);
    expect(ui.stderr()).toBe('');
  }
}

/** Flags for a quiet, reproducible headless run that reaches nothing but the page. */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * Chromium with a fresh profile in `dir`, at a fixed size and scheme (the screenshots'), and the
 * one page, which records every console error and page error into `problems`.
 */
export async function openBrowser(dir: string, problems: string[]): Promise<{ context: BrowserContext; page: Page }> {
  const context = await chromium.launchPersistentContext(join(dir, 'profile'), {
    executablePath: chromiumPath(),
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1360, height: 780 },
    deviceScaleFactor: 1,
    colorScheme: 'light',
    timeout: 120_000,
  });
  const page = context.pages()[0] ?? (await context.newPage());
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  return { context, page };
}

export interface Ui {
  child: ChildProcess;
  url: string;
  port: number;
  token: string;
  stderr: () => string;
  /** SIGTERM (or the signal given), then the exit code (bounded wait). */
  stop: (signal?: NodeJS.Signals) => Promise<number | null>;
}

/** Starts `rabosh-memory ui <store> ...args` and waits (bounded) for the URL on stdout. */
export async function startUi(store: string, ...args: string[]): Promise<Ui> {
  return startUiWith({}, store, ...args);
}

/**
 * The same, run from `cwd` (so a relative store path reads as a user would type it) and with
 * another build of the bin (an installed package's).
 */
export async function startUiWith(where: { cwd?: string; bin?: string }, store: string, ...args: string[]): Promise<Ui> {
  const child = spawn(process.execPath, [where.bin ?? bin, 'ui', store, ...args], { cwd: where.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  const url = await new Promise<string>((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`ui printed no URL in 60 s; stderr: ${err}`)), 60_000);
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const line = out.split('\n')[0];
      if (out.includes('\n') && line) {
        clearTimeout(timer);
        done(line.trim());
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      fail(new Error(`ui exited with ${code} before printing a URL; stderr: ${err}`));
    });
  });
  const m = /^http:\/\/127\.0\.0\.1:(\d+)\/([A-Za-z0-9_-]+)\/$/.exec(url.startsWith('{') ? (JSON.parse(url) as { url: string }).url : url);
  if (m === null) throw new Error(`unexpected URL line ${JSON.stringify(url)}`);
  return {
    child,
    url: `http://127.0.0.1:${m[1]}/${m[2]}/`,
    port: Number(m[1]),
    token: m[2]!,
    stderr: () => err,
    stop: async (signal: NodeJS.Signals = 'SIGTERM') => {
      child.kill(signal);
      const timeout = new Promise<'timeout'>((done) => setTimeout(() => done('timeout'), 60_000));
      const r = await Promise.race([exited, timeout]);
      if (r === 'timeout') {
        child.kill('SIGKILL');
        throw new Error('ui did not exit within 60 s of SIGTERM');
      }
      return r;
    },
  };
}

export interface Raw {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One request with exactly these headers (fetch would not let us set Host). */
export function raw(
  port: number,
  path: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<Raw> {
  return new Promise((done, fail) => {
    const req = request(
      { host: '127.0.0.1', port, path, method: options.method ?? 'GET', headers: { Host: `127.0.0.1:${port}`, ...options.headers } },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (body += d));
        res.on('end', () => done({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.setTimeout(30_000, () => req.destroy(new Error(`no answer to ${path} in 30 s`)));
    req.on('error', fail);
    req.end(options.body);
  });
}

/** Another process runs one command on the store (the point of the live refresh). */
export function runInAnotherProcess(store: string, input: Record<string, unknown>): void {
  const script = `
    import { RaboshMemoryToolHandler } from ${JSON.stringify(resolve(root, 'dist', 'esm', 'index.js'))};
    const h = await RaboshMemoryToolHandler.open(process.argv[1], { history: true, actor: { type: 'session', id: 'other-process' } });
    const r = await h.execute(JSON.parse(process.argv[2]));
    await h.close();
    if (r.isError) { console.error(r.text); process.exit(1); }`;
  execFileSync(process.execPath, ['--input-type=module', '-e', script, store, JSON.stringify(input)], { stdio: 'pipe', timeout: 60_000 });
}

export function writeFromAnotherProcess(store: string, path: string, text: string): void {
  runInAnotherProcess(store, { command: 'create', path, file_text: text });
}

/** One GET of the API, as the server would answer it. */
export async function ask(api: Api, name: string, query: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  const url = new URL(`http://127.0.0.1/t/api/${name}?${new URLSearchParams(query)}`);
  let status = 0;
  let text = '';
  const res = {
    writeHead: (s: number) => {
      status = s;
    },
    end: (t: string) => {
      text = t;
    },
  } as unknown as ServerResponse;
  expect(await api.serve(name, { method: 'GET' } as IncomingMessage, res, url)).toBe(true);
  return { status, body: JSON.parse(text) };
}
