// Issue 9, case 10: a thousand outstanding views of a 20,000-entry directory used to hold every
// answer's raw listing at once and build them all on the JS thread in one turn (measured on the
// code before: 16.7 s and 2.3 GB in the issue; 287 s and +3.7 GB on this machine under load 10,
// with the very harness below: `tsx bench/many-views.ts <old index.ts>`). These are resource bounds
// with wide margins, not timings of the code: after the fix the same run measured 0.08-0.7 s and
// +85-106 MiB at the same load.
import { expect, it } from 'vitest';
import { manyViews, type RaboshModule } from '../bench/many-views.js';
import * as ours from '../index.js';

const MAX_BLOCK_MS = 2_000;
const MAX_RSS_GROWTH_MIB = 512;

it('1,000 concurrent views of a 20,000-entry directory hold and block a bounded amount', async () => {
  const r = await manyViews(ours as unknown as RaboshModule, 20_000, 1_000);
  expect([...r.lengths], 'every view listed the whole directory').toHaveLength(1);
  expect([...r.lengths][0]).toBeGreaterThan(20_000 * 25);
  expect(r.maxBlockMs, 'longest event-loop block (ms)').toBeLessThan(MAX_BLOCK_MS);
  expect(r.rssGrowthMiB, 'peak resident memory added (MiB)').toBeLessThan(MAX_RSS_GROWTH_MIB);
});
