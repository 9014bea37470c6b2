// What the surfaces run reads of a process it started, and of the machine.

import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';

/** Fields of /proc/<pid>/status in MiB (VmRSS: now, RssAnon: its own, VmHWM: the peak); {} off Linux. */
export function rss(pid: number): { rssMib?: number; anonMib?: number; peakMib?: number } {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const mib = (field: string) => {
      const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
      return m ? Number(m[1]) / 1024 : undefined;
    };
    const out: { rssMib?: number; anonMib?: number; peakMib?: number } = {};
    const [now, anon, peak] = [mib('VmRSS'), mib('RssAnon'), mib('VmHWM')];
    if (now !== undefined) out.rssMib = now;
    if (anon !== undefined) out.anonMib = anon;
    if (peak !== undefined) out.peakMib = peak;
    return out;
  } catch {
    return {};
  }
}

/** The load average, 1 / 5 / 15 minutes. */
export const load = () =>
  loadavg()
    .map((x) => x.toFixed(1))
    .join(' / ');
