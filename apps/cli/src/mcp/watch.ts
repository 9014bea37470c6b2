/**
 * How a server learns that another process wrote to the store: nothing pushes, so it polls the
 * store's change feed (`../changes-poll.ts`). A tick reads the changes after its cursor and
 * reports only the changed paths; on a store directory and on PostgreSQL alike it never reads
 * the memories.
 */
import type { RaboshMemoryToolHandler } from 'rabosh-memory';
import { ChangePoller } from '../changes-poll.js';

export interface Change {
  /** A memory appeared, vanished or moved (the resource list is different). */
  listChanged: boolean;
  /** Paths whose content changed, appeared or vanished. */
  paths: Set<string>;
  /** Any memory may have changed (the feed could not say which): `paths` is empty. */
  all?: boolean;
}

export interface WatchOptions {
  /** Milliseconds between ticks. */
  intervalMs: number;
  onChange: (change: Change) => void;
  onFault: (e: unknown) => void;
}

export class StoreWatch {
  readonly #poller: ChangePoller;
  #timer: NodeJS.Timeout | null = null;
  #tick: Promise<void> | null = null;
  #stopped = false;

  constructor(
    handler: RaboshMemoryToolHandler,
    private readonly options: WatchOptions,
  ) {
    this.#poller = new ChangePoller(handler);
  }

  /** Takes the baseline, then ticks until stopped. The timer never keeps the process alive. */
  async start(): Promise<void> {
    await this.#poller.start();
    this.#schedule();
  }

  #schedule(): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.#tick = this.#check()
        .catch((e: unknown) => this.options.onFault(e))
        .finally(() => {
          this.#tick = null;
          this.#schedule();
        });
    }, this.options.intervalMs);
    this.#timer.unref();
  }

  async #check(): Promise<void> {
    const polled = await this.#poller.poll();
    if (polled !== null) this.options.onChange(polled);
  }

  /** Stops ticking and waits for a tick under way, so the store can be closed after it. */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer !== null) clearTimeout(this.#timer);
    await this.#tick?.catch(() => {});
  }
}
