// Fault codes are written once, in Rust (crates/rabosh-node/src/fault_codes.rs and the
// PostgreSQL kinds' codes); the facade's code types in src/errors.ts must name exactly those,
// plus the codes the facade raises itself (a host edit's failed precondition, an outcome the
// binding returns, not a fault; and db.sync's unusable hosted answer, which never crosses the binding).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { faultCodes } from '../binding.cjs';

const FACADE_ONLY = ['RABOSH_PRECONDITION_FAILED', 'RABOSH_HOSTED_ANSWER'];

/** The string literals of `export type <name> = | '…' | …;` in src/errors.ts. */
function unionOf(source: string, name: string): string[] {
  const m = new RegExp(`export type ${name} =([^;]*);`).exec(source);
  if (m === null) throw new Error(`src/errors.ts declares no type ${name}`);
  return [...m[1]!.matchAll(/'(RABOSH_[A-Z_]+)'/g)].map((x) => x[1]!);
}

describe('fault codes', () => {
  it("src/errors.ts's code types name exactly the codes the binding raises", () => {
    const source = readFileSync(fileURLToPath(new URL('../src/errors.ts', import.meta.url)), 'utf8');
    const facade = [...unionOf(source, 'RaboshErrorCode'), ...unionOf(source, 'PostgresErrorCode')];
    expect(new Set(facade).size).toBe(facade.length);
    expect([...facade].sort()).toEqual([...faultCodes(), ...FACADE_ONLY].sort());
  });
});
