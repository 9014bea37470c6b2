/**
 * The server's stdio transport: newline-delimited JSON-RPC, framed by the SDK's own
 * (de)serialisers, handed to the SDK's `serveStdio` (which takes a transport of one's own).
 * Written here rather than taken from the SDK because the SDK's transport closes
 * the connection (so the server ends) on a message over 10 MiB, and joins every chunk of a long
 * message into one buffer again (quadratic). A memory of 1 MiB can take 6 MiB of JSON
 * (`\u0000` escapes), and a str_replace two of them. Here a message is read in linear time, and one
 * over the limit is skipped and answered with a JSON-RPC error: the connection stays up.
 */
import type { Readable, Writable } from 'node:stream';
import { type JSONRPCMessage, ProtocolErrorCode, type Transport, deserializeMessage, serializeMessage } from '@modelcontextprotocol/server';

/**
 * The largest message read: room for every field of a command at the memory cap in its worst
 * JSON spelling (6 bytes a character), with a floor for small caps.
 */
export function requestLimit(maxMemoryBytes: number): number {
  return Math.max(64 * 1024 * 1024, 32 * maxMemoryBytes);
}

const NEWLINE = 0x0a;

/** The id of the request a skipped line held, when its last member is the id (as the SDK writes it). */
function idAtEnd(tail: string): string | number | null {
  const m = /"id":(-?\d+|"(?:[^"\\]|\\.)*")\s*\}\s*$/.exec(tail);
  if (m === null) return null;
  try {
    const id: unknown = JSON.parse(m[1]!);
    return typeof id === 'number' || typeof id === 'string' ? id : null;
  } catch {
    return null;
  }
}

export class StdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  #chunks: Buffer[] = [];
  #length = 0;
  /** Skipping the rest of a line that is over the limit; the last bytes seen, for its id. */
  #skipping: Buffer | null = null;
  #closed = false;
  #onClosed: () => void = () => {};
  /** Settles when the transport closes (the SDK closed it, or `close` was called). */
  readonly closed = new Promise<void>((resolve) => {
    this.#onClosed = resolve;
  });

  constructor(
    private readonly input: Readable,
    private readonly output: Writable,
    private readonly limit: number,
    /** An answer to send instead of passing a message on (null: pass it on). */
    private readonly screen: (message: JSONRPCMessage) => JSONRPCMessage | null = () => null,
  ) {}

  readonly #onData = (chunk: Buffer) => {
    let from = 0;
    for (let nl = chunk.indexOf(NEWLINE); nl !== -1; nl = chunk.indexOf(NEWLINE, from)) {
      this.#take(chunk.subarray(from, nl));
      this.#endLine();
      from = nl + 1;
    }
    if (from < chunk.length) this.#take(chunk.subarray(from));
  };

  readonly #onError = (e: Error) => this.onerror?.(e);

  #take(part: Buffer): void {
    if (this.#skipping === null && this.#length + part.length > this.limit) {
      this.#skipping = Buffer.alloc(0);
      this.#chunks = [];
      this.#length = 0;
    }
    if (this.#skipping !== null) {
      this.#skipping = Buffer.concat([this.#skipping, part]).subarray(-256);
      return;
    }
    this.#chunks.push(part);
    this.#length += part.length;
  }

  #endLine(): void {
    if (this.#skipping !== null) {
      const id = idAtEnd(this.#skipping.toString('utf8'));
      this.#skipping = null;
      this.onerror?.(new Error(`skipped a message over ${this.limit} bytes`));
      const error = { code: ProtocolErrorCode.InvalidRequest, message: `message too large: over ${this.limit} bytes` };
      void this.send({ jsonrpc: '2.0', id, error } as unknown as JSONRPCMessage).catch(() => {});
      return;
    }
    const line = Buffer.concat(this.#chunks, this.#length).toString('utf8').replace(/\r$/, '');
    this.#chunks = [];
    this.#length = 0;
    if (line.trim() === '') return;
    let message: JSONRPCMessage;
    try {
      message = deserializeMessage(line);
    } catch (e) {
      this.onerror?.(e instanceof Error ? e : new Error(String(e)));
      const error = { code: ProtocolErrorCode.ParseError, message: 'not a JSON-RPC message' };
      void this.send({ jsonrpc: '2.0', id: null, error } as unknown as JSONRPCMessage).catch(() => {});
      return;
    }
    const answer = this.screen(message);
    if (answer === null) this.onmessage?.(message);
    else void this.send(answer).catch(() => {});
  }

  async start(): Promise<void> {
    this.input.on('data', this.#onData);
    this.input.on('error', this.#onError);
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.#closed) return reject(new Error('transport closed'));
      if (this.output.write(serializeMessage(message))) resolve();
      else this.output.once('drain', resolve);
    });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.input.off('data', this.#onData);
    this.input.off('error', this.#onError);
    this.input.pause();
    this.#onClosed();
    this.onclose?.();
  }
}
