/**
 * The MCP server over one scope of an open store: the `memory` tool (the memory tool's six
 * commands, answered by the handler with the contract's strings) and every memory as a resource,
 * with change notifications. Built on the SDK's low-level `Server`, so a tool call's arguments
 * reach the handler as the client sent them: the handler alone decides what bad input gets.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import {
  MemoryPath,
  RaboshError,
  faultAnswer,
  RaboshMemoryToolHandler,
  type MemoryToolOptions,
  type Rabosh,
  type ToolOutput,
} from 'rabosh-memory';
import { mimeTypeOf, pathOf, uriOf } from './uri.js';
import { StoreWatch, type Change } from './watch.js';

/** JSON-RPC error code the MCP specification gives an unknown resource. */
const RESOURCE_NOT_FOUND = -32002;

/**
 * A JSON-RPC error for the SDK to send as it is (an `McpError` would have its message prefixed
 * once here and once more by the client).
 */
function rpcError(code: number, message: string, data?: unknown): Error {
  return Object.assign(new Error(message), { code, ...(data === undefined ? {} : { data }) });
}

const COMMANDS = ['view', 'create', 'str_replace', 'insert', 'delete', 'rename'] as const;

/** The memory tool's input, flat (no top-level oneOf, which model APIs refuse): `command` says which fields count. */
export const MEMORY_TOOL: Tool = {
  name: 'memory',
  title: 'Memory',
  description: [
    'A persistent memory directory, /memories, shared with every other session and agent that uses the same store.',
    'Check it before starting a task and record what you learn as you go.',
    'Commands: view (read-only: list a directory or show a file with line numbers, view_range [start, end] optional);',
    'create (writes: a new file with file_text); str_replace (writes: replace the one occurrence of old_str with new_str);',
    'insert (writes: insert_text after line insert_line, 0 = at the top); delete (writes: a file or a directory and everything in it);',
    'rename (writes: old_path to new_path). Every path starts with /memories. Each write is one atomic, durable commit.',
  ].join(' '),
  inputSchema: {
    type: 'object',
    properties: {
      command: { type: 'string', enum: [...COMMANDS], description: 'Which command to run.' },
      path: { type: 'string', description: 'view, create, str_replace, insert, delete: the path, under /memories.' },
      view_range: {
        type: 'array',
        items: { type: 'integer' },
        minItems: 2,
        maxItems: 2,
        description: 'view of a file: [first line, last line], 1-based; -1 as the last line means to the end.',
      },
      file_text: { type: 'string', description: 'create: the content of the new file.' },
      old_str: { type: 'string', description: 'str_replace: the text to replace; it must occur exactly once.' },
      new_str: { type: 'string', description: 'str_replace: the replacement text.' },
      insert_line: { type: 'integer', description: 'insert: the line after which to insert (0 = before the first line).' },
      insert_text: { type: 'string', description: 'insert: the text to insert.' },
      old_path: { type: 'string', description: 'rename: the file or directory to move.' },
      new_path: { type: 'string', description: 'rename: where to move it.' },
    },
    required: ['command'],
  },
  // One tool for all six commands, so the hints describe its writing commands; the description
  // says that view only reads.
  annotations: { title: 'Memory', readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
};

export interface MemoryServerOptions {
  /** The handler's options (scope, caps); the actor is taken from the client's name when absent. */
  handler: MemoryToolOptions;
  /** The package version, sent to the client. */
  version: string;
  /** Milliseconds between looks for other processes' writes. */
  pollMs: number;
  /** The store has a sequence number every process shares (a store directory, not PostgreSQL). */
  sharedSeq: boolean;
  /** Where operator diagnostics go (stderr): faults with their full messages, which clients never see. */
  log: (line: string) => void;
}

/** A client name as a version-history actor id: kept to what an actor takes. */
function actorId(name: unknown): string {
  return typeof name === 'string' && name !== '' && name.length <= 200 ? name : 'unknown';
}

/** For the operator's log: a fault by its code and message, anything else (a bug) with its stack. */
function described(e: unknown): string {
  if (e instanceof RaboshError) return `${e.code}: ${e.message}`;
  return e instanceof Error ? (e.stack ?? e.message) : String(e);
}

export class MemoryServer {
  readonly server: Server;
  #handler: RaboshMemoryToolHandler | null = null;
  #watch: StoreWatch | null = null;
  #watching: Promise<void> | null = null;
  readonly #subscribed = new Set<string>();
  readonly #inFlight = new Set<Promise<unknown>>();
  #lastWatchFault = '';

  constructor(
    private readonly db: Rabosh,
    private readonly options: MemoryServerOptions,
  ) {
    this.server = new Server(
      { name: 'rabosh-memory', version: options.version },
      {
        capabilities: { tools: {}, resources: { subscribe: true, listChanged: true } },
        instructions:
          'Memories live under /memories: use the memory tool to view and edit them; each memory is also a resource (memory:///memories/…).',
      },
    );
    this.server.onerror = (e) => options.log(`rabosh-memory mcp: ${e.message}`);
    this.server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [MEMORY_TOOL] }));
    this.server.setRequestHandler(CallToolRequestSchema, (req) => {
      if (req.params.name !== MEMORY_TOOL.name) {
        throw rpcError(ErrorCode.InvalidParams, `unknown tool ${JSON.stringify(req.params.name)}; this server offers "memory"`);
      }
      return this.#track(this.#call(req.params.arguments));
    });
    this.server.setRequestHandler(ListResourcesRequestSchema, () => this.#track(this.#list()));
    this.server.setRequestHandler(ReadResourceRequestSchema, (req) => this.#track(this.#read(req.params.uri)));
    // Subscriptions are kept by the memory's own URI, so `memory:///memories/./a` watches /memories/a.
    this.server.setRequestHandler(SubscribeRequestSchema, (req) => {
      this.#subscribed.add(this.#canonical(req.params.uri));
      return {};
    });
    this.server.setRequestHandler(UnsubscribeRequestSchema, (req) => {
      this.#subscribed.delete(this.#canonical(req.params.uri));
      return {};
    });
  }

  /** One handler per server, built at the first use, after the client has said who it is. */
  #memory(): RaboshMemoryToolHandler {
    if (this.#handler === null) {
      const actor = this.options.handler.actor ?? { type: 'mcp', id: actorId(this.server.getClientVersion()?.name) };
      this.#handler = new RaboshMemoryToolHandler(this.db, { ...this.options.handler, actor });
    }
    return this.#handler;
  }

  #track<T>(work: Promise<T>): Promise<T> {
    this.#inFlight.add(work);
    const done = () => this.#inFlight.delete(work);
    work.then(done, done);
    return work;
  }

  /** Faults answer as the tool's errors with their code alone; the operator gets the message on stderr. */
  #fault(e: unknown): ToolOutput {
    this.options.log(`rabosh-memory mcp: ${described(e)}`);
    return { text: e instanceof RaboshError ? faultAnswer(e) : 'Error: memory server fault (INTERNAL)', isError: true };
  }

  async #call(args: unknown): Promise<CallToolResult> {
    let out: ToolOutput;
    try {
      out = await this.#memory().execute(args);
    } catch (e) {
      out = this.#fault(e);
    }
    return { content: [{ type: 'text', text: out.text }], ...(out.isError ? { isError: true } : {}) };
  }

  /** A resource request's fault: a JSON-RPC error carrying the code, never the message. */
  #resourceFault(e: unknown): never {
    this.options.log(`rabosh-memory mcp: ${described(e)}`);
    throw rpcError(ErrorCode.InternalError, e instanceof RaboshError ? `memory store fault (${e.code})` : 'memory server fault (INTERNAL)');
  }

  async #list() {
    try {
      const files = await this.#memory().exportMemories();
      return {
        resources: files.map((f) => ({
          uri: uriOf(f.path),
          name: f.path,
          mimeType: mimeTypeOf(f.path),
          size: Buffer.byteLength(f.content, 'utf8'),
        })),
      };
    } catch (e) {
      this.#resourceFault(e);
    }
  }

  #known(uri: string): string {
    if (pathOf(uri) === null)
      throw rpcError(RESOURCE_NOT_FOUND, `not a memory URI: ${JSON.stringify(uri)} (memory:///memories/…)`, { uri });
    return uri;
  }

  #canonical(uri: string): string {
    const path = MemoryPath.normalise(pathOf(this.#known(uri)) ?? '');
    if (path === null || path === '/memories') throw rpcError(RESOURCE_NOT_FOUND, `not a memory: ${JSON.stringify(uri)}`, { uri });
    return uriOf(path);
  }

  async #read(uri: string) {
    const path = pathOf(this.#known(uri));
    let memory: Awaited<ReturnType<RaboshMemoryToolHandler['get']>> | null;
    try {
      memory = path === null ? null : await this.#memory().get(path);
    } catch (e) {
      // A path the store refuses (traversal, a NUL …) names no memory.
      if (e instanceof RaboshError && e.code === 'RABOSH_INVALID_ARGUMENT') memory = null;
      else this.#resourceFault(e);
    }
    if (memory === null) throw rpcError(RESOURCE_NOT_FOUND, `no memory at ${JSON.stringify(uri)}`, { uri });
    return { contents: [{ uri, mimeType: mimeTypeOf(memory.path), text: memory.content }] };
  }

  /**
   * Takes the baseline the first changes are measured against, then looks for changes until
   * stopped. Called before the transport connects, so that every write a client could make or
   * see after connecting is measured against it.
   */
  async watch(): Promise<void> {
    // Its own handler: it only reads, and is built before the client has said who it is.
    const watch = new StoreWatch(this.db, new RaboshMemoryToolHandler(this.db, this.options.handler), {
      intervalMs: this.options.pollMs,
      sharedSeq: this.options.sharedSeq,
      onChange: (c) => this.#notify(c),
      onFault: (e) => {
        // Once per kind of fault, not once a tick: a broken store would flood the log.
        const line = `rabosh-memory mcp: looking for changes: ${described(e)}`;
        if (line !== this.#lastWatchFault) this.options.log(line);
        this.#lastWatchFault = line;
      },
    });
    this.#watch = watch;
    this.#watching = watch.start();
    await this.#watching;
  }

  #notify(change: Change): void {
    const sent: Promise<void>[] = [];
    if (change.listChanged) sent.push(this.server.sendResourceListChanged());
    const uris = change.all ? [...this.#subscribed] : [...change.paths].map(uriOf);
    for (const uri of uris) {
      if (this.#subscribed.has(uri)) sent.push(this.server.sendResourceUpdated({ uri }));
    }
    // A notification that cannot be sent (the client went away) changes nothing here.
    for (const s of sent) s.catch(() => {});
  }

  /** Stops watching and waits for the requests under way; the caller then closes the store. */
  async stop(): Promise<void> {
    await this.#watching?.catch(() => {});
    await this.#watch?.stop();
    await Promise.allSettled([...this.#inFlight]);
    // Their answers are written a few promise reactions later: let them out before the close.
    await new Promise((resolve) => setImmediate(resolve));
  }
}
