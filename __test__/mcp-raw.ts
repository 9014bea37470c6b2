// A `rabosh-memory mcp` process spoken to in raw JSON-RPC lines, so that a test sees every field
// on the wire exactly as the server wrote it (a client library would add defaults, strip unknown
// fields, or refuse what it does not expect).
import { spawn } from 'node:child_process';
import { bin, CALL_MS, eventually } from './mcp-harness.js';

export type Message = Record<string, unknown> & { id?: unknown; method?: string; params?: Record<string, unknown> };

/** The 2026-07-28 per-request envelope a stateless client sends with every request. */
export function envelope(version = '2026-07-28', name = 'raw-modern'): Record<string, unknown> {
  return {
    'io.modelcontextprotocol/protocolVersion': version,
    'io.modelcontextprotocol/clientCapabilities': {},
    'io.modelcontextprotocol/clientInfo': { name, version: '0.0.0' },
  };
}

export interface RawServer {
  /** Sends one request and resolves with its response (result or error), as written. */
  request: (method: string, params?: Record<string, unknown>) => Promise<Message>;
  /** The same with the 2026-07-28 envelope in `params._meta`. */
  modern: (method: string, params?: Record<string, unknown>) => Promise<Message>;
  send: (message: unknown) => void;
  /** Every message the server wrote so far. */
  messages: () => Message[];
  stderr: () => string;
  /** Ends stdin and waits for the process to exit. */
  close: () => Promise<void>;
}

export function startRaw(dir: string, args: string[] = []): RawServer {
  const proc = spawn(process.execPath, [bin, 'mcp', dir, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  const seen: Message[] = [];
  proc.stdout.on('data', (d: Buffer) => {
    out += d.toString('utf8');
    const lines = out.split('\n');
    out = lines.pop()!;
    for (const line of lines) if (line !== '') seen.push(JSON.parse(line) as Message);
  });
  proc.stderr.on('data', (d: Buffer) => (err += d.toString('utf8')));
  const exited = new Promise<void>((resolve) => proc.on('exit', () => resolve()));
  let next = 1;
  const send = (m: unknown) => void proc.stdin.write(`${JSON.stringify(m)}\n`);
  const request = async (method: string, params?: Record<string, unknown>): Promise<Message> => {
    const id = next++;
    send({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) });
    const answered = () => seen.find((m) => m.id === id && ('result' in m || 'error' in m));
    await eventually(`the answer to ${method} (id ${id}); stderr: ${err}`, () => answered() !== undefined, CALL_MS);
    return answered()!;
  };
  return {
    request,
    modern: (method, params = {}) => request(method, { ...params, _meta: { ...envelope(), ...(params['_meta'] as object) } }),
    send,
    messages: () => [...seen],
    stderr: () => err,
    close: async () => {
      proc.stdin.end();
      await exited;
    },
  };
}
