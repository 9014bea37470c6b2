/**
 * What the watchers (the MCP server's, the inspector's) poll: the store's change feed
 * (`handler.changes()`, docs/guide/changes.md). A tick reads the changes after its cursor —
 * nothing when nothing changed, never the memories themselves — on every backend alike, and
 * other processes' commits included.
 */
import type { RaboshMemoryToolHandler } from 'rabosh-memory';

/** What changed since the last poll. */
export interface Polled {
  /** Paths whose memory appeared, changed, vanished or moved (empty with `all`). */
  paths: Set<string>;
  /** A memory appeared, vanished or moved: a list of memories is different. */
  listChanged: boolean;
  /**
   * Any memory may have changed: the feed answered `reset` (its cursor was older than it keeps),
   * or more paths changed than a poll collects.
   */
  all: boolean;
}

/** Changes per read of the feed. */
const PAGE = 1000;
/** Paths one poll collects before it reports `all` instead. */
const MAX_PATHS = 10_000;

export class ChangePoller {
  #cursor: string | null = null;

  constructor(private readonly handler: RaboshMemoryToolHandler) {}

  /** Takes the cursor of the store as it is now: later polls report what comes after it. */
  async start(): Promise<void> {
    this.#cursor = (await this.handler.changes({ limit: 0 })).cursor;
  }

  /** What changed since the last poll (or `start`); null when nothing did. */
  async poll(): Promise<Polled | null> {
    if (this.#cursor === null) {
      await this.start();
      return null;
    }
    const paths = new Set<string>();
    let listChanged = false;
    for (;;) {
      const page = await this.handler.changes({ since: this.#cursor, limit: PAGE });
      this.#cursor = page.cursor;
      if (page.reset) return { paths: new Set(), listChanged: true, all: true };
      for (const c of page.changes) {
        paths.add(c.path);
        if (c.kind !== 'modified') listChanged = true;
      }
      if (paths.size > MAX_PATHS) {
        // Reading on would only grow the set: everything up to now is reported as changed.
        await this.start();
        return { paths: new Set(), listChanged: true, all: true };
      }
      if (page.changes.length < PAGE) break;
    }
    return paths.size === 0 ? null : { paths, listChanged, all: false };
  }
}
