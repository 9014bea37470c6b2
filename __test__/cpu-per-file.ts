// With RABOSH_TEST_CPU_LOG set (scripts/test.mjs sets it), each test file appends the CPU seconds
// it cost to that file: its own process and every child process it started and waited for
// (Linux's /proc/self/stat), so a slow CI run can say which files its CPU went to.
import { appendFileSync, readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { afterAll, expect } from 'vitest';

const log = process.env['RABOSH_TEST_CPU_LOG'];

/** User + system seconds of this process and its waited-for children; undefined off Linux. */
function cpuSeconds(): number | undefined {
  let stat: string;
  try {
    stat = readFileSync('/proc/self/stat', 'utf8');
  } catch {
    return undefined;
  }
  // Fields after the command name (which may hold spaces): utime is the 12th, then stime,
  // cutime, cstime, in clock ticks (100 a second on Linux).
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return fields.slice(11, 15).reduce((sum, ticks) => sum + Number(ticks), 0) / 100;
}

if (log) {
  // Taken when the file's process starts on it, before the file itself is imported.
  const start = cpuSeconds();
  afterAll(() => {
    const end = cpuSeconds();
    const file = expect.getState().testPath;
    if (start === undefined || end === undefined || !file) return;
    appendFileSync(log, `${(end - start).toFixed(1)} ${relative(process.cwd(), file)}\n`);
  });
}
