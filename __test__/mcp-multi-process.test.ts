// Several MCP servers on one store, each a real `rabosh-memory mcp` process driven by the MCP
// SDK's client: three count on one memory by view + str_replace (a compare-and-swap: an answer
// saying old_str did not appear verbatim lost a race, and the caller reads again), one server is
// SIGKILLed mid-run, and no acknowledged increment is lost. And a server refused by a store that
// another process holds exclusively exits with a message naming the holder.
import { spawnSync } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { Rabosh, RaboshMemoryToolHandler } from '../index.js';
import { seed } from './cli-harness.js';
import { COUNTER, bin, count, countIn, memory, serve, type Served } from './mcp-harness.js';
import { makeTempDir, removeDir } from './tmp-dir.js';

const TIMES = Number(process.env['RABOSH_MCP_COUNT'] ?? 40);
const PATH = COUNTER;

const dirs: string[] = [];
const servers: Served[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close().catch(() => {})));
  dirs.splice(0).forEach(removeDir);
});

function store(): string {
  const d = makeTempDir('rabosh-mcp-multi');
  dirs.push(d);
  return d;
}

async function started(target: string, args: string[] = []): Promise<Served> {
  const s = await serve(target, args);
  servers.push(s);
  return s;
}

describe('several MCP servers on one store', () => {
  it(`three servers count ${TIMES} times each by view + str_replace, one SIGKILLed mid-way: no acknowledged increment lost`, async () => {
    const dir = store();
    await seed(dir, { [PATH]: 'count: 0\n' });
    const [victim, ...others] = await Promise.all([started(dir), started(dir), started(dir)]);
    const acks = [0, 0, 0];
    let killed = false;
    const runs = [victim!, ...others].map((s, i) =>
      count(s, TIMES, () => {
        acks[i]!++;
        if (i === 0 && acks[0] === Math.floor(TIMES / 3) && !killed) {
          killed = true;
          process.kill(s.pid, 'SIGKILL');
        }
      }),
    );
    const finished = await Promise.all(runs);
    expect(killed).toBe(true);
    expect(finished).toEqual([false, true, true]);
    expect(acks.slice(1)).toEqual([TIMES, TIMES]);

    const reader = await RaboshMemoryToolHandler.open(dir);
    const final = countIn((await reader.execute({ command: 'view', path: PATH })).text);
    await reader.close();
    const acked = acks.reduce((a, b) => a + b, 0);
    // The killed server may have committed the one increment it was working on without answering
    // it: that one is durable but unacknowledged. Nothing acknowledged is missing.
    expect(final, `${final} counted, ${acked} acknowledged (${acks.join(' + ')})`).toBeGreaterThanOrEqual(acked);
    expect(final).toBeLessThanOrEqual(acked + 1);
  });

  it('a server on a store another process holds exclusively exits 3, naming the holder on stderr', async () => {
    const dir = store();
    const holder = await Rabosh.open(dir, { exclusive: true });
    try {
      const r = spawnSync(process.execPath, [bin, 'mcp', dir], { encoding: 'utf8', input: '', timeout: 120_000 });
      expect(r.status).toBe(3);
      expect(r.stdout).toBe('');
      expect(r.stderr).toContain(`is locked by pid ${process.pid}`);
      expect(r.stderr).toContain('still running');
    } finally {
      await holder.close();
    }
  });

  it('a server started --exclusive keeps the next one out, and that one names it', async () => {
    const dir = store();
    const first = await started(dir, ['--exclusive']);
    expect((await memory(first.client, { command: 'create', path: '/memories/a', file_text: 'x' })).isError).toBe(false);
    const r = spawnSync(process.execPath, [bin, 'mcp', dir], { encoding: 'utf8', input: '', timeout: 120_000 });
    expect(r.status).toBe(3);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(`is locked by pid ${first.pid}`);
  });

  it('--exclusive on a PostgreSQL URL is refused as a usage error (such a store is always shared)', () => {
    const r = spawnSync(process.execPath, [bin, 'mcp', 'postgres://u@127.0.0.1:1/db', '--exclusive'], {
      encoding: 'utf8',
      input: '',
      timeout: 120_000,
    });
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('--exclusive is for a store directory');
  });
});
