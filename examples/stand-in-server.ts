// A local stand-in for the Messages API: POST /v1/messages on 127.0.0.1 answers with scripted
// assistant turns (tool_use blocks for the memory tool, then text) and records every request, so
// a test can read the tool_result blocks the SDK sent back. It is not a model: it never looks at
// what it is sent, except to record it. Non-streaming only.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One assistant turn: its content blocks. A turn with a tool_use block stops with `tool_use`. */
export interface ScriptedTurn {
  content: Array<Record<string, unknown>>;
}

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: any;
}

/** A fixed list of turns, or a function of the request and its index (0-based). */
export type Script = ScriptedTurn[] | ((request: RecordedRequest, index: number) => ScriptedTurn);

export interface StandIn {
  /** For `new Anthropic({ baseURL })`. */
  baseURL: string;
  /** Every POST /v1/messages, in order, body parsed. */
  requests: RecordedRequest[];
  close(): Promise<void>;
}

let toolUseCounter = 0;

/** A tool_use block for the memory tool with a fresh id. */
export function memoryCall(input: Record<string, unknown>): Record<string, unknown> {
  toolUseCounter += 1;
  return { type: 'tool_use', id: `toolu_standin_${String(toolUseCounter).padStart(4, '0')}`, name: 'memory', input };
}

export function say(text: string): Record<string, unknown> {
  return { type: 'text', text };
}

function send(res: ServerResponse, status: number, body: unknown) {
  const json = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(json),
    'request-id': 'req_standin',
  });
  res.end(json);
}

function apiError(res: ServerResponse, status: number, type: string, message: string) {
  send(res, status, { type: 'error', error: { type, message } });
}

export async function startStandIn(script: Script): Promise<StandIn> {
  const requests: RecordedRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = (req.url ?? '').split('?')[0];
      if (req.method !== 'POST' || path !== '/v1/messages') {
        apiError(res, 404, 'not_found_error', `the stand-in serves POST /v1/messages only, not ${req.method} ${path}`);
        return;
      }
      let body: any;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        apiError(res, 400, 'invalid_request_error', 'body is not JSON');
        return;
      }
      if (body?.stream) {
        apiError(res, 400, 'invalid_request_error', 'the stand-in does not stream');
        return;
      }
      const recorded: RecordedRequest = { method: req.method, url: req.url ?? '', headers: req.headers, body };
      const index = requests.length;
      requests.push(recorded);
      const turn: ScriptedTurn =
        typeof script === 'function'
          ? script(recorded, index)
          : (script[index] ?? { content: [say('(stand-in: the script has no more turns)')] });
      const usesTool = turn.content.some((b) => b.type === 'tool_use');
      send(res, 200, {
        id: `msg_standin_${index + 1}`,
        type: 'message',
        role: 'assistant',
        model: typeof body?.model === 'string' ? body.model : 'stand-in',
        content: turn.content,
        stop_reason: usesTool ? 'tool_use' : 'end_turn',
        stop_sequence: null,
        usage: { input_tokens: 0, output_tokens: 0 },
      });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((e) => (e ? reject(e) : resolve()));
      }),
  };
}

/** The tool_result blocks of a recorded request's last user message. */
export function toolResults(request: RecordedRequest | undefined): Array<Record<string, any>> {
  const messages: any[] = request?.body?.messages ?? [];
  const last = messages[messages.length - 1];
  if (last?.role !== 'user' || !Array.isArray(last.content)) return [];
  return last.content.filter((b: any) => b?.type === 'tool_result');
}
