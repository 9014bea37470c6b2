/**
 * Live refresh: while a page listens (Server-Sent Events), poll a cheap fingerprint of the store
 * and tell every listener when it changes. Another process's commit is what this is for: the
 * store is shared between processes, and nothing pushes their commits to us.
 */
import type { ServerResponse } from 'node:http';
import type { Rabosh, RaboshMemoryToolHandler } from 'rabosh-memory';
import { SECURITY_HEADERS } from './guard.js';

/** How often a listened-to store is looked at. */
const POLL_MS = 700;
/** A comment line now and then keeps proxies and the browser from timing the stream out. */
const HEARTBEAT_MS = 15_000;

/**
 * What changes with every commit. A directory store: `usage()` is a read, so it first catches up
 * with other processes' commits, and then `stats().seq` is the last commit's number. PostgreSQL
 * has no commit number to read (`seq` is 0), so there the fingerprint is the scope's usage and its
 * newest version (with history on, every change records one).
 */
export function fingerprinter(db: Rabosh, handler: RaboshMemoryToolHandler, postgres: boolean): () => Promise<string> {
  return async () => {
    const usage = await handler.usage();
    if (!postgres) return String(db.stats().seq);
    const newest = (await handler.versions({ limit: 1 })).data[0];
    return `${usage.memories}:${usage.bytes}:${usage.history?.versions ?? ''}:${newest?.id ?? ''}`;
  };
}

export class ChangeFeed {
  readonly #listeners = new Set<ServerResponse>();
  readonly #probe: () => Promise<string>;
  #last: string | null = null;
  #timer: NodeJS.Timeout | null = null;
  #heartbeat: NodeJS.Timeout | null = null;
  #probing = false;
  #fault: string | null = null;

  constructor(probe: () => Promise<string>) {
    this.#probe = probe;
  }

  /** Turns `res` into an event stream until the page goes away or the feed closes. */
  listen(res: ServerResponse): void {
    res.writeHead(200, {
      ...SECURITY_HEADERS,
      'Content-Type': 'text/event-stream; charset=utf-8',
      Connection: 'keep-alive',
    });
    res.write('retry: 2000\n\n');
    this.#listeners.add(res);
    res.on('close', () => {
      this.#listeners.delete(res);
      if (this.#listeners.size === 0) this.#stop();
    });
    this.#start();
  }

  close(): void {
    this.#stop();
    for (const res of this.#listeners) res.end();
    this.#listeners.clear();
  }

  #start(): void {
    if (this.#timer !== null) return;
    this.#timer = setInterval(() => void this.#tick(), POLL_MS);
    this.#heartbeat = setInterval(() => this.#send(': heartbeat\n\n'), HEARTBEAT_MS);
    void this.#tick();
  }

  #stop(): void {
    if (this.#timer !== null) clearInterval(this.#timer);
    if (this.#heartbeat !== null) clearInterval(this.#heartbeat);
    this.#timer = this.#heartbeat = null;
  }

  async #tick(): Promise<void> {
    if (this.#probing) return;
    this.#probing = true;
    try {
      const now = await this.#probe();
      if (this.#fault !== null) {
        this.#fault = null;
        this.#event('recovered', {});
      }
      if (this.#last !== null && now !== this.#last) this.#event('change', { fingerprint: now });
      this.#last = now;
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e);
      if (message !== this.#fault) this.#event('fault', { message });
      this.#fault = message;
    } finally {
      this.#probing = false;
    }
  }

  #event(name: string, data: unknown): void {
    this.#send(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n`);
  }

  #send(text: string): void {
    for (const res of this.#listeners) res.write(text);
  }
}
