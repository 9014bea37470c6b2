// Differential test of the incremental sync (issue 36 §3): the same random sequence of local and
// hosted changes (edits, creates, deletes, renames, on both sides between syncs) synced by two
// stores, one incrementally and one with `incremental: false` (a full sync every time), ends
// every sync with both sides, the bases and the report's outcomes the same. A step may also leave
// the incremental store as an older build would (its bases without their lookup rows).
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import Anthropic from '@anthropic-ai/sdk';
import { Rabosh, RaboshMemoryToolHandler, type SyncReport } from '../index.js';
import { NativeMemories } from '../src/native.js';
import { storeNative } from '../src/store.js';
import { decodeBase } from '../src/sync/base.js';
import { decodeCursor, encodeCursor } from '../src/sync/cursor.js';
import { MemoryStoresStandIn } from './fixtures/memory-stores-stand-in.js';
import { makeTempDir, removeDir } from './tmp-dir.js';

const PATHS = ['a.md', 'b.md', 'd/c.md', 'd/e.md', 'f/g.md'];

type Step =
  | { t: 'localPut' | 'remotePut' | 'localRemove' | 'remoteRemove'; i: number }
  | { t: 'localRename' | 'remoteRename'; i: number; j: number }
  | { t: 'sync' }
  | { t: 'olderBuild'; keep: number };

const nat = fc.nat(PATHS.length - 1);
const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ t: fc.constantFrom('localPut' as const, 'remotePut' as const, 'localRemove' as const, 'remoteRemove' as const), i: nat }),
  fc.record({ t: fc.constantFrom('localRename' as const, 'remoteRename' as const), i: nat, j: nat }),
  fc.constant({ t: 'sync' as const }),
  // Drops the lookup rows but every `keep`-th (an older build neither writes nor deletes them).
  fc.record({ t: fc.constant('olderBuild' as const), keep: fc.integer({ min: 1, max: 3 }) }),
);

class World {
  private constructor(
    readonly remote: MemoryStoresStandIn,
    readonly dir: string,
    readonly db: Rabosh,
    readonly h: RaboshMemoryToolHandler,
    readonly client: Anthropic,
    readonly incremental: boolean,
  ) {}

  static async open(incremental: boolean): Promise<World> {
    const remote = await new MemoryStoresStandIn().start();
    const dir = makeTempDir('rabosh-sync-differential');
    const db = await Rabosh.open(dir, { history: true });
    return new World(
      remote,
      dir,
      db,
      new RaboshMemoryToolHandler(db),
      new Anthropic({ baseURL: remote.baseURL, apiKey: 'test' }),
      incremental,
    );
  }

  async close(): Promise<void> {
    await this.db.close();
    await this.remote.close();
    removeDir(this.dir);
  }

  /** Applies a step; what it did ('' when it did nothing), the same in both worlds if they agree. */
  async apply(s: Step, n: number): Promise<string> {
    const local = new Set((await this.h.exportMemories()).map((m) => m.path));
    const lp = (i: number) => `/memories/${PATHS[i]}`;
    const rp = (i: number) => `/${PATHS[i]}`;
    switch (s.t) {
      case 'localPut':
        await this.h.put(lp(s.i), `local ${n}`);
        return 'put';
      case 'remotePut':
        this.remote.put(rp(s.i), `remote ${n}`);
        return 'put';
      case 'localRemove':
        if (!local.has(lp(s.i))) return '';
        await this.h.execute({ command: 'delete', path: lp(s.i) });
        return 'removed';
      case 'remoteRemove':
        this.remote.remove(rp(s.i));
        return 'removed';
      case 'localRename':
        if (!local.has(lp(s.i)) || local.has(lp(s.j))) return '';
        await this.h.execute({ command: 'rename', old_path: lp(s.i), new_path: lp(s.j) });
        return 'renamed';
      case 'olderBuild':
        if (this.incremental) await this.forgetIndex(s.keep);
        return 'older';
      case 'remoteRename':
        if (this.remote.byPath(rp(s.i)) === undefined || this.remote.byPath(rp(s.j)) !== undefined) return '';
        this.remote.rename(rp(s.i), rp(s.j));
        return 'renamed';
      default:
        return '';
    }
  }

