/**
 * Live refresh: while a page listens (Server-Sent Events), poll the store's change feed and tell
 * every listener which paths changed. Another process's commit is what this is for: the store is
 * shared between processes, and nothing pushes their commits to us. A tick reads the changes
 * after its cursor (`../changes-poll.ts`), on every backend alike, never the memories.
 */
import type { ServerResponse } from 'node:http';
import type { RaboshMemoryToolHandler } from 'rabosh-memory';
import { ChangePoller, type Polled } from '../changes-poll.js';
import { SECURITY_HEADERS } from './guard.js';

/** How often a listened-to store is looked at. */
const POLL_MS = 700;
/** A comment line now and then keeps proxies and the browser from timing the stream out. */
const HEARTBEAT_MS = 15_000;
/** Paths one `change` event names; past it the event says `all` instead. */
const EVENT_PATHS = 1000;

/** What a tick asks: null the first time (the baseline) and when nothing changed. */
export type Probe = () => Promise<Polled | null>;

/** The probe of `handler`'s scope: its change feed, from the first tick on. */
export function feedProbe(handler: RaboshMemoryToolHandler): Probe {
  const poller = new ChangePoller(handler);
  return () => poller.poll();
}

export class ChangeFeed {
  readonly #listeners = new Set<ServerResponse>();
  readonly #probe: Probe;
  #timer: NodeJS.Timeout | null = null;
  #heartbeat: NodeJS.Timeout | null = null;
  #probing = false;
  #fault: string | null = null;

  constructor(probe: Probe) {
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
      const polled = await this.#probe();
      if (this.#fault !== null) {
        this.#fault = null;
        this.#event('recovered', {});
      }
      if (polled !== null) {
        const all = polled.all || polled.paths.size > EVENT_PATHS;
        // `paths: null` when the feed cannot name them: the page then re-checks every directory it shows.
        this.#event('change', { paths: all ? null : [...polled.paths], all, listChanged: polled.listChanged });
      }
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
