// The SDK for real: the pinned @anthropic-ai/sdk talks HTTP to a local stand-in of the Messages API
// that answers with scripted memory tool calls; what the SDK sends back in the next request is what
// a model would read. Content must be the contract's text byte for byte, and is_error must be true
// exactly for failure outcomes (contract §7).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import Anthropic from '@anthropic-ai/sdk';
import { createRequire } from 'node:module';
import { Rabosh, RaboshMemoryToolHandler, memoryResult, memoryTool } from '../index.js';
import { memoryCall, say, startStandIn, toolResults, type StandIn } from '../examples/stand-in-server.js';
import { makeTempDir, removeDir } from './tmp-dir.js';

const MODEL = 'claude-sonnet-5-5';

let dir: string;
let db: Rabosh;
let handler: RaboshMemoryToolHandler;
let standIn: StandIn | undefined;

beforeEach(async () => {
  dir = makeTempDir('rabosh-sdk');
  db = await Rabosh.open(dir);
  handler = new RaboshMemoryToolHandler(db);
});
afterEach(async () => {
  await standIn?.close();
  standIn = undefined;
  await db.close();
  removeDir(dir);
});

// Each step: the input the "model" sends, the text it must get back, and whether that is an error.
const steps: Array<[Record<string, unknown>, string, boolean]> = [
  [
    { command: 'view', path: '/memories' },
    "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n0B\t/memories",
    false,
  ],
  [
    { command: 'create', path: '/memories/notes.md', file_text: 'hello\nworld\n' },
    'File created successfully at: /memories/notes.md',
    false,
  ],
  [{ command: 'create', path: '/memories/notes.md', file_text: 'again' }, 'Error: File /memories/notes.md already exists', true],
  [{ command: 'view', path: '/memories/missing' }, 'The path /memories/missing does not exist. Please provide a valid path.', true],
  [
    { command: 'view', path: '/memories/notes.md', view_range: [2, -1] },
    "Here's the content of /memories/notes.md with line numbers:\n     2\tworld\n     3\t",
    false,
  ],
  [
    { command: 'str_replace', path: '/memories/notes.md', old_str: 'world', new_str: '$& and $1' },
    'The memory file has been edited. Here is the snippet showing the change (with line numbers):\n     1\thello\n     2\t$& and $1\n     3\t',
    false,
  ],
  [
    { command: 'str_replace', path: '/memories/notes.md', old_str: 'zzz', new_str: 'q' },
    'No replacement was performed, old_str `zzz` did not appear verbatim in /memories/notes.md.',
    true,
  ],
  [
    { command: 'str_replace', path: '/memories/notes.md', old_str: 'l', new_str: 'L' },
    'No replacement was performed. Multiple occurrences of old_str `l` in lines: 1, 1. Please ensure it is unique',
    true,
  ],
  [
    { command: 'insert', path: '/memories/notes.md', insert_line: 0, insert_text: 'top' },
    'The file /memories/notes.md has been edited.',
    false,
  ],
  [
    { command: 'insert', path: '/memories/notes.md', insert_line: 99, insert_text: 'x' },
    'Error: Invalid `insert_line` parameter: 99. It should be within the range of lines of the file: [0, 3]',
    true,
  ],
  [
    { command: 'insert', path: '/memories/none.md', insert_line: 0, insert_text: 'x' },
    'Error: The path /memories/none.md does not exist',
    true,
  ],
  [
    { command: 'rename', old_path: '/memories/notes.md', new_path: '/memories/archive/notes.md' },
    'Successfully renamed /memories/notes.md to /memories/archive/notes.md',
    false,
  ],
  [
    { command: 'rename', old_path: '/memories/archive', new_path: '/memories/archive/inner' },
    'Error: Cannot rename /memories/archive to /memories/archive/inner, which is inside it',
    true,
  ],
  [{ command: 'delete', path: '/memories/' }, 'Error: Cannot delete the /memories directory itself', true],
  [{ command: 'delete', path: '/memories/archive' }, 'Successfully deleted /memories/archive', false],
  [{ command: 'frobnicate' }, 'Error: unknown command frobnicate', true],
  [{ command: 'create', path: '/memoriesfoo.md', file_text: 'x' }, 'Error: File /memoriesfoo.md already exists', true],
];

function expectResult(block: Record<string, any> | undefined, id: unknown, text: string, isError: boolean) {
  expect(block).toBeDefined();
  expect(block!.tool_use_id).toBe(id);
  const content = typeof block!.content === 'string' ? block!.content : block!.content?.map((b: any) => b.text).join('');
  expect(content).toBe(text);
  if (isError) expect(block!.is_error).toBe(true);
  else expect(block!.is_error === undefined || block!.is_error === false).toBe(true);
}

