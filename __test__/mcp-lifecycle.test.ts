// How a `rabosh-memory mcp` process ends, and what it writes: spoken to in raw JSON-RPC lines over
// its stdin so that every byte of its stdout is seen. At the end of stdin and at SIGTERM it closes
// the store and exits 0; stdout holds JSON-RPC messages and nothing else, even when code in the
// process writes to console.log or process.stdout.
import { spawn } from 'node:child_process';
import { JSONRPCMessageSchema, LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { Rabosh, RaboshMemoryToolHandler } from '../index.js';
import { bin, eventually } from './mcp-harness.js';
import { makeTempDir, removeDir } from './tmp-dir.js';

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach(removeDir));

interface Raw {
  send: (message: unknown) => void;
  stdout: () => string;
  stderr: () => string;
  /** Parsed stdout lines so far (throws on a line that is not a JSON-RPC message). */
  messages: () => Array<Record<string, unknown>>;
  proc: ReturnType<typeof spawn>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function start(dir: string, nodeArgs: string[] = []): Raw {
  const proc = spawn(process.execPath, [...nodeArgs, bin, 'mcp', dir], { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  proc.stdout!.on('data', (d: Buffer) => (out += d.toString('utf8')));
  proc.stderr!.on('data', (d: Buffer) => (err += d.toString('utf8')));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    proc.on('exit', (code, signal) => resolve({ code, signal })),
  );
  return {
    send: (m) => proc.stdin!.write(`${JSON.stringify(m)}\n`),
    stdout: () => out,
    stderr: () => err,
    messages: () =>
      out
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => {
          const m = JSON.parse(l) as Record<string, unknown>;
          JSONRPCMessageSchema.parse(m);
          return m;
        }),
    proc,
    exited,
  };
}

async function initialised(r: Raw): Promise<void> {
  r.send({
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'raw-test', version: '0' } },
  });
  await eventually('the initialize result', () => r.messages().some((m) => m['id'] === 0));
  r.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
}

const create = (id: number, path: string) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name: 'memory', arguments: { command: 'create', path, file_text: `written by call ${id}` } },
});

/** Bounded: the machine is busy, but a process that does not exit is a failure. */
async function exitOf(r: Raw): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no exit within 60 s; stderr: ${r.stderr()}`)), 60_000);
  });
  try {
    return await Promise.race([r.exited, late]);
  } finally {
    clearTimeout(timer);
    r.proc.kill('SIGKILL');
  }
}

/** The store was closed: another process may now hold it exclusively, and it holds `paths`. */
async function closedHolding(dir: string, paths: string[]): Promise<void> {
  const db = await Rabosh.open(dir, { exclusive: true });
  try {
    const h = new RaboshMemoryToolHandler(db);
    for (const p of paths) expect((await h.get(p))?.content, p).toMatch(/^written by call \d+$/);
  } finally {
    await db.close();
  }
}

describe('the MCP server process', () => {
  it('exits 0 at the end of stdin, with the store closed and only JSON-RPC on stdout', async () => {
    const dir = makeTempDir('rabosh-mcp-eof');
    dirs.push(dir);
    const r = start(dir);
    await initialised(r);
    r.send(create(1, '/memories/eof'));
    await eventually('the answer to call 1', () => r.messages().some((m) => m['id'] === 1));
    r.proc.stdin!.end();
    expect(await exitOf(r)).toEqual({ code: 0, signal: null });
    expect(r.messages().map((m) => m['id'])).toEqual([0, 1]);
    expect(r.stderr()).toContain('end of input; closing the store');
    await closedHolding(dir, ['/memories/eof']);
  });

  it('answers the calls it read before the end of stdin, then exits 0', async () => {
    const dir = makeTempDir('rabosh-mcp-eof-busy');
    dirs.push(dir);
    const r = start(dir);
    await initialised(r);
    for (let id = 1; id <= 10; id++) r.send(create(id, `/memories/e${id}`));
    r.proc.stdin!.end();
    expect(await exitOf(r)).toEqual({ code: 0, signal: null });
    expect(r.messages().map((m) => m['id'])).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    await closedHolding(
      dir,
      Array.from({ length: 10 }, (_, i) => `/memories/e${i + 1}`),
    );
  });

  it('exits 0 at SIGTERM with calls under way: each answered one is in the store', async () => {
    const dir = makeTempDir('rabosh-mcp-term');
    dirs.push(dir);
    const r = start(dir);
    await initialised(r);
    for (let id = 1; id <= 20; id++) r.send(create(id, `/memories/t${id}`));
    await eventually('a first answer', () => r.messages().some((m) => m['id'] === 1));
    r.proc.kill('SIGTERM');
    expect(await exitOf(r)).toEqual({ code: 0, signal: null });
    const answered = r.messages().filter((m) => typeof m['id'] === 'number' && m['id'] > 0 && 'result' in m);
    expect(answered.length).toBeGreaterThan(0);
    for (const m of answered) expect(m['result']).not.toHaveProperty('isError');
    expect(r.stderr()).toContain('SIGTERM; closing the store');
    await closedHolding(
      dir,
      answered.map((m) => `/memories/t${String(m['id'])}`),
    );
  });

  it('sends whatever else the process prints (console.log, process.stdout.write) to stderr', async () => {
    const dir = makeTempDir('rabosh-mcp-noise');
    dirs.push(dir);
    // Preloaded: once the server says it is serving, print on stdout every 20 ms.
    const noise = `
      const write = process.stderr.write;
      let on = false;
      process.stderr.write = function (chunk, ...rest) {
        if (!on && String(chunk).includes('serving')) {
          on = true;
          setInterval(() => { console.log('NOISE console.log'); process.stdout.write('NOISE stdout.write\\n'); }, 20).unref();
        }
        return write.call(this, chunk, ...rest);
      };`;
    const r = start(dir, ['--import', `data:text/javascript,${encodeURIComponent(noise)}`]);
    await initialised(r);
    await eventually('noise on stderr', () => r.stderr().includes('NOISE console.log') && r.stderr().includes('NOISE stdout.write'));
    for (let id = 1; id <= 5; id++) r.send(create(id, `/memories/n${id}`));
    await eventually('five answers', () => r.messages().length === 6);
    r.proc.stdin!.end();
    expect(await exitOf(r)).toEqual({ code: 0, signal: null });
    expect(r.stdout()).not.toContain('NOISE');
    expect(r.messages().map((m) => m['id'])).toEqual([0, 1, 2, 3, 4, 5]);
  });
});
