// str_replace's answer is worded by the facade (src/strings.ts), its snippet numbered exactly as a
// file view numbers lines (crates/rabosh-node/src/render/file_view.rs): right-aligned in six
// columns, wider past 999,999, then a tab. The whole answer through a handler is in strings.test.ts.
import { describe, expect, it } from 'vitest';

import { edited } from '../src/strings.js';

const HEADER = 'The memory file has been edited. Here is the snippet showing the change (with line numbers):';

describe("str_replace's answer", () => {
  it('numbers the snippet from its first line', () => {
    expect(edited(9, ['a', '', 'b\tc'])).toBe(`${HEADER}\n     9\ta\n    10\t\n    11\tb\tc`);
  });

  it('is the header alone for an empty snippet', () => {
    expect(edited(1, [])).toBe(HEADER);
  });

  it('widens the column past six digits, as a file view does', () => {
    expect(edited(999_999, ['x', 'y'])).toBe(`${HEADER}\n999999\tx\n1000000\ty`);
  });
});
