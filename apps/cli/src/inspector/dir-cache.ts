/**
 * The directories the page lists, kept by the server and brought up to date from the change
 * feed. `handler.children(dir)` reads the whole key range below `dir` (metadata only): at the
 * root of a big store that is every memory of the scope, and the page asks for the root again
 * after every write anywhere. So each listing is read once, whole, and each later answer first
 * reads the feed since then and recomputes only the names the changed paths lie under: the
 * size of a memory at that name (one `get`), and what lies below it (a listing kept here, or
 * that name's own key range). The header's totals are the root's.
 *
 * Recomputing reads the present, never applies a delta to a past, so a change seen twice is
 * harmless; the feed's cursor is taken before the first listing is read, so no change between
 * them is missed. A feed that cannot name the changes (`all`) drops every listing.
 */
import { MemoryPath, type DirectoryPage, type RaboshMemoryToolHandler } from 'rabosh-memory';
import { ChangePoller } from '../changes-poll.js';

/** [size of the memory at the name or null, memories below it, their bytes]. */
type Entry = [number | null, number, number];

interface Listing {
  memories: number;
  bytes: number;
  /** Names in UTF-8 byte order, as the store pages them. */
  names: string[];
  entries: Map<string, Entry>;
}

/** Names one `children` call can answer whole; a longer directory is read a page at a time, uncached. */
const WHOLE = 10_000;
/** Names kept over all listings; the least recently asked go first. */
const MAX_NAMES = 100_000;

const byteOrder = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));
const count = (e: Entry) => (e[0] === null ? 0 : 1) + e[1];
const weight = (e: Entry) => (e[0] ?? 0) + e[2];

/** Where `name` is in `names` (byte order), or where it would go. */
function seek(names: string[], name: string): { at: number; found: boolean } {
  let lo = 0;
  let hi = names.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const c = byteOrder(names[mid]!, name);
    if (c === 0) return { at: mid, found: true };
    if (c < 0) lo = mid + 1;
    else hi = mid;
  }
  return { at: lo, found: false };
}

export class DirCache {
  readonly #handler: RaboshMemoryToolHandler;
  readonly #poller: ChangePoller;
  /** By directory, least recently asked first. */
  readonly #dirs = new Map<string, Listing>();
  #names = 0;
  /** One catch-up with the feed at a time; every answer waits for the one before it. */
  #turn: Promise<unknown> = Promise.resolve();

  constructor(handler: RaboshMemoryToolHandler) {
    this.#handler = handler;
    this.#poller = new ChangePoller(handler);
  }

  /** A page of `dir`'s names, as `handler.children` answers it, as of now. */
  children(dir: string, options: { after?: string; limit: number }): Promise<DirectoryPage> {
    return this.#inTurn(async () => {
      const path = MemoryPath.normalise(dir);
      const listing = path === null ? undefined : await this.#listing(path);
      if (path === null || listing === undefined) return this.#handler.children(dir, options);
      const from = options.after === undefined ? 0 : seek(listing.names, options.after);
      const start = typeof from === 'number' ? from : from.at + (from.found ? 1 : 0);
      const names = listing.names.slice(start, start + options.limit);
      return {
        path,
        memories: listing.memories,
        bytes: listing.bytes,
        total: listing.names.length,
        entries: names.map((name) => {
          const [memoryBytes, memories, bytes] = listing.entries.get(name)!;
          return { name, path: `${path}/${name}`, memoryBytes, memories, bytes };
        }),
        next: start + names.length < listing.names.length ? names[names.length - 1]! : null,
      };
    });
  }

  /** The scope's memories and their bytes (the root's totals), as `handler.usage()` counts them. */
  totals(): Promise<{ memories: number; bytes: number }> {
    return this.children('/memories', { limit: 1 }).then((p) => ({ memories: p.memories, bytes: p.bytes }));
  }

  #inTurn<T>(work: () => Promise<T>): Promise<T> {
    const mine = this.#turn.then(work, work);
    this.#turn = mine.catch(() => {});
    return mine;
  }

  /** `path`'s listing brought up to date, or undefined for a directory too long to keep whole. */
  async #listing(path: string): Promise<Listing | undefined> {
    try {
      await this.#catchUp();
    } catch (e) {
      this.#drop();
      throw e;
    }
    let listing = this.#dirs.get(path);
    if (listing === undefined) {
      const page = await this.#handler.children(path, { limit: WHOLE });
      if (page.next !== null) return undefined;
      listing = {
        memories: page.memories,
        bytes: page.bytes,
        names: page.entries.map((e) => e.name),
        entries: new Map(page.entries.map((e) => [e.name, [e.memoryBytes, e.memories, e.bytes]])),
      };
      this.#names += listing.names.length;
    }
    // Most recently asked last.
    this.#dirs.delete(path);
    this.#dirs.set(path, listing);
    for (const [p, l] of this.#dirs) {
      if (this.#names <= MAX_NAMES || p === path) break;
      this.#dirs.delete(p);
      this.#names -= l.names.length;
    }
    return listing;
  }

  #drop(): void {
    this.#dirs.clear();
    this.#names = 0;
  }

  /** Reads the feed since the last answer and recomputes the names it changed. */
  async #catchUp(): Promise<void> {
    const polled = await this.#poller.poll();
    if (polled === null || this.#dirs.size === 0) return;
    if (polled.all) return this.#drop();
    // Deepest first: a directory's totals are then current when its parent asks for them.
    const dirs = [...this.#dirs.keys()].sort((a, b) => b.split('/').length - a.split('/').length);
    for (const dir of dirs) {
      const listing = this.#dirs.get(dir)!;
      const touched = new Map<string, { self: boolean; below: boolean }>();
      for (const p of polled.paths) {
        if (!p.startsWith(`${dir}/`)) continue;
        const rest = p.slice(dir.length + 1);
        const slash = rest.indexOf('/');
        const name = slash === -1 ? rest : rest.slice(0, slash);
        const t = touched.get(name) ?? { self: false, below: false };
        if (slash === -1) t.self = true;
        else t.below = true;
        touched.set(name, t);
      }
      for (const [name, t] of touched) await this.#recompute(dir, listing, name, t);
    }
  }

  async #recompute(dir: string, listing: Listing, name: string, touched: { self: boolean; below: boolean }): Promise<void> {
    const path = `${dir}/${name}`;
    const old = listing.entries.get(name) ?? ([null, 0, 0] as Entry);
    const next: Entry = [...old];
    if (touched.self) {
      const memory = await this.#handler.get(path);
      next[0] = memory === null ? null : Buffer.byteLength(memory.content, 'utf8');
    }
    if (touched.below) {
      const kept = this.#dirs.get(path);
      const below = kept ?? (await this.#handler.children(path, { limit: 1 }));
      next[1] = below.memories;
      next[2] = below.bytes;
    }
    listing.memories += count(next) - count(old);
    listing.bytes += weight(next) - weight(old);
    const { at, found } = seek(listing.names, name);
    if (count(next) === 0) {
      listing.entries.delete(name);
      if (found) {
        listing.names.splice(at, 1);
        this.#names--;
      }
      return;
    }
    listing.entries.set(name, next);
    if (!found) {
      listing.names.splice(at, 0, name);
      this.#names++;
    }
  }
}
