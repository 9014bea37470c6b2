// Linux arm64 (glibc): the addon `npm run build:targets` cross-built, loaded by the official arm64
// Node 22 under qemu-user, running the repository's own suites (CROSS_SUITES).
import { describe, it } from 'vitest';
import { runSuitesUnder } from './run-suites.js';

describe('linux-arm64-gnu under qemu-user with the official arm64 Node 22', () => {
  it('passes the contract, handler, path, shared-store, multi-process and crash suites', async () => {
    // Under qemu every Node start costs seconds of emulated CPU, and the crash suite starts one
    // per round: 5 rounds each here (20 natively and under Wine) keep it a real kill mid-write
    // on this build without making it the longest step of CI; timing is explored natively.
    await runSuitesUnder('linux-arm64', { RABOSH_CRASH_ROUNDS: '5' });
  });
});