  /** What an older build leaves: lookup rows missing (or stale), and a cursor that does not vouch for them. */
  async forgetIndex(keep: number): Promise<void> {
    const m = this.memories();
    const prefix = `${this.remote.storeId}\0/memories\0`;
    const rows = await m.syncBases(`${prefix}%`);
    const drop = rows.filter((_, i) => i % keep !== 0).map((r) => ({ tag: r.tag, expect: r.value }));
    const tag = `${prefix}@`;
    const [cursor] = await m.syncBases(tag);
    const c = cursor === undefined ? null : decodeCursor(cursor.value, tag);
    const writes = c === null ? drop : [...drop, { tag, value: encodeCursor({ ...c, ix: false }), expect: cursor?.value }];
    expect((await m.syncApply([], writes)).status).toBe('applied');
  }

  memories(): NativeMemories {
    return new NativeMemories(storeNative(this.db), {
      scope: 'default',
      maxMemoryBytes: 1 << 20,
      createOverwrites: false,
      trackAccess: false,
      listingIndex: false,
    });
  }

  sync(): Promise<SyncReport> {
    return this.db.sync(this.client, { memoryStoreId: this.remote.storeId, incremental: this.incremental });
  }

  /** Both sides and the bases, with hosted ids (random per stand-in) as hosted paths. */
  async state() {
    const m = this.memories();
    const pathOf = new Map([...this.remote.memories.values()].map((x) => [x.id, x.path]));
    const bases = (await m.syncBases(`${this.remote.storeId}\0/memories\0`))
      .flatMap((r) => {
        const b = decodeBase(r.value, r.tag);
        return b === null ? [] : [[pathOf.get(b.id) ?? 'gone', b.rp, b.lp, b.sha].join(' ')];
      })
      .sort();
    const local = (await this.h.exportMemories()).map((x) => `${x.path}=${x.content}`).sort();
    const remote = [...this.remote.snapshot()].map(([p, c]) => `${p}=${c}`).sort();
    return { local, remote, bases };
  }
}

/** What a report says happened, in an order that does not depend on how it was planned. */
function outcome(r: SyncReport) {
  const line = (xs: string[]) => xs.sort();
  return {
    pushed: line(r.pushed.map((c) => `${c.path} ${c.remotePath} ${c.operation} ${c.contentSha256}`)),
    pulled: line(r.pulled.map((c) => `${c.path} ${c.remotePath} ${c.operation} ${c.contentSha256}`)),
    deleted: line(r.deleted.map((d) => `${d.side} ${d.path} ${d.remotePath}`)),
    conflicts: line(r.conflicts.map((c) => `${c.kind} ${c.path} ${c.winner}`)),
    skipped: line(r.skipped.map((s) => `${s.side} ${s.path} ${s.reason}`)),
  };
}

describe('incremental sync against full sync', () => {
  it('random local and hosted changes end in the same state, synced either way', async () => {
    let incrementalRounds = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 4, maxLength: 16 }), async (steps) => {
        const inc = await World.open(true);
        const full = await World.open(false);
        try {
          for (const [n, s] of [...steps, { t: 'sync' as const }, { t: 'sync' as const }].entries()) {
            if (s.t !== 'sync') {
              expect(await inc.apply(s, n)).toBe(await full.apply(s, n));
              continue;
            }
            const [a, b] = [await inc.sync(), await full.sync()];
            if (a.mode === 'incremental') incrementalRounds++;
            expect(b.mode).toBe('full');
            expect(outcome(a)).toEqual(outcome(b));
            expect(await inc.state()).toEqual(await full.state());
          }
        } finally {
          await inc.close();
          await full.close();
        }
      }),
      { numRuns: 25 },
    );
    // The property held over syncs that did run incrementally.
    expect(incrementalRounds).toBeGreaterThan(10);
  }, 300_000);
});
