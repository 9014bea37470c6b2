/**
 * How a server learns that another process wrote to the store: nothing pushes, so it polls. On
 * a store directory each tick is one cheap read (`usage()`, answered from the listing index,
 * which first catches up on other processes' commits) and a look at the commit sequence number;
 * only when that moved are the memories read and compared. A PostgreSQL store has no shared
 * sequence number to look at, so each tick there reads and compares the memories.
 */
import { createHash } from 'node:crypto';
import type { Rabosh, RaboshMemoryToolHandler } from 'rabosh-memory';

/** Path → SHA-256 of the content: what a change is measured against. */
export type Digest = Map<string, string>;

export interface Change {
  /** A memory appeared or vanished (the resource list is different). */
  listChanged: boolean;
  /** Paths whose content changed, appeared or vanished. */
  paths: Set<string>;
}

export interface WatchOptions {
  /** Milliseconds between ticks. */
  intervalMs: number;
  /** The store has a sequence number shared by every process (a store directory). */
  sharedSeq: boolean;
  onChange: (change: Change) => void;
  onFault: (e: unknown) => void;
}

export async function digestOf(handler: RaboshMemoryToolHandler): Promise<Digest> {
  const files = await handler.exportMemories();
  return new Map(files.map((f) => [f.path, createHash('sha256').update(f.content).digest('hex')]));
}

export function compare(before: Digest, after: Digest): Change {
  const paths = new Set<string>();
  let listChanged = before.size !== after.size;
  for (const [p, h] of after) {
    const was = before.get(p);
    if (was === undefined) listChanged = true;
    if (was !== h) paths.add(p);
  }
  for (const p of before.keys()) {
    if (!after.has(p)) {
      listChanged = true;
      paths.add(p);
    }
  }
  return { listChanged, paths };
}

export class StoreWatch {
  #digest: Digest | null = null;
  #seq = -1;
  #timer: NodeJS.Timeout | null = null;
  #tick: Promise<void> | null = null;
  #stopped = false;

  constructor(
    private readonly db: Rabosh,
    private readonly handler: RaboshMemoryToolHandler,
    private readonly options: WatchOptions,
  ) {}

  /** Takes the baseline, then ticks until stopped. The timer never keeps the process alive. */
  async start(): Promise<void> {
    await this.#check(false);
    this.#schedule();
  }

  #schedule(): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.#tick = this.#check(true)
        .catch((e: unknown) => this.options.onFault(e))
        .finally(() => {
          this.#tick = null;
          this.#schedule();
        });
    }, this.options.intervalMs);
    this.#timer.unref();
  }

  async #check(report: boolean): Promise<void> {
    if (this.options.sharedSeq) {
      await this.handler.usage();
      const seq = this.db.stats().seq;
      if (seq === this.#seq && this.#digest !== null) return;
      this.#seq = seq;
    }
    const next = await digestOf(this.handler);
    const before = this.#digest;
    this.#digest = next;
    if (!report || before === null) return;
    const change = compare(before, next);
    if (change.listChanged || change.paths.size > 0) this.options.onChange(change);
  }

  /** Stops ticking and waits for a tick under way, so the store can be closed after it. */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer !== null) clearTimeout(this.#timer);
    await this.#tick?.catch(() => {});
  }
}
