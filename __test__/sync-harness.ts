// What the db.sync suites share: a memory-stores stand-in started fresh for each test, an SDK
// client pointed at it, and a new history-keeping store in a temporary directory (with a handler
// for it), all closed and removed after the test. The bindings below are live: a suite that
// calls useSyncFixture() reads the current test's remote, client, db and h through its imports.
import { afterEach, beforeEach } from 'vitest';
import Anthropic from '@anthropic-ai/sdk';
import { createHash } from 'node:crypto';
import { type MemoryToolOptions, Rabosh, RaboshMemoryToolHandler, type SyncReport } from '../index.js';
import { NativeMemories } from '../src/native.js';
import { storeNative } from '../src/store.js';
import { MemoryStoresStandIn } from './fixtures/memory-stores-stand-in.js';
import { makeTempDir, removeDir } from './tmp-dir.js';

export let remote: MemoryStoresStandIn;
export let client: Anthropic;
export let dir: string;
export let db: Rabosh;
export let h: RaboshMemoryToolHandler;

/** Registers the per-test set-up and tear-down; `prefix` names the temporary directory. */
export function useSyncFixture(prefix: string, handlerOptions?: MemoryToolOptions): void {
  beforeEach(async () => {
    remote = await new MemoryStoresStandIn().start();
    client = new Anthropic({ baseURL: remote.baseURL, apiKey: 'test' });
    dir = makeTempDir(prefix);
    db = await Rabosh.open(dir, { history: true });
    h = new RaboshMemoryToolHandler(db, handlerOptions);
  });

  afterEach(async () => {
    await db.close();
    await remote.close();
    removeDir(dir);
  });
}

/** Opens the current test's store again (after a test closed it), so the tear-down can close it. */
export async function reopen(): Promise<void> {
  db = await Rabosh.open(dir, { history: true });
}

/** One sync of the current test's store with the stand-in, with extra options. */
export const sync = (extra: Record<string, unknown> = {}): Promise<SyncReport> =>
  db.sync(client, { memoryStoreId: remote.storeId, ...extra });

export const sha = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

/** The default scope's memories of the current test's store, as the sync reads its records there. */
export function defaultMemories(): NativeMemories {
  return new NativeMemories(storeNative(db), {
    scope: 'default',
    maxMemoryBytes: 1 << 20,
    createOverwrites: false,
    trackAccess: false,
    listingIndex: false,
  });
}
