/** How a view's native outcome reads to the model: shared by the live handler and `at()` views. */

import type { NativeView } from './native.js';
import * as S from './strings.js';
import type { ToolOutput } from './tool-output.js';

/** A `view_range` the store can apply: two integers, else none (the whole file). */
export function viewRange(r: unknown): number[] | null {
  return Array.isArray(r) && r.length === 2 && Number.isInteger(r[0]) && Number.isInteger(r[1]) ? [r[0], r[1]] : null;
}

/** A view's answer; every variant of the union is handled (the compiler checks it). */
export function viewed(path: string, o: NativeView): ToolOutput {
  switch (o.type) {
    case 'File':
    case 'Dir':
      return { text: o.text, isError: false };
    case 'TooManyLines':
      return { text: S.viewTooManyLines(path), isError: true };
    case 'NotFound':
      return { text: S.viewNotFound(path), isError: true };
    case 'NotRecorded':
      // Only a view of the past answers this; its caller words it (it knows the instant).
      return { text: `Error: history did not record ${path} at that instant`, isError: true };
  }
}
