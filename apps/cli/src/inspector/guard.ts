/**
 * What every request to the inspector must pass before it reaches a handler. A browser is a
 * hostile neighbour: any page it shows can aim requests at 127.0.0.1, and a DNS name rebound to
 * 127.0.0.1 makes them look same-origin. So: the Host header must name this loopback server
 * (rebinding sends the attacker's name), an Origin, when sent, must be this page's own, the token
 * (unguessable, in the path) must match, writes are POSTs with a JSON body (a cross-site form or
 * a "simple" fetch cannot send application/json without a CORS preflight, which we never
 * answer), and no response carries a CORS header.
 */
import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

/** Sent with every response, errors included. */
export const SECURITY_HEADERS: Record<string, string> = {
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; " +
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  // The token is in the URL: never hand it to another site.
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
  'Cache-Control': 'no-store',
};

export interface Refusal {
  status: 401 | 403 | 405 | 415;
  message: string;
}

function sameToken(given: string, token: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * Checks Host, Origin and the token of `/<token>/<rest>`, in that order: a refusal, or `rest`,
 * the path after the token ('' for the page itself).
 */
export function admit(req: IncomingMessage, port: number, token: string): { rest: string } | Refusal {
  const host = req.headers.host ?? '';
  if (host !== `127.0.0.1:${port}` && host !== `localhost:${port}`) {
    return { status: 403, message: 'forbidden: the Host header must be 127.0.0.1 or localhost with this port' };
  }
  const origin = req.headers.origin;
  if (origin !== undefined && origin !== `http://${host}`) {
    return { status: 403, message: "forbidden: a request from another origin than the inspector's page" };
  }
  const url = req.url ?? '/';
  const path = url.split('?')[0] ?? '';
  const m = /^\/([^/]*)(?:\/(.*))?$/.exec(path);
  if (m === null || !sameToken(m[1] ?? '', token)) {
    return { status: 401, message: 'unauthorized: open the URL the inspector printed (it carries the token)' };
  }
  return { rest: m[2] ?? '' };
}

/** A write endpoint takes POST with a JSON body, nothing else. */
export function admitWrite(req: IncomingMessage): Refusal | null {
  if (req.method !== 'POST') return { status: 405, message: 'method not allowed: writes are POST requests' };
  const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/json') return { status: 415, message: 'unsupported media type: send application/json' };
  return null;
}

export function sendJson(res: ServerResponse, status: number, body: unknown, extra: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    ...SECURITY_HEADERS,
    ...extra,
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': String(Buffer.byteLength(text)),
  });
  res.end(text);
}

export function refuse(res: ServerResponse, r: Refusal): void {
  sendJson(res, r.status, { error: { code: `HTTP_${r.status}`, message: r.message } }, r.status === 405 ? { Allow: 'POST' } : {});
}
