// The longest time the event loop went without turning, while some work ran: a chain of
// setImmediate callbacks records the largest gap between two of them. A gap is one turn of the
// loop, so it holds every synchronous call, every native completion and every microtask that
// ran in that turn — what a server's other requests would have waited. Sub-millisecond, unlike
// monitorEventLoopDelay's 1 ms timer resolution.
//
// It is wall time: on a loaded machine a gap also holds time the JS thread was runnable but not
// running, so the bench reports the same figure over an idle stretch beside it (the noise floor).
// Per-thread CPU time would not help: both /proc's schedstat and process.threadCpuUsage move in
// scheduler ticks (4 ms here).

import { nowMs } from './stats.js';

export interface BlockSampler {
  /** Stops the chain; the longest gap seen, in milliseconds. */
  stop(): Promise<number>;
}

export function sampleBlocks(): BlockSampler {
  let last = nowMs();
  let longest = 0;
  let running = true;
  const tick = () => {
    const now = nowMs();
    longest = Math.max(longest, now - last);
    last = now;
    if (running) setImmediate(tick);
  };
  setImmediate(tick);
  return {
    async stop() {
      await new Promise<void>((resolve) => setImmediate(resolve));
      running = false;
      return longest;
    },
  };
}

/** Runs `op` under a sampler: its result and the longest block while it ran. */
export async function longestBlock<T>(op: () => Promise<T>): Promise<{ value: T; blockMs: number }> {
  const sampler = sampleBlocks();
  const value = await op();
  return { value, blockMs: await sampler.stop() };
}
