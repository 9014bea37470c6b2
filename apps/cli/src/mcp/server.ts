/**
 * The MCP server over one scope of an open store: the `memory` tool (the memory tool's six
 * commands, answered by the handler with the contract's strings) and every memory as a resource,
 * with change notifications. Served by the SDK's `serveStdio`, which answers both protocol eras
 * on one stdio connection: 2026-07-28 (`server/discover`, a `_meta` envelope on every request)
 * and 2025-11-25 (the `initialize` handshake). It asks `factory` for one instance per era
 * decision. Each is the SDK's low-level `Server`, so a tool call's arguments reach the handler as
 * the client sent them: the handler alone decides what bad input gets (`McpServer` would
 * validate them against the input schema first, and answer bad input in its own words).
 */
import {
  CLIENT_INFO_META_KEY,
  type CallToolResult,
  type CacheHint,
  type ProtocolEra,
  ProtocolErrorCode,
  Server,
  type ServerContext,
  type Tool,
} from '@modelcontextprotocol/server';
import {
  MemoryPath,
  RaboshError,
  faultAnswer,
  RaboshMemoryToolHandler,
  type MemoryPage,
  type MemoryToolOptions,
  type Rabosh,
  type ToolOutput,
} from 'rabosh-memory';
import { mimeTypeOf, pathOf, uriOf } from './uri.js';
import { StoreWatch, type Change } from './watch.js';

/**
 * JSON-RPC error code of an unknown resource. The SDK sends it as -32602 (Invalid Params) on
 * both eras, as the 2026-07-28 specification requires; clients accept both.
 */
const RESOURCE_NOT_FOUND = ProtocolErrorCode.ResourceNotFound;

/**
 * A JSON-RPC error for the SDK to send as it is (a `ProtocolError` would have its message
 * prefixed once here and once more by the client).
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

/** Memories per `resources/list` page: a page's JSON stays far below any client's read limit. */
export const PAGE_SIZE = 500;

/** The opaque cursor of the page after `path`: the path, base64url, so a client never parses it. */
function cursorOf(path: string): string {
  return Buffer.from(path, 'utf8').toString('base64url');
}

/** The path a cursor resumes after; a cursor this server did not make is Invalid Params. */
function afterOf(cursor: string): string {
  const path = /^[A-Za-z0-9_-]+$/.test(cursor) ? Buffer.from(cursor, 'base64url').toString('utf8') : '';
  if (MemoryPath.normalise(path) !== path || path === '/memories' || cursorOf(path) !== cursor) {
    throw rpcError(ProtocolErrorCode.InvalidParams, `invalid cursor ${JSON.stringify(cursor)}: pass a nextCursor this server sent`);
  }
  return path;
}

/** Handlers kept, one per client name; past this, further names are recorded as "unknown". */
const MAX_ACTORS = 16;

/**
 * 2026-07-28 cache hints. The tool never changes while a server runs and is the same for every
 * caller. Memories change whenever any process writes, and a store is one user's: not cached.
 */
const CACHE_HINTS: Record<'tools/list' | 'server/discover' | 'resources/list' | 'resources/read', CacheHint> = {
  'tools/list': { ttlMs: 3_600_000, cacheScope: 'public' },
  'server/discover': { ttlMs: 3_600_000, cacheScope: 'public' },
  'resources/list': { ttlMs: 0, cacheScope: 'private' },
  'resources/read': { ttlMs: 0, cacheScope: 'private' },
};

const INSTRUCTIONS =
  'Memories live under /memories: use the memory tool to view and edit them; each memory is also a resource (memory:///memories/…).';

/** One instance the SDK asked for: a connection in one era (or a `server/discover` probe). */
interface Instance {
  server: Server;
  era: ProtocolEra;
  /** 2025-11-25 `resources/subscribe`s (the 2026-07-28 listen streams are the SDK's to keep). */
  subscribed: Set<string>;
}

export class MemoryServer {
  readonly #handlers = new Map<string, RaboshMemoryToolHandler>();
  readonly #instances = new Set<Instance>();
  #watch: StoreWatch | null = null;
  #watching: Promise<void> | null = null;
  readonly #inFlight = new Set<Promise<unknown>>();
  #lastWatchFault = '';

  constructor(
    private readonly db: Rabosh,
    private readonly options: MemoryServerOptions,
  ) {}

