// Reading a child process's output a line at a time, as the crash suites do to decide when to
// kill it: a line split across chunks arrives whole, and a last line without a newline never.
import type { Readable } from 'node:stream';

/** Calls `onLine` with each whole line `stream` writes, in order. */
export function eachLine(stream: Readable, onLine: (line: string) => void): void {
  let partial = '';
  stream.on('data', (d: Buffer) => {
    partial += d.toString();
    for (let nl = partial.indexOf('\n'); nl >= 0; nl = partial.indexOf('\n')) {
      const line = partial.slice(0, nl);
      partial = partial.slice(nl + 1);
      onLine(line);
    }
  });
}