describe('client.beta.messages.toolRunner with memoryTool(handler)', () => {
  it('sends back the documented text with is_error exactly on failure outcomes', async () => {
    const calls = steps.map(([input]) => memoryCall(input));
    standIn = await startStandIn([...calls.map((c) => ({ content: [say('Checking memory.'), c] })), { content: [say('Done.')] }]);
    const client = new Anthropic({ baseURL: standIn.baseURL, apiKey: 'test', maxRetries: 0 });

    const final = await client.beta.messages.toolRunner({
      model: MODEL,
      max_tokens: 1024,
      messages: [{ role: 'user', content: 'Remember things.' }],
      tools: [memoryTool(handler)],
    });

    expect(final.content).toEqual([{ type: 'text', text: 'Done.' }]);
    expect(standIn.requests).toHaveLength(steps.length + 1);
    // the tool goes out as the API definition, nothing of the runnable's functions
    expect(standIn.requests[0]!.body.tools).toEqual([{ type: 'memory_20250818', name: 'memory' }]);
    expect(standIn.requests[0]!.url.split('?')[0]).toBe('/v1/messages');
    for (const [i, [, text, isError]] of steps.entries()) {
      const results = toolResults(standIn.requests[i + 1]);
      expect(results, `step ${i}`).toHaveLength(1);
      expectResult(results[0], calls[i]!.id, text, isError);
    }
  });

  it('answers parallel tool calls of one turn in order, each with its own flag', async () => {
    const a = memoryCall({ command: 'create', path: '/memories/a', file_text: 'A' });
    const b = memoryCall({ command: 'view', path: '/memories/b' });
    const c = memoryCall({ command: 'view', path: '/memories' });
    standIn = await startStandIn([{ content: [a, b, c] }, { content: [say('ok')] }]);
    const client = new Anthropic({ baseURL: standIn.baseURL, apiKey: 'test', maxRetries: 0 });
    await client.beta.messages.toolRunner({
      model: MODEL,
      max_tokens: 256,
      messages: [{ role: 'user', content: 'go' }],
      tools: [memoryTool(handler)],
    });
    const results = toolResults(standIn.requests[1]);
    expect(results.map((r) => r.tool_use_id)).toEqual([a.id, b.id, c.id]);
    expectResult(results[0], a.id, 'File created successfully at: /memories/a', false);
    expectResult(results[1], b.id, 'The path /memories/b does not exist. Please provide a valid path.', true);
    // whether /memories/a exists here depends on whether the SDK runs calls of one turn in order
    expect(results[2]!.content.startsWith("Here're the files and directories up to 2 levels deep in /memories")).toBe(true);
  });

  it('a store fault reaches the model as an error without the host path', async () => {
    const call = memoryCall({ command: 'view', path: '/memories' });
    standIn = await startStandIn([{ content: [call] }, { content: [say('ok')] }]);
    const client = new Anthropic({ baseURL: standIn.baseURL, apiKey: 'test', maxRetries: 0 });
    await db.close();
    await client.beta.messages.toolRunner({
      model: MODEL,
      max_tokens: 256,
      messages: [{ role: 'user', content: 'go' }],
      tools: [memoryTool(handler)],
    });
    const [result] = toolResults(standIn.requests[1]);
    expect(result!.is_error).toBe(true);
    expect(JSON.stringify(result)).not.toContain(dir);
    expect(JSON.stringify(result)).toMatch(/RABOSH_CLOSED/);
  });
});

describe('two SDK copies meet', () => {
  // The SDK's CommonJS build and its ESM build are two module instances with two ToolError
  // classes: a host that `require`s the SDK while this package `import`s it (or a second version
  // nested under this package) runs the tool from a copy this package did not load.
  it('a runner from the other copy still gets the documented text and is_error', async () => {
    const OtherAnthropic = createRequire(import.meta.url)('@anthropic-ai/sdk').default as typeof Anthropic;
    expect(OtherAnthropic).not.toBe(Anthropic);
    const calls = steps.map(([input]) => memoryCall(input));
    standIn = await startStandIn([...calls.map((c) => ({ content: [c] })), { content: [say('Done.')] }]);
    const client = new OtherAnthropic({ baseURL: standIn.baseURL, apiKey: 'test', maxRetries: 0 });
    await client.beta.messages.toolRunner({
      model: MODEL,
      max_tokens: 1024,
      messages: [{ role: 'user', content: 'Remember things.' }],
      tools: [memoryTool(handler)],
    });
    for (const [i, [, text, isError]] of steps.entries()) {
      const [result] = toolResults(standIn.requests[i + 1]);
      expectResult(result, calls[i]!.id, text, isError);
    }
  });
});

describe('a hand-driven loop with memoryResult()', () => {
  async function handLoop(client: Anthropic, tools: any[], beta: boolean) {
    const messages: any[] = [{ role: 'user', content: 'Remember things.' }];
    for (let turn = 0; turn < 50; turn++) {
      const params = { model: MODEL, max_tokens: 1024, messages, tools };
      const reply: any = beta ? await client.beta.messages.create(params) : await client.messages.create(params);
      messages.push({ role: 'assistant', content: reply.content });
      if (reply.stop_reason !== 'tool_use') return reply;
      const uses = reply.content.filter((b: any) => b.type === 'tool_use');
      const results = [];
      for (const use of uses) results.push(await memoryResult(use, handler));
      messages.push({ role: 'user', content: results });
    }
    throw new Error('the loop did not end');
  }

  for (const beta of [false, true]) {
    it(`sends the documented text and is_error through client.${beta ? 'beta.' : ''}messages.create`, async () => {
      const calls = steps.map(([input]) => memoryCall(input));
      standIn = await startStandIn([...calls.map((c) => ({ content: [c] })), { content: [say('Done.')] }]);
      const client = new Anthropic({ baseURL: standIn.baseURL, apiKey: 'test', maxRetries: 0 });
      const final = await handLoop(client, [{ type: 'memory_20250818', name: 'memory' }], beta);
      expect(final.content).toEqual([{ type: 'text', text: 'Done.' }]);
      for (const [i, [, text, isError]] of steps.entries()) {
        const [result] = toolResults(standIn.requests[i + 1]);
        expectResult(result, calls[i]!.id, text, isError);
        // the block is exactly what the API takes: no stray fields
        expect(Object.keys(result!).sort()).toEqual(
          isError ? ['content', 'is_error', 'tool_use_id', 'type'] : ['content', 'tool_use_id', 'type'],
        );
      }
    });
  }

  it('memoryResult rejects on a fault instead of answering the model', async () => {
    await db.close();
    await expect(memoryResult({ id: 'toolu_x', input: { command: 'view', path: '/memories' } }, handler)).rejects.toMatchObject({
      code: 'RABOSH_CLOSED',
    });
  });
});
