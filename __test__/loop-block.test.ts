// The bench's JS-thread busy-turn measure (bench/loop-block.ts) must see what it claims to: a turn
// that burns CPU and a turn that sleeps off-CPU, under every supported Node line (its FFI package
// ships prebuilt binaries per platform and must load in each), and say n/a rather than a number
// off Linux. Only lower bounds are asserted: a planted 20 ms can only look longer on a busy machine.
import { execFileSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Blocks } from '../bench/loop-block.js';
import { SUPPORTED_NODE_MAJORS, nodeBinary } from './node-binaries.js';

const root = resolve(import.meta.dirname, '..');
const linux = process.platform === 'linux';

function plants(node: string): { plantMs: number; spin: Blocks; sleep: Blocks; quiet: Blocks } {
  const out = execFileSync(node, ['--import', 'tsx', join(root, '__test__', 'fixtures', 'loop-block-plants.ts')], {
    cwd: root,
    encoding: 'utf8',
  });
  return JSON.parse(out);
}

describe('JS-thread busy turns (bench/loop-block.ts)', () => {
  const nodes: Array<[string, () => string]> = [
    [`this Node (${process.version})`, () => process.execPath],
    ...SUPPORTED_NODE_MAJORS.map((major): [string, () => string] => [`Node ${major}`, () => nodeBinary(major)]),
  ];
  for (const [name, node] of nodes) {
    it(`catches a planted CPU turn and a planted sleeping turn under ${name}`, () => {
      const { plantMs, spin, sleep, quiet } = plants(node());
      // The wall-time measure sees both plants everywhere.
      expect(spin.wallMs).toBeGreaterThanOrEqual(plantMs);
      expect(sleep.wallMs).toBeGreaterThanOrEqual(plantMs);
      if (!linux) {
        for (const b of [spin, sleep, quiet]) expect(b.busyMs).toBeNull();
        return;
      }
      // CPU burnt in one turn is counted as CPU.
      expect(spin.busyMs).toBeGreaterThanOrEqual(plantMs);
      // A turn asleep burns almost no CPU: only the voluntary-switch rule makes it count.
      expect(sleep.blockedTurns).toBeGreaterThanOrEqual(1);
      expect(sleep.busiestBlocked).toBe(true);
      expect(sleep.busyMs).toBeGreaterThanOrEqual(plantMs);
      for (const b of [spin, sleep, quiet]) expect(b.turns).toBeGreaterThan(2);
    });
  }
});
