// How long the event loop went without turning while some work ran, measured two ways by one
// chain of setImmediate callbacks. A gap between two callbacks is one turn of the loop: it holds
// every synchronous call, every native completion and every microtask that ran in that turn —
// what a server's other requests would have waited. Sub-millisecond, unlike
// monitorEventLoopDelay's 1 ms timer resolution.
//
// Wall time (`wallMs`): the largest gap. On a loaded machine a gap also holds time the JS thread
// was runnable but not running (other processes, hypervisor steal), so on a shared 2-core VM even
// 300 ms of doing nothing shows gaps of 2–7 ms; the bench reports that idle figure beside it.
//
// Busy time (`busyMs`, Linux only): the largest turn counted in what the JS thread itself did.
// Each callback reads the thread's CPU clock, clock_gettime(CLOCK_THREAD_CPUTIME_ID), which is
// nanosecond-precise (the kernel brings the running task's runtime up to date when asked; /proc's
// CPU times and getrusage's are not) and leaves out time spent waiting for a core and hypervisor
// steal (this kernel accounts steal: CONFIG_PARAVIRT_TIME_ACCOUNTING). CPU time alone would hide
// a turn in which the thread blocked off-CPU — on a lock, a GC helper, a page read from disk — so
// each callback also reads the thread's count of voluntary context switches
// (getrusage(RUSAGE_THREAD).ru_nvcsw; a thread switches voluntarily only when it sleeps). While
// the chain runs there is always an immediate pending, so libuv polls without waiting and the loop
// itself never sleeps in a turn: a turn with a voluntary switch blocked on something, and its wall
// time is counted instead of its CPU time. So a block never hides, and load moves the figure only
// through such turns. They are not rare: measured on the loaded development VM with perf's
// sched_switch stacks, V8 blocks the JS thread on its own helper threads — a GC safepoint waiting
// for them (Heap::PerformGarbageCollection → IsolateSafepoint::EnterLocalSafepointScope), glibc's
// pthread_cond_signal waiting for a woken compile worker while queueing an optimising compile
// (OptimizingCompileDispatcher::QueueForOptimization), mprotect of new JIT code space
// (v8::base::OS::SetPermissions) — for as long as those helpers wait for a core: tens of ms at
// load 10+ (no quiet machine was at hand to measure the other end). (Subtracting the thread's own
// run-queue wait from such turns was tried and dropped: a timed wait woken early to serve an
// interrupt spends part of its span runnable, so a planted 20 ms Atomics.wait then showed as 6 ms.)
//
// Both calls go through koffi (an FFI package with prebuilt binaries, a devDependency): Node 20
// has no per-thread CPU clock, and the process.threadCpuUsage of later lines returns getrusage's
// per-thread times, which the kernel splits from tick samples: measured here, they move in steps
// of up to 4 ms. Elsewhere than Linux the busy figure is null ("n/a"), never a stand-in number.

import { createRequire } from 'node:module';
import { nowMs } from './stats.js';

/** The calling thread's own clocks; every read must happen on the thread being measured. */
interface ThreadProbe {
  /** CPU time this thread has run, in milliseconds. */
  cpuMs(): number;
  /** How many times this thread gave up its core to wait for something. */
  voluntarySwitches(): number;
}

// Linux's values (uapi/linux/time.h, uapi/linux/resource.h); the same on every architecture.
const CLOCK_THREAD_CPUTIME_ID = 3;
const RUSAGE_THREAD = 1;

/** Null when the busy-turn measure works here, else why it does not. */
export function busyTurnUnavailable(): string | null {
  return process.platform === 'linux' ? null : `needs Linux's per-thread CPU clock and context-switch count; this is ${process.platform}`;
}

let probe: ThreadProbe | null | undefined;

