// What the MCP suites share: the built CLI's `mcp` subcommand spawned as a real process by the
// MCP SDK's own client over stdio, and a way to ask it the memory tool.
import { resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { expect } from 'vitest';
import type { ContractModel } from './fixtures/contract-model.js';

export const bin = resolve(import.meta.dirname, '..', 'apps', 'cli', 'dist', 'main.js');

/** Generous: the machine is busy. */
export const CALL_MS = 120_000;

export interface Served {
  client: Client;
  transport: StdioClientTransport;
  /** Everything the server wrote on stderr so far. */
  stderr: () => string;
  /** The server process. */
  pid: number;
  close: () => Promise<void>;
}

/** `rabosh-memory mcp <target> ...args`, connected (initialize done). */
export async function serve(target: string, args: string[] = [], name = 'rabosh-test'): Promise<Served> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [bin, 'mcp', target, ...args], stderr: 'pipe' });
  let err = '';
  transport.stderr?.on('data', (d: Buffer) => {
    err += d.toString('utf8');
  });
  const client = new Client({ name, version: '0.0.0' });
  await client.connect(transport, { timeout: CALL_MS });
  return { client, transport, stderr: () => err, pid: transport.pid!, close: () => client.close() };
}

export interface Answer {
  text: string;
  isError: boolean;
}

/** One memory tool call; the answer as the handler's `{ text, isError }`. */
export async function memory(client: Client, args: unknown): Promise<Answer> {
  const r = (await client.callTool({ name: 'memory', arguments: args as Record<string, unknown> }, undefined, {
    timeout: CALL_MS,
  })) as CallToolResult;
  const content = r.content;
  if (content.length !== 1 || content[0]!.type !== 'text') throw new Error(`expected one text block, got ${JSON.stringify(content)}`);
  return { text: content[0]!.text, isError: r.isError === true };
}

/** Polls `check` until it holds, or fails after `ms` saying what it waited for. */
export async function eventually(what: string, check: () => boolean | Promise<boolean>, ms = 60_000): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`gave up after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The memory the counting tests increment, holding `count: N\n`. */
export const COUNTER = '/memories/counter';

/** The counter as a view shows it. */
export function countIn(text: string): number {
  const seen = /\tcount: (\d+)$/m.exec(text)?.[1];
  if (seen === undefined) throw new Error(`no count in ${JSON.stringify(text)}`);
  return Number(seen);
}

/**
 * `times` increments through one server; calls `onAck` after each acknowledged one. Resolves with
 * whether it finished (false: the server went away, with at most one increment unanswered).
 */
export async function count(s: Served, times: number, onAck: () => void): Promise<boolean> {
  try {
    for (let i = 0; i < times; i++) {
      for (;;) {
        const seen = countIn((await memory(s.client, { command: 'view', path: COUNTER })).text);
        const old_str = `count: ${seen}\n`;
        const r = await memory(s.client, { command: 'str_replace', path: COUNTER, old_str, new_str: `count: ${seen + 1}\n` });
        if (!r.isError) break;
        const lost = `No replacement was performed, old_str \`${old_str}\` did not appear verbatim in ${COUNTER}.`;
        if (r.text !== lost) throw new Error(`unexpected answer: ${r.text}`);
      }
      onAck();
    }
    return true;
  } catch (e) {
    if (/Connection closed|-32000/.test(String(e))) return false;
    throw e;
  }
}

/** The input as the server receives it: JSON on the wire (undefined fields dropped, NaN → null …). */
const wire = (input: unknown): unknown => {
  const json = JSON.stringify(input);
  return json === undefined ? undefined : JSON.parse(json);
};
const isRecord = (v: unknown) => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Runs `inputs` through the server and the model side by side; returns how many answers compared. */
export async function agree(
  s: Served,
  model: ContractModel,
  inputs: Iterable<unknown> | ((m: ContractModel) => unknown)[],
): Promise<number> {
  return agreeThrough(
    (input) => memory(s.client, input),
    model,
    inputs,
    async (input) => {
      // Tool arguments are an object in MCP: anything else is the protocol's to refuse.
      await expect(memory(s.client, input)).rejects.toThrow(/-32603|-32602|Invalid/);
    },
  );
}

/**
 * `agree` through any client: `ask` sends one tool call. An input that is not an object (the
 * protocol's to refuse, not the tool's) goes to `refuse` and is not counted.
 */
export async function agreeThrough(
  ask: (input: Record<string, unknown>) => Promise<Answer>,
  model: ContractModel,
  inputs: Iterable<unknown> | ((m: ContractModel) => unknown)[],
  refuse: (input: unknown) => Promise<void>,
): Promise<number> {
  let n = 0;
  for (const raw of inputs) {
    const input = wire(typeof raw === 'function' ? (raw as (m: ContractModel) => unknown)(model) : raw);
    if (!isRecord(input) && input !== undefined) {
      await refuse(input);
      continue;
    }
    const want = model.execute(input);
    const got = await ask(input as Record<string, unknown>);
    expect({ input, ...got }).toEqual({ input, ...want });
    n++;
  }
  return n;
}
