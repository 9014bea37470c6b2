// What bench/callgrind.ts runs: one run of a script under callgrind,
// with a dump at each getppid() marker the script calls, and the instruction total of each dump.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Total instructions of one callgrind dump file. */
function totalIr(file: string): number {
  const m = /^(?:totals|summary): (\d+)/m.exec(readFileSync(file, 'utf8'));
  if (!m) throw new Error(`no totals in ${file}`);
  return Number(m[1]);
}

export interface CallgrindRun {
  /** The script's standard output. */
  stdout: string;
  /** Instructions of each numbered dump, in order: what ran since the dump before. */
  dumps: number[];
}

/**
 * Runs `exe --import tsx script ...args` under callgrind, dumping into the new directory `out`
 * before each getppid(); `what` names the run in an error. The loader calls getppid too, early:
 * a script's own markers make the last numbered dumps.
 */
export function runCallgrind(what: string, out: string, exe: string, script: string, args: string[], cwd?: string): CallgrindRun {
  mkdirSync(out);
  const r = spawnSync(
    'valgrind',
    [
      '--tool=callgrind',
      '--dump-before=getppid',
      `--callgrind-out-file=${join(out, 'cg.out')}`,
      exe,
      // No background compiler or GC threads: their work would land in whichever dump is open.
      '--single-threaded',
      '--import',
      'tsx',
      script,
      ...args,
    ],
    { cwd, encoding: 'utf8', maxBuffer: 64 << 20 },
  );
  if (r.error) throw r.error;
  if (r.status !== 0) throw new Error(`callgrind run of ${what} exited ${r.status}: ${r.stderr.slice(-2000)}`);
  const dumps = readdirSync(out)
    .filter((f) => /^cg\.out\.\d+$/.test(f))
    .sort((a, b) => Number(a.split('.').pop()) - Number(b.split('.').pop()))
    .map((f) => totalIr(join(out, f)));
  return { stdout: r.stdout, dumps };
}
