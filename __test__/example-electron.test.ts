// The Electron example's round trip (examples/electron/round-trip.cjs), which the CI job runs in
// Electron's main process and in a utilityProcess, run here under Node: the part that needs no
// Electron is proven on every machine, and its check really refuses a wrong answer.
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeTempDir, removeDir } from './tmp-dir.js';

const { roundTrip, check } = createRequire(import.meta.url)('../examples/electron/round-trip.cjs') as {
  roundTrip(dir: string, who: string): Promise<{ created: string; viewed: string }>;
  check(got: { created: string; viewed: string }, who: string): void;
};

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach(removeDir));

describe('examples/electron round trip', () => {
  it('gives the answers the Electron job checks', async () => {
    const dir = makeTempDir('rabosh-electron-example');
    dirs.push(dir);
    const got = await roundTrip(join(dir, 'store'), 'utility');
    expect(() => check(got, 'utility')).not.toThrow();
    expect(() => check({ ...got, viewed: `${got.viewed} ` }, 'utility')).toThrow(/utility viewed/);
    expect(() => check(got, 'main')).toThrow(/main created/);
  });
});
