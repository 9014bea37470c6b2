// The CPU a PostgreSQL server on this machine has used, for the rows that charge work per
// create (bench/postgres.ts's one-row run): every process of the
// cluster, so the WAL writer and autovacuum count as well as the backends.
import { readFileSync, readdirSync } from 'node:fs';

/** Milliseconds of CPU of the cluster of backend `pid` (its postmaster's live children and the
 * reaped ones), or null when /proc does not show it (a server on another machine). */
export function serverCpuMs(pid: number): number | null {
  try {
    // The fields after the command's closing parenthesis: [1] ppid, [11] utime, [12] stime,
    // [13] cutime, [14] cstime, in clock ticks (USER_HZ, 100 on Linux).
    const stat = (p: number | string) => {
      const s = readFileSync(`/proc/${p}/stat`, 'utf8');
      return s.slice(s.lastIndexOf(')') + 2).split(' ');
    };
    const postmaster = Number(stat(pid)[1]);
    const own = stat(postmaster);
    let ticks = Number(own[13]) + Number(own[14]);
    for (const p of readdirSync('/proc')) {
      if (!/^\d+$/.test(p)) continue;
      try {
        const f = stat(p);
        if (Number(f[1]) === postmaster) ticks += Number(f[11]) + Number(f[12]);
      } catch {
        // ended meanwhile
      }
    }
    return ticks * 10;
  } catch {
    return null;
  }
}
