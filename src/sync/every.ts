/** `db.syncEvery(ms, client, options)`: a sync loop that `stop()` and `db.close()` end cleanly. */

import { InvalidOptionError } from '../errors.js';
import { syncStore } from './engine.js';
import type { SyncEveryOptions, SyncHost, SyncRunner } from './types.js';

const runners = new WeakMap<object, Set<SyncRunner>>();

export function syncEvery(db: SyncHost, ms: number, client: unknown, options: SyncEveryOptions): SyncRunner {
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0) {
    throw new InvalidOptionError(`invalid option ms: ${JSON.stringify(ms) ?? String(ms)} (expected milliseconds, 0 or more)`);
  }
  if (db.closed) throw new InvalidOptionError('syncEvery on a closed store');
  const { onReport, onError, ...syncOptions } = options ?? ({} as SyncEveryOptions);
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let current: Promise<void> = Promise.resolve();
  const tick = () => {
    timer = null;
    current = syncStore(db, client, syncOptions)
      .then(
        (report) => onReport?.(report),
        (e: unknown) => (onError ? onError(e) : undefined),
      )
      .finally(() => {
        if (!stopped) timer = setTimeout(tick, ms);
      });
  };
  const set = runners.get(db.key) ?? new Set<SyncRunner>();
  runners.set(db.key, set);
  const runner: SyncRunner = {
    async stop() {
      stopped = true;
      if (timer !== null) clearTimeout(timer);
      timer = null;
      set.delete(runner);
      await current;
    },
  };
  set.add(runner);
  tick();
  return runner;
}

/** Stops every runner over `db` (called by `db.close()` before the store closes). */
export async function stopSyncs(key: object): Promise<void> {
  const set = runners.get(key);
  if (set !== undefined) await Promise.all([...set].map((r) => r.stop()));
}
