// `db.sync` at a size, against the memory-stores stand-in (__test__/fixtures) through the real
// SDK client, as bench/sync-incremental.ts measures it at smaller sizes:
//   - setup (once, not a figure of the run): the stand-in holds the same memories as the local
//     store (imported), and a first sync records that both sides agree (a full one: it lists
//     every hosted memory with its content, 20 a page);
//   - then each run, a fresh process (sync-child.mjs, on the built library): a sync with nothing to do, and one
//     carrying 10 changes (5 local edits pushed, 5 hosted edits pulled): requests and time.
// The stand-in answers each request after `latencyMs` during the runs (0 during the setup).

import { fork } from 'node:child_process';
import { join } from 'node:path';
import { MemoryStoresStandIn } from '../../__test__/fixtures/memory-stores-stand-in.js';
import { scaleEntries, scalePaths } from '../scale-plan.js';
import { nowMs } from '../stats.js';

/** The hosted path of a local one (the default mapping: /memories/x ↔ /x). */
const hosted = (local: string) => local.slice('/memories'.length);

/**
 * Fills the stand-in with the store's memories directly (its `put` looks each path up by a scan,
 * quadratic at this size), as written an hour ago. Their `created` versions are left out of its
 * version list: the stand-in filters that list by a scan per request where a hosted API has an
 * index, and a sync after the setup never lists versions that old.
 */
function seed(remote: MemoryStoresStandIn, size: number): void {
  const at = new Date(Date.now() - 3600_000).toISOString();
  let i = 0;
  for (const [path, content] of scaleEntries(size)) {
    const id = `mem_seed${(i++).toString(36)}`;
    remote.memories.set(id, { id, path: hosted(path), content, versionId: `memver_seed${i.toString(36)}`, createdAt: at, updatedAt: at });
  }
}

export interface SyncSetup {
  remote: MemoryStoresStandIn;
  /** Seconds: seeding the stand-in, and the first (full) sync. */
  seedS: number;
  firstSyncS: number;
  firstSyncRequests: number;
  close(): Promise<void>;
}

/** One child: `args` as its argv; answers its requests for hosted edits; its JSON result. */
function child(lib: string, store: string, size: number, remote: MemoryStoresStandIn, args: string[]): Promise<Record<string, number>> {
  const argv = [lib, store, remote.baseURL, remote.storeId, scalePaths(size).dir1k, ...args];
  const p = fork(join(import.meta.dirname, 'sync-child.mjs'), argv, {
    execArgv: [],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  let result: Record<string, number> | null = null;
  p.on('message', (msg: { edit?: string[]; round?: number; result?: Record<string, number> }) => {
    if (msg.edit) {
      for (const path of msg.edit) remote.put(hosted(path), `hosted edit ${msg.round}\n`);
      p.send({ edited: true });
    }
    if (msg.result) result = msg.result;
  });
  return new Promise((done, fail) =>
    p.once('close', (code) => (code === 0 && result !== null ? done(result) : fail(new Error(`sync child exited with ${code}`)))),
  );
}

export async function setupSync(lib: string, store: string, size: number): Promise<SyncSetup> {
  const remote = await new MemoryStoresStandIn('memstore_surfaces').start();
  const t0 = nowMs();
  seed(remote, size);
  const seedS = (nowMs() - t0) / 1000;
  const r = await child(lib, store, size, remote, ['setup']);
  return {
    remote,
    seedS,
    firstSyncS: r.first_sync_s as number,
    firstSyncRequests: r.first_sync_requests as number,
    close: () => remote.close(),
  };
}

export async function measureSync(
  lib: string,
  store: string,
  size: number,
  setup: SyncSetup,
  run: number,
  latencyMs: number,
): Promise<Record<string, number>> {
  setup.remote.delayMs = latencyMs;
  try {
    return await child(lib, store, size, setup.remote, ['run', String(run)]);
  } finally {
    setup.remote.delayMs = 0;
  }
}