  /**
   * `serveStdio`'s factory: a server for one era. Called once per connection, and once more when
   * a client probes with `server/discover` and then falls back to `initialize`.
   */
  readonly factory = ({ era }: { era: ProtocolEra }): Server => {
    const server = new Server(
      { name: 'rabosh-memory', version: this.options.version },
      {
        capabilities: { tools: {}, resources: { subscribe: true, listChanged: true } },
        instructions: INSTRUCTIONS,
        cacheHints: CACHE_HINTS,
      },
    );
    const instance: Instance = { server, era, subscribed: new Set() };
    this.#instances.add(instance);
    server.onclose = () => this.#instances.delete(instance);
    server.onerror = (e) => this.options.log(`rabosh-memory mcp: ${e.message}`);
    server.setRequestHandler('tools/list', () => ({ tools: [MEMORY_TOOL] }));
    server.setRequestHandler('tools/call', (req, ctx) => {
      if (req.params.name !== MEMORY_TOOL.name) {
        throw rpcError(ProtocolErrorCode.InvalidParams, `unknown tool ${JSON.stringify(req.params.name)}; this server offers "memory"`);
      }
      return this.#track(this.#call(this.#memory(server, ctx), req.params.arguments));
    });
    server.setRequestHandler('resources/list', (req, ctx) => this.#track(this.#list(this.#memory(server, ctx), req.params?.cursor)));
    server.setRequestHandler('resources/read', (req, ctx) => this.#track(this.#read(this.#memory(server, ctx), req.params.uri)));
    // 2025-11-25 only (2026-07-28 subscribes with subscriptions/listen, which the SDK serves).
    // Kept by the memory's own URI, so `memory:///memories/./a` watches /memories/a.
    server.setRequestHandler('resources/subscribe', (req) => {
      instance.subscribed.add(this.#canonical(req.params.uri));
      return {};
    });
    server.setRequestHandler('resources/unsubscribe', (req) => {
      instance.subscribed.delete(this.#canonical(req.params.uri));
      return {};
    });
    return server;
  };

  /**
   * The handler for the client that sent a request, built at its first use: its name comes from
   * the 2025-11-25 handshake, or from the 2026-07-28 request's own envelope.
   */
  #memory(server: Server, ctx: ServerContext): RaboshMemoryToolHandler {
    let actor = this.options.handler.actor;
    if (actor === undefined) {
      const envelope = ctx.mcpReq.envelope as Record<string, { name?: unknown } | undefined> | undefined;
      const id = actorId(envelope?.[CLIENT_INFO_META_KEY]?.name ?? server.getClientVersion()?.name);
      actor = { type: 'mcp', id: this.#handlers.has(id) || this.#handlers.size < MAX_ACTORS ? id : 'unknown' };
    }
    let handler = this.#handlers.get(actor.id);
    if (handler === undefined) {
      handler = new RaboshMemoryToolHandler(this.db, { ...this.options.handler, actor });
      this.#handlers.set(actor.id, handler);
    }
    return handler;
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

  async #call(memory: RaboshMemoryToolHandler, args: unknown): Promise<CallToolResult> {
    let out: ToolOutput;
    try {
      out = await memory.execute(args);
    } catch (e) {
      out = this.#fault(e);
    }
    return { content: [{ type: 'text', text: out.text }], ...(out.isError ? { isError: true } : {}) };
  }

  /** A resource request's fault: a JSON-RPC error carrying the code, never the message. */
  #resourceFault(e: unknown): never {
    this.options.log(`rabosh-memory mcp: ${described(e)}`);
    throw rpcError(
      ProtocolErrorCode.InternalError,
      e instanceof RaboshError ? `memory store fault (${e.code})` : 'memory server fault (INTERNAL)',
    );
  }

  /**
   * One page of the memories, in path order, from the store's listing data (no content is read),
   * so a list answers in the same time and memory at any size of the store.
   */
  async #list(memory: RaboshMemoryToolHandler, cursor: string | undefined) {
    const after = cursor === undefined ? undefined : afterOf(cursor);
    let page: MemoryPage;
    try {
      page = await memory.listMemories({ ...(after === undefined ? {} : { after }), limit: PAGE_SIZE });
    } catch (e) {
      this.#resourceFault(e);
    }
    return {
      resources: page.memories.map((m) => ({ uri: uriOf(m.path), name: m.path, mimeType: mimeTypeOf(m.path), size: m.bytes })),
      ...(page.next === null ? {} : { nextCursor: cursorOf(page.next) }),
    };
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

  async #read(memory: RaboshMemoryToolHandler, uri: string) {
    const path = pathOf(this.#known(uri));
    let found: Awaited<ReturnType<RaboshMemoryToolHandler['get']>> | null;
    try {
      found = path === null ? null : await memory.get(path);
    } catch (e) {
      // A path the store refuses (traversal, a NUL …) names no memory.
      if (e instanceof RaboshError && e.code === 'RABOSH_INVALID_ARGUMENT') found = null;
      else this.#resourceFault(e);
    }
    if (found === null) throw rpcError(RESOURCE_NOT_FOUND, `no memory at ${JSON.stringify(uri)}`, { uri });
    return { contents: [{ uri, mimeType: mimeTypeOf(found.path), text: found.content }] };
  }

  /**
   * Takes the baseline the first changes are measured against, then looks for changes until
   * stopped. Called before the transport connects, so that every write a client could make or
   * see after connecting is measured against it.
   */
  async watch(): Promise<void> {
    // Its own handler: it only reads, and is built before any client has said who it is.
    const watch = new StoreWatch(new RaboshMemoryToolHandler(this.db, this.options.handler), {
      intervalMs: this.options.pollMs,
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

  /**
   * A 2025-11-25 connection gets what it subscribed to; on 2026-07-28 every change goes to the
   * SDK, which delivers each only on the listen streams that asked for it (and drops the rest).
   */
  #notify(change: Change): void {
    const sent: Promise<void>[] = [];
    for (const { server, era, subscribed } of this.#instances) {
      // The feed could not say which memories changed: a 2025-11-25 client hears of each it
      // subscribed to; on 2026-07-28 the SDK keeps the subscriptions, so the list change says it.
      if (change.listChanged || (change.all && era === 'modern')) sent.push(server.sendResourceListChanged());
      const uris = change.all ? (era === 'modern' ? [] : [...subscribed]) : [...change.paths].map(uriOf);
      for (const uri of uris) {
        if (era === 'modern' || subscribed.has(uri)) sent.push(server.sendResourceUpdated({ uri }));
      }
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
