// formatSize in plain numbers must print exactly what the contract's integer arithmetic prints
// (largest unit not above, one decimal rounded half to even on the exact quotient). The
// reference here is written independently, in BigInt.
import fc from 'fast-check';
import { expect, it } from 'vitest';
import { formatSize } from '../src/strings.js';

function reference(bytes: number): string {
  const units = ['B', 'K', 'M', 'G'];
  const v = BigInt(bytes);
  let exp = 0;
  while (exp < 3 && v >= 1024n ** BigInt(exp + 1)) exp++;
  const unit = 1024n ** BigInt(exp);
  if (v % unit === 0n) return `${v / unit}${units[exp]}`;
  let tenths = (v * 10n) / unit;
  const twice = ((v * 10n) % unit) * 2n;
  if (twice > unit || (twice === unit && tenths % 2n === 1n)) tenths += 1n;
  return `${tenths / 10n}.${tenths % 10n}${units[exp]}`;
}

it('agrees with exact integer arithmetic at the edges', () => {
  const edges = [0, 1, 1023, 1024, 1025, 1280, 1331, 1536, 1_048_575, 1_048_576, 1_073_741_823];
  const more = [1_073_741_824, 1_610_612_736, 1_181_116_006, 2 ** 40 + 51, 2 ** 52 + 3, Number.MAX_SAFE_INTEGER];
  for (const b of [...edges, ...more]) expect(formatSize(b), String(b)).toBe(reference(b));
  expect(formatSize(1280)).toBe('1.2K');
  expect(formatSize(1_048_575)).toBe('1024.0K');
});

it('agrees with exact integer arithmetic on any safe byte count, and on ties', () => {
  fc.assert(
    fc.property(fc.maxSafeNat(), (b) => formatSize(b) === reference(b)),
    { numRuns: 20_000 },
  );
  // Exact ties (x.x5 of a unit) are k units plus a quarter or three quarters: only half-to-even
  // decides them (1.25K prints 1.2K, 1.75K prints 1.8K).
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 1023 }), fc.integer({ min: 1, max: 3 }), fc.boolean(), (k, exp, three) => {
      const unit = 1024 ** exp;
      const b = k * unit + (three ? 3 : 1) * (unit / 4);
      return formatSize(b) === reference(b);
    }),
  );
});

it('refuses what is not a byte count', () => {
  for (const bad of [-1, 1.5, Number.NaN, 2 ** 53]) expect(() => formatSize(bad)).toThrow(RangeError);
});
