// Kills and two syncing processes: real child processes (fixtures/sync-child.mjs) sync one store
// with the stand-in at once, one of them SIGKILLed at a random moment; then a sync in this
// process. Whatever the interleaving: both sides converge to what one sync of the model gives,
// nothing is applied twice (no duplicate hosted memories), every losing local edit is still
// in local history, and every conflict the model predicts is reported exactly once: by the child
// that resolved it if it finished, else (carried over) by a later sync.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import Anthropic from '@anthropic-ai/sdk';
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Rabosh, RaboshMemoryToolHandler, type SyncReport, type SyncSide } from '../index.js';
import { MemoryStoresStandIn } from './fixtures/memory-stores-stand-in.js';
import { makeTempDir, removeDir } from './tmp-dir.js';

const CHILD = fileURLToPath(new URL('./fixtures/sync-child.mjs', import.meta.url));
const N = 24;

/** The report a child printed when its sync completed; null when it was killed first. */
function childReport(out: string): SyncReport | null {
  const line = out.split('\n').find((l) => l.startsWith('DONE '));
  return line === undefined ? null : (JSON.parse(line.slice('DONE '.length)) as SyncReport);
}

function child(
  dir: string,
  remote: MemoryStoresStandIn,
  policy: SyncSide,
): { proc: ChildProcess; done: Promise<string>; ready: Promise<void> } {
  const proc = spawn(process.execPath, [CHILD, dir, remote.baseURL, remote.storeId, policy], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  let onReady = () => {};
  const ready = new Promise<void>((resolve) => (onReady = resolve));
  proc.stdout?.on('data', (d: Buffer) => {
    out += d.toString();
    if (out.includes('READY')) onReady();
  });
  proc.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  const done = new Promise<string>((resolve, reject) =>
    proc.on('exit', (code, signal) =>
      code === 0 || signal === 'SIGKILL' ? resolve(out) : reject(new Error(`child exited ${code}: ${err}`)),
    ),
  );
  void done.finally(onReady);
  return { proc, done, ready };
}

describe('sync under SIGKILL and two processes', () => {
  it('converges to the model with nothing lost or doubled', async () => {
    // How the killed child ended: before its sync started, during it, or after it finished.
    const ends = { before: 0, during: 0, after: 0 };
    // Conflicts the sync after the kill reported for a killed child (they were lost before).
    let carriedOver = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom('local', 'remote', 'both', 'none', 'localDelete', 'remoteDelete'), { minLength: N, maxLength: N }),
        // The kill lands at the child's n-th request to the stand-in (0: as soon as it is ready),
        // then a few milliseconds on: counted in requests, not time, so that a quiet machine and a
        // busy one both put most kills inside the sync.
        fc.integer({ min: 0, max: 24 }),
        fc.integer({ min: 0, max: 10 }),
        fc.boolean(),
        // Which side wins a conflict: 'local' makes its resolution a hosted write.
        fc.constantFrom<SyncSide>('remote', 'local'),
        async (edits, killAtRequest, jitterMs, two, policy) => {
          const remote = await new MemoryStoresStandIn().start();
          const client = new Anthropic({ baseURL: remote.baseURL, apiKey: 'test' });
          const dir = makeTempDir('rabosh-sync-crash');
          try {
            // A synced base, then edits on both sides (and new memories on both).
            let db = await Rabosh.open(dir, { history: true });
            let h = new RaboshMemoryToolHandler(db);
            for (let i = 0; i < N; i++) await h.put(`/memories/m${i}.md`, `base ${i}`);
            await db.sync(client, { memoryStoreId: remote.storeId });
            const want = new Map<string, string>();
            const keptLocal = new Map<string, string>();
            const keptRemote = new Map<string, string>();
            for (const [i, e] of edits.entries()) {
              const p = `m${i}.md`;
              let l: string | undefined = `base ${i}`;
              let r: string | undefined = l;
              if (e === 'local' || e === 'both') {
                l = `local ${i}`;
                await h.put(`/memories/${p}`, l);
              }
              if (e === 'remote' || e === 'both') {
                r = `remote ${i}`;
                remote.put(`/${p}`, r);
              }
              if (e === 'localDelete') {
                await h.remove(`/memories/${p}`);
                l = undefined;
              }
              if (e === 'remoteDelete') {
                remote.remove(`/${p}`);
                r = undefined;
              }
              if (e === 'both') (policy === 'remote' ? keptLocal : keptRemote).set(p, (policy === 'remote' ? l : r) as string);
              const final =
                e === 'both'
                  ? policy === 'remote'
                    ? r
                    : l
                  : e === 'localDelete' || e === 'remoteDelete'
                    ? undefined
                    : l !== `base ${i}`
                      ? l
                      : r;
              if (final !== undefined) want.set(p, final);
            }
            await h.put('/memories/new-local.md', 'new local');
            remote.put('/new-remote.md', 'new remote');
            want.set('new-local.md', 'new local');
            want.set('new-remote.md', 'new remote');
            await db.close();

            // Answers take a while, so that a kill lands while a request is in flight.
            remote.delayMs = 15;
            const a = child(dir, remote, policy);
            const b = two ? child(dir, remote, policy) : null;
            let timer: ReturnType<typeof setTimeout> | undefined;
            const kill = () => (timer = setTimeout(() => a.proc.kill('SIGKILL'), jitterMs));
            const before = remote.requests;
            if (killAtRequest === 0) void a.ready.then(kill);
            // With two children the count is theirs together: still a moment inside a sync.
            else remote.onRequest = (n) => n - before === killAtRequest && kill();
            const [outA, outB] = await Promise.all([a.done, b?.done]);
            clearTimeout(timer);
            remote.onRequest = null;
            ends[!outA.includes('READY') ? 'before' : outA.includes('DONE') ? 'after' : 'during']++;
            remote.delayMs = 0;

            db = await Rabosh.open(dir, { history: true });
            h = new RaboshMemoryToolHandler(db);
            try {
              // The child's delete options: under the default cap (max(10, ¼)) a run with more than
              // ten deletions on one side rightly takes two syncs, which is not what this tests.
              const opts = { memoryStoreId: remote.storeId, deletes: { allowEmptySide: true, max: 1000 }, onConflict: policy };
              const after = await db.sync(client, opts);
              const last = await db.sync(client, opts);
              // Every edit-edit conflict (the 'both' edits) reported once, wherever: a report a
              // killed child never returned is carried over by the next one that completes.
              const reports = [childReport(outA), outB === undefined ? null : childReport(outB), after].filter((r) => r !== null);
              const reported = reports.flatMap((r) => r.conflicts.map((c) => `${c.kind} ${c.path.slice('/memories/'.length)}`)).sort();
              expect(reported).toEqual([...keptLocal.keys(), ...keptRemote.keys()].map((p) => `edit-edit ${p}`).sort());
              const carried = after.conflicts.filter((c) => c.carriedOver).length;
              carriedOver += carried;
              expect([last.pushed, last.pulled, last.deleted, last.conflicts, last.skipped].flat()).toEqual([]);
              const local = new Map((await h.exportMemories()).map((m) => [m.path.slice('/memories/'.length), m.content]));
              const hosted = new Map([...remote.snapshot()].map(([p, c]) => [p.slice(1), c]));
              expect(hosted.size).toBe(remote.memories.size); // no two hosted memories at one path
              expect(local).toEqual(want);
              expect(hosted).toEqual(want);
              for (const [p, text] of keptLocal) {
                const versions = await h.versions({ path: `/memories/${p}`, limit: 100 });
                const contents = await Promise.all(versions.data.map(async (v) => (await h.version(v.id))?.content));
                expect(contents).toContain(text);
              }
              // The hosted loser stays a hosted version.
              for (const [p, text] of keptRemote) {
                const id = remote.byPath(`/${p}`)?.id;
                expect(remote.versions.filter((v) => v.memoryId === id).map((v) => v.content)).toContain(text);
              }
            } finally {
              await db.close();
            }
          } finally {
            await remote.close();
            removeDir(dir);
          }
        },
      ),
      { numRuns: 16 },
    );
    // The kills must land inside syncs, or this would test nothing.
    expect(ends.during).toBeGreaterThan(0);
    console.log('sync-crash: killed child', ends, 'conflicts carried over', carriedOver);
  });
});