function threadProbe(): ThreadProbe | null {
  if (probe !== undefined) return probe;
  if (busyTurnUnavailable()) {
    probe = null;
    return probe;
  }
  // Loaded only on Linux, and only by the bench: the library itself never needs it.
  const koffi = createRequire(import.meta.url)('koffi') as typeof import('koffi');
  const libc = koffi.load(null); // the symbols Node itself links: glibc or musl alike
  const long = koffi.sizeof('long');
  if (long !== 8) throw new Error(`the busy-turn probe reads 64-bit longs; this libc's long is ${long} bytes`);
  const timespec = koffi.struct({ tv_sec: 'long', tv_nsec: 'long' });
  const timeval = koffi.struct({ tv_sec: 'long', tv_usec: 'long' });
  const longs = [
    'maxrss',
    'ixrss',
    'idrss',
    'isrss',
    'minflt',
    'majflt',
    'nswap',
    'inblock',
    'oublock',
    'msgsnd',
    'msgrcv',
    'nsignals',
    'nvcsw',
    'nivcsw',
  ];
  const rusage = koffi.struct({ ru_utime: timeval, ru_stime: timeval, ...Object.fromEntries(longs.map((f) => [`ru_${f}`, 'long'])) });
  const clockGettime = libc.func('int clock_gettime(int clk, void *ts)');
  const getrusage = libc.func('int getrusage(int who, void *usage)');
  // Filled in place by the kernel: no allocation per read.
  const ts = new BigInt64Array(koffi.sizeof(timespec) / 8);
  const nsecAt = koffi.offsetof(timespec, 'tv_nsec') / 8;
  const ru = new BigInt64Array(koffi.sizeof(rusage) / 8);
  const nvcswAt = koffi.offsetof(rusage, 'ru_nvcsw') / 8;
  const check = (rc: number, what: string) => {
    if (rc !== 0) throw new Error(`${what} failed (returned ${rc})`);
  };
  probe = {
    cpuMs() {
      check(clockGettime(CLOCK_THREAD_CPUTIME_ID, ts) as number, 'clock_gettime(CLOCK_THREAD_CPUTIME_ID)');
      return Number(ts[0]!) * 1e3 + Number(ts[nsecAt]!) / 1e6;
    },
    voluntarySwitches() {
      check(getrusage(RUSAGE_THREAD, ru) as number, 'getrusage(RUSAGE_THREAD)');
      return Number(ru[nvcswAt]!);
    },
  };
  return probe;
}

/** This thread's CPU time in ms (a plant in a test spins on it); null where unavailable. */
export function threadCpuMs(): number | null {
  return threadProbe()?.cpuMs() ?? null;
}

/** Loads the probe ahead, so loading koffi is not counted in the first stretch measured. */
export function preloadBusyProbe(): void {
  threadProbe();
}

export interface Blocks {
  /** The longest wall-time gap between two turns, ms. */
  wallMs: number;
  /** The longest turn in JS-thread busy time (CPU, or wall when it blocked), ms; null off Linux. */
  busyMs: number | null;
  /** Turns seen, and how many of them blocked off-CPU (counted in wall time). */
  turns: number;
  blockedTurns: number;
  /** The longest busy turn: whether it blocked (then it counts wall time, not CPU), its CPU and wall, ms. */
  busiestBlocked: boolean;
  busiestCpuMs: number;
  busiestWallMs: number;
}

export interface BlockSampler {
  /** Stops the chain; what it saw. */
  stop(): Promise<Blocks>;
}

export function sampleBlocks(): BlockSampler {
  const thread = threadProbe();
  let last = nowMs();
  let lastCpu = thread?.cpuMs() ?? 0;
  let lastSwitches = thread?.voluntarySwitches() ?? 0;
  const seen: Blocks = {
    wallMs: 0,
    busyMs: thread ? 0 : null,
    turns: 0,
    blockedTurns: 0,
    busiestBlocked: false,
    busiestCpuMs: 0,
    busiestWallMs: 0,
  };
  let running = true;
  const tick = () => {
    const now = nowMs();
    const wall = now - last;
    seen.wallMs = Math.max(seen.wallMs, wall);
    seen.turns++;
    last = now;
    if (thread) {
      const cpu = thread.cpuMs();
      const switches = thread.voluntarySwitches();
      const cpuUsed = cpu - lastCpu;
      let busy = cpuUsed;
      const blocked = switches !== lastSwitches;
      if (blocked) {
        seen.blockedTurns++;
        // Never below the CPU it did: the CPU clock is read a moment after the wall clock.
        busy = Math.max(busy, wall);
      }
      if (busy > seen.busyMs!) {
        seen.busyMs = busy;
        seen.busiestBlocked = blocked;
        seen.busiestCpuMs = cpuUsed;
        seen.busiestWallMs = wall;
      }
      lastCpu = cpu;
      lastSwitches = switches;
    }
    if (running) setImmediate(tick);
  };
  setImmediate(tick);
  return {
    async stop() {
      await new Promise<void>((resolve) => setImmediate(resolve));
      running = false;
      return { ...seen };
    },
  };
}

/** Runs `op` under a sampler: its result and the longest block while it ran. */
export async function longestBlock<T>(op: () => Promise<T>): Promise<{ value: T; blockMs: number; busyMs: number | null; blocks: Blocks }> {
  const sampler = sampleBlocks();
  const value = await op();
  const blocks = await sampler.stop();
  return { value, blockMs: blocks.wallMs, busyMs: blocks.busyMs, blocks };
}
