// A sync op's kind crosses the binding as a closed union, like every other outcome there: the
// declaration names exactly the three kinds (so the compiler refuses any other, checked by
// `npm run typecheck`).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { NativeSyncOp } from '../binding.cjs';

describe('NativeSyncOp.kind', () => {
  it("is the union of the three kinds in the binding's declaration", () => {
    expectTypeOf<NativeSyncOp['kind']>().toEqualTypeOf<'put' | 'remove' | 'move'>();
    const dts = readFileSync(fileURLToPath(new URL('../binding.d.cts', import.meta.url)), 'utf8');
    expect(/export interface NativeSyncOp \{\n {2}kind: NativeSyncOpKind\n/.test(dts)).toBe(true);
    expect(dts).toContain("export type NativeSyncOpKind = 'put' | 'remove' | 'move'\n");
  });
});
