// Property test of db.sync against a longhand model: random interleavings of local edits and
// deletes, hosted edits and deletes, and syncs (one process, in process; kills and two processes
// are in sync-crash.test.ts). After every sync: both sides hold exactly what the model says, the
// report lists exactly the conflicts the model expects, and every losing local edit is the
// content of the version the report names.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import Anthropic from '@anthropic-ai/sdk';
import { Rabosh, RaboshMemoryToolHandler } from '../index.js';
import { MemoryStoresStandIn } from './fixtures/memory-stores-stand-in.js';
import { makeTempDir, removeDir } from './tmp-dir.js';

const PATHS = ['a.md', 'b.md', 'd/c.md', 'd/e.md'];

type Step = { t: 'localPut' | 'remotePut'; i: number } | { t: 'localRemove' | 'remoteRemove'; i: number } | { t: 'sync' };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ t: fc.constantFrom('localPut' as const, 'remotePut' as const), i: fc.nat(PATHS.length - 1) }),
  fc.record({ t: fc.constantFrom('localRemove' as const, 'remoteRemove' as const), i: fc.nat(PATHS.length - 1) }),
  fc.constant({ t: 'sync' as const }),
);

/** The documented three-way rules, path by path, written out longhand (docs/guide/sync.md). */
class Model {
  local = new Map<string, string>();
  remote = new Map<string, string>();
  base = new Map<string, string>();

  /** Conflicts as [kind, path] and the local content each must keep. */
  sync(): { conflicts: Array<[string, string]>; kept: Map<string, string> } {
    const conflicts: Array<[string, string]> = [];
    const kept = new Map<string, string>();
    for (const p of new Set([...this.local.keys(), ...this.remote.keys(), ...this.base.keys()])) {
      const l = this.local.get(p);
      const r = this.remote.get(p);
      const b = this.base.get(p);
      let final: string | undefined;
      if (l === r) final = l;
      else if (b === undefined) {
        if (l === undefined) final = r;
        else if (r === undefined) final = l;
        else {
          conflicts.push(['create-create', p]);
          kept.set(p, l);
          final = r;
        }
      } else {
        const lc = l !== b;
        const rc = r !== b;
        if (!lc) final = r;
        else if (!rc) final = l;
        else if (l === undefined) {
          conflicts.push(['delete-edit', p]);
          final = r;
        } else if (r === undefined) {
          conflicts.push(['edit-delete', p]);
          final = l;
        } else {
          conflicts.push(['edit-edit', p]);
          kept.set(p, l);
          final = r;
        }
      }
      for (const m of [this.local, this.remote, this.base]) {
        if (final === undefined) m.delete(p);
        else m.set(p, final);
      }
    }
    return { conflicts, kept };
  }
}

describe('db.sync against a longhand model', () => {
  it('random interleavings converge to the model, every conflict reported, nothing lost', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 25 }), async (steps) => {
        const remote = await new MemoryStoresStandIn().start();
        const client = new Anthropic({ baseURL: remote.baseURL, apiKey: 'test' });
        const dir = makeTempDir('rabosh-sync-model');
        const db = await Rabosh.open(dir, { history: true });
        const h = new RaboshMemoryToolHandler(db);
        const model = new Model();
        try {
          let n = 0;
          for (const s of [...steps, { t: 'sync' } as Step]) {
            n++;
            if (s.t === 'sync') {
              const expected = model.sync();
              const report = await db.sync(client, { memoryStoreId: remote.storeId, deletes: { allowEmptySide: true, max: 100 } });
              const local = new Map((await h.exportMemories()).map((m) => [m.path.slice('/memories/'.length), m.content]));
              const hosted = new Map([...remote.snapshot()].map(([p, c]) => [p.slice(1), c]));
              expect(local).toEqual(model.local);
              expect(hosted).toEqual(model.remote);
              expect(report.skipped).toEqual([]);
              const got = report.conflicts.map((c) => [c.kind, c.path.slice('/memories/'.length)]).sort();
              expect(got).toEqual(expected.conflicts.sort());
              for (const c of report.conflicts) {
                const want = expected.kept.get(c.path.slice('/memories/'.length));
                if (want === undefined) continue;
                expect(c.kept?.side).toBe('local');
                const v = await h.version((c.kept as { versionId: string }).versionId);
                expect(v?.content).toBe(want);
              }
              continue;
            }
            const p = PATHS[s.i] as string;
            const text = `${s.t} ${n}`;
            if (s.t === 'localPut') {
              await h.put(`/memories/${p}`, text);
              model.local.set(p, text);
            } else if (s.t === 'localRemove') {
              await h.remove(`/memories/${p}`);
              model.local.delete(p);
            } else if (s.t === 'remotePut') {
              remote.put(`/${p}`, text);
              model.remote.set(p, text);
            } else {
              remote.remove(`/${p}`);
              model.remote.delete(p);
            }
          }
        } finally {
          await db.close();
          await remote.close();
          removeDir(dir);
        }
      }),
      { numRuns: 120 },
    );
  });
});
