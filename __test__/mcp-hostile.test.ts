// Hostile tool arguments through the MCP server: the hostile suite's own generated inputs
// (fixtures/hostile-inputs.ts) sent by the MCP SDK's client to a real `rabosh-memory mcp`
// process. Each goes over the wire as JSON, so the server gets (and the model is asked about) the
// input as JSON makes it; an input that is not an object is the protocol's to refuse (an absent one is no arguments). Every
// answer is the contract's for that input, the server never dies, and the store ends up holding
// exactly what the model holds.
//
// Knobs: RABOSH_MCP_HOSTILE_INPUTS (default 2,000), RABOSH_HOSTILE_SEED (replay a run).
import { inspect } from 'node:util';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { RaboshMemoryToolHandler } from '../index.js';
import { bytesOf, expectedAnswer, sameAnswer, type Limits, type Memories } from './fixtures/contract-model.js';
import { input } from './fixtures/hostile-inputs.js';
import { requestLimit } from '../apps/cli/src/mcp/stdio.js';
import { memory, serve, type Served } from './mcp-harness.js';
import { makeTempDir, removeDir } from './tmp-dir.js';

const INPUTS = Number(process.env['RABOSH_MCP_HOSTILE_INPUTS'] ?? 2_000);
const SEED = Number(process.env['RABOSH_HOSTILE_SEED'] ?? (Date.now() ^ (process.pid << 8)) >>> 0);

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach(removeDir));

/** What the server receives: the input through JSON (a BigInt, which JSON cannot carry, as its digits). */
function onTheWire(v: unknown): unknown {
  const json = JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? x.toString() : x));
  return json === undefined ? undefined : JSON.parse(json);
}

const show = (v: unknown) => inspect(v, { depth: 3, maxStringLength: 200, maxArrayLength: 10, breakLength: Infinity });

describe('hostile tool arguments over MCP', () => {
  it(`${INPUTS} generated inputs: the contract's answer each, protocol refusals for non-objects, the server alive, store = model`, async () => {
    const dir = makeTempDir('rabosh-mcp-hostile');
    dirs.push(dir);
    const lim: Limits = { maxMemoryBytes: 1_048_576, viewMaxChars: 16_000 };
    const model: Memories = new Map();
    const s: Served = await serve(dir);
    let answered = 0;
    let refused = 0;
    let tooLarge = 0;
    const limit = requestLimit(lim.maxMemoryBytes);
    try {
      const inputs = fc.sample(input, { seed: SEED, numRuns: INPUTS });
      for (const [n, raw] of inputs.entries()) {
        const v = onTheWire(raw);
        const where = `input #${n} (replay: RABOSH_HOSTILE_SEED=${SEED}): ${show(v)}`;
        if (v !== undefined && (typeof v !== 'object' || v === null || Array.isArray(v))) {
          await expect(memory(s.client, v), where).rejects.toThrow(/MCP error -326/);
          refused++;
          continue;
        }
        const bytes = Buffer.byteLength(
          JSON.stringify({ method: 'tools/call', params: { name: 'memory', arguments: v }, jsonrpc: '2.0', id: n }),
        );
        if (bytes > limit + 64) {
          // Larger than any command could accept: skipped unread, answered with a protocol error.
          await expect(memory(s.client, v), where).rejects.toThrow(/MCP error -32600: message too large/);
          tooLarge++;
          continue;
        }
        const want = expectedAnswer(v, model, lim);
        const got = await memory(s.client, v).catch((e: unknown) =>
          expect.fail(`${where}\n  threw ${String(e)}\n  server stderr: ${s.stderr()}`),
        );
        if (!sameAnswer(got, want))
          expect.fail(`${where}\n  expected ${show({ text: want.text, isError: want.isError })}\n  got ${show(got)}`);
        want.apply?.(model);
        answered++;
      }
      // Still serving, and still the same process.
      expect((await s.client.listTools()).tools.map((t) => t.name)).toEqual(['memory']);
      expect(() => process.kill(s.pid, 0)).not.toThrow();
    } finally {
      await s.close();
    }
    console.log(
      `mcp hostile: seed ${SEED}, ${answered} answered, ${refused} refused by the protocol, ${tooLarge} too large; model holds ${model.size} memories`,
    );
    expect(answered + refused + tooLarge).toBe(INPUTS);

    const reader = await RaboshMemoryToolHandler.open(dir);
    try {
      let bytes = 0;
      for (const c of model.values()) bytes += bytesOf(c);
      expect(await reader.usage()).toEqual({ memories: model.size, bytes });
      for (const [path, content] of model) expect((await reader.get(path))?.content, path).toBe(content);
    } finally {
      await reader.close();
    }
  });
});

describe('a message larger than any command could accept', () => {
  it('is skipped unread and answered with a protocol error; the server goes on answering', async () => {
    const dir = makeTempDir('rabosh-mcp-large');
    dirs.push(dir);
    const s = await serve(dir, ['--max-memory-bytes', '1024']);
    try {
      const huge = 'x'.repeat(requestLimit(1024) + 1);
      await expect(memory(s.client, { command: 'create', path: '/memories/huge', file_text: huge })).rejects.toThrow(
        /MCP error -32600: message too large/,
      );
      expect(await memory(s.client, { command: 'create', path: '/memories/small', file_text: 'ok' })).toEqual({
        text: 'File created successfully at: /memories/small',
        isError: false,
      });
      expect(() => process.kill(s.pid, 0)).not.toThrow();
    } finally {
      await s.close();
    }
  });
});
