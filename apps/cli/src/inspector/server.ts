/**
 * `rabosh-memory ui`: a local web page to look inside a store. One node:http server on
 * 127.0.0.1, a random token as the first path segment of every URL (so the page's relative
 * URLs carry it), the guard of guard.ts in front of everything, the page's files read once at
 * start, the JSON API of api.ts and the change feed of watch.ts.
 */
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Rabosh, RaboshMemoryToolHandler } from 'rabosh-memory';
import { Api, type StoreInfo } from './api.js';
import { SECURITY_HEADERS, admit, refuse, sendJson } from './guard.js';
import { ChangeFeed, feedProbe } from './watch.js';

/** The page's files sit beside this module in dist (scripts/build-ts.mjs puts them there). */
const PAGE_DIR = new URL('./page/', import.meta.url);
const TYPES: Record<string, string> = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  svg: 'image/svg+xml',
};

export interface InspectorOptions {
  db: Rabosh;
  handler: RaboshMemoryToolHandler;
  info: StoreInfo;
  /** 0 picks a free port. */
  port: number;
}

export interface Inspector {
  /** The URL to open, token included. */
  readonly url: string;
  close(): Promise<void>;
}

/** Every servable file of the page, read once; the page itself is `''`. */
function loadPage(): Map<string, { body: Buffer; type: string }> {
  const files = new Map<string, { body: Buffer; type: string }>();
  for (const name of readdirSync(PAGE_DIR)) {
    const type = TYPES[name.slice(name.lastIndexOf('.') + 1)];
    if (type === undefined) continue;
    files.set(name === 'index.html' ? '' : name, { body: readFileSync(new URL(name, PAGE_DIR)), type });
  }
  if (!files.has('') || !files.has('app.js'))
    throw new Error(`the inspector's page is missing from ${PAGE_DIR.pathname} (run npm run build:ts)`);
  return files;
}

export async function startInspector(options: InspectorOptions): Promise<Inspector> {
  const page = loadPage();
  const token = randomBytes(32).toString('base64url');
  const api = new Api(options.handler, options.info);
  const feed = new ChangeFeed(feedProbe(options.handler));
  let port = 0;

  const serve = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const admitted = admit(req, port, token);
    if ('status' in admitted) return refuse(res, admitted);
    const url = new URL(req.url ?? '/', `http://${req.headers.host}`);
    const rest = admitted.rest;
    if (url.pathname === `/${token}`) {
      // Without the slash the page's relative URLs would lose the token.
      res.writeHead(308, { ...SECURITY_HEADERS, Location: `/${token}/` });
      res.end();
      return;
    }
    const file = page.get(rest);
    if (file !== undefined) {
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        sendJson(res, 405, { error: { code: 'HTTP_405', message: 'method not allowed' } }, { Allow: 'GET' });
        return;
      }
      res.writeHead(200, { ...SECURITY_HEADERS, 'Content-Type': file.type, 'Content-Length': String(file.body.length) });
      res.end(req.method === 'HEAD' ? undefined : file.body);
      return;
    }
    if (rest === 'api/events' && req.method === 'GET') return feed.listen(res);
    if (rest.startsWith('api/') && (await api.serve(rest.slice(4), req, res, url))) return;
    sendJson(res, 404, { error: { code: 'HTTP_404', message: 'not found' } });
  };

  const server: Server = createServer((req, res) => {
    serve(req, res).catch((e: unknown) => {
      if (!res.headersSent) sendJson(res, 500, { error: { code: 'INTERNAL', message: e instanceof Error ? e.message : String(e) } });
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    // Loopback only: nothing else on the network may reach the page.
    server.listen(options.port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  port = (server.address() as AddressInfo).port;
  void api.prime();

  return {
    url: `http://127.0.0.1:${port}/${token}/`,
    close: async () => {
      feed.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
