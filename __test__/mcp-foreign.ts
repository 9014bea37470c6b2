// The MCP server driven by clients this project did not write: the Python SDK's own client and
// FastMCP's (both through fixtures/mcp-py-client.py, in a venv of pinned packages), and the
// official inspector's CLI. Each client is asked the same things through one interface, and the
// checks below judge the answers: the contract model's strings and isError, every memory as a
// resource, and a change made by another handle reaching a subscribed client.
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { RaboshMemoryToolHandler } from '../index.js';
import { seed } from './cli-harness.js';
import { ContractModel, type Limits } from './fixtures/contract-model.js';
import { OUTCOMES } from './fixtures/contract-outcomes.js';
import { type Answer, agreeThrough, bin, eventually } from './mcp-harness.js';
import { pythonWith } from './py-venv.js';
import { makeTempDir, removeDir } from './tmp-dir.js';

export const PY_REQUIREMENTS = resolve(import.meta.dirname, 'fixtures', 'mcp-py-requirements.txt');
const PY_DRIVER = resolve(import.meta.dirname, 'fixtures', 'mcp-py-client.py');

/** The Python venv the clients run in: built once, then cached. */
export const pythonClients = (): Promise<string> => pythonWith(PY_REQUIREMENTS);

/** The caps the outcome inputs are written for (fixtures/contract-outcomes.ts). */
export const LIMITS: Limits = { maxMemoryBytes: 4096, viewMaxChars: 120 };
/** The server's arguments for LIMITS, looking for other processes' changes every 100 ms. */
export const SERVER_ARGS = ['--max-memory-bytes', '4096', '--view-max-chars', '120', '--poll-ms', '100'];
/** How the server is started, for the clients that spawn it themselves. */
export const serverCommand = (store: string): string[] => [process.execPath, bin, 'mcp', store, ...SERVER_ARGS];

export type Change = { event: 'updated'; uri: string } | { event: 'list_changed' };

export interface Tool {
  name: string;
  inputSchema: { properties: Record<string, { enum?: string[] }> };
}

export interface Resource {
  uri: string;
  name: string;
  mimeType?: string;
}

/** What a client reports back; an error carries the JSON-RPC code the client saw. */
export class ClientError extends Error {
  constructor(
    readonly code: number | null,
    readonly reason: string,
  ) {
    super(`${code}: ${reason}`);
  }
}

/** One connected client, whichever it is. */
export interface Foreign {
  /** The protocol version the client settled on. */
  version: string;
  call(input: Record<string, unknown>): Promise<Answer>;
  tools(): Promise<Tool[]>;
  /** One page of resources/list. */
  resources(cursor?: string): Promise<{ resources: Resource[]; nextCursor?: string }>;
  read(uri: string): Promise<{ uri: string; text?: string; mimeType?: string }[]>;
  /** Subscribes to `uri` (and to list changes, where the era asks for it); resolves once the server took it. */
  watch(uri: string): Promise<void>;
  /** The changes received since the watch. */
  changes: Change[];
  stderr(): string;
  close(): Promise<void>;
}

/** The single text block of a tool result, as the handler's `{ text, isError }`. */
export function answerOf(result: { content: { type: string; text?: string }[]; isError?: boolean }): Answer {
  const { content } = result;
  if (content.length !== 1 || content[0]!.type !== 'text') throw new Error(`expected one text block, got ${JSON.stringify(content)}`);
  return { text: content[0]!.text!, isError: result.isError === true };
}

/**
 * A Python client (`sdk`: the SDK's `mcp.Client`; `fastmcp`: FastMCP's `Client`) connected in
 * `mode` ("legacy", "auto" or a modern protocol version) to a server it spawned on `store`.
 */
export async function pythonClient(python: string, kind: 'sdk' | 'fastmcp', mode: string, store: string): Promise<Foreign> {
  const child: ChildProcess = spawn(python, ['-W', 'ignore::DeprecationWarning', PY_DRIVER, kind, mode, ...serverCommand(store)], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr!.on('data', (d: Buffer) => {
    err += d.toString('utf8');
  });
  // A client that died is reported by the close handler below, not by a write into its pipe.
  child.stdin!.on('error', () => {});
  const changes: Change[] = [];
  const waiting: { done: (v: unknown) => void; fail: (e: Error) => void }[] = [];
  const gone = new Promise<void>((r) => child.on('close', () => r()));
  child.on('close', (code) => {
    for (const w of waiting.splice(0)) w.fail(new Error(`the ${kind} client exited ${code}; stderr:\n${err}`));
  });
  createInterface({ input: child.stdout! }).on('line', (line) => {
    const msg = JSON.parse(line) as { event?: string; ok?: unknown; error?: { code: number | null; message: string } };
    if (msg.event !== undefined) return void changes.push(msg as Change);
    const w = waiting.shift();
    if (w === undefined) throw new Error(`unasked answer from the ${kind} client: ${line}`);
    if (msg.error !== undefined) w.fail(new ClientError(msg.error.code, msg.error.message));
    else w.done(msg.ok);
  });
  const ask = <T>(request: Record<string, unknown>): Promise<T> =>
    new Promise<T>((done, fail) => {
      waiting.push({ done: done as (v: unknown) => void, fail });
      child.stdin!.write(`${JSON.stringify(request)}\n`);
    });
  const { protocolVersion } = await ask<{ protocolVersion: string }>({ op: 'hello' });
  return {
    version: protocolVersion,
    call: async (args) => answerOf(await ask({ op: 'call', args })),
    tools: async () => {
      const all: Tool[] = [];
      let cursor: string | undefined;
      do {
        const page = await ask<{ tools: Tool[]; nextCursor?: string }>({ op: 'tools', cursor });
        all.push(...page.tools);
        cursor = page.nextCursor;
      } while (cursor !== undefined);
      return all;
    },
    resources: (cursor) => ask({ op: 'resources', cursor }),
    read: async (uri) => (await ask<{ contents: [] }>({ op: 'read', uri })).contents,
    watch: (uri) => ask({ op: 'watch', uri }),
    changes,
    stderr: () => err,
    close: async () => {
      child.stdin!.end(`${JSON.stringify({ op: 'close' })}\n`);
      await gone;
    },
  };
}

// ---- the official inspector's CLIs --------------------------------------------------------------

const inspectorPackage = resolve(import.meta.dirname, '..', 'node_modules', '@modelcontextprotocol', 'inspector');
const inspectorBin = (name: string): string => {
  const pkg = JSON.parse(readFileSync(join(inspectorPackage, 'package.json'), 'utf8')) as { bin: Record<string, string> };
  return join(inspectorPackage, pkg.bin[name]!);
};

/** The inspector's eras, by the names its `--protocol-era` takes. */
export type InspectorEra = 'legacy' | 'modern';

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

function ran(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<Ran> {
  return new Promise((done, fail) => {
    const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString('utf8');
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString('utf8');
    });
    child.on('error', fail);
    child.on('close', (code) => done({ code, stdout, stderr }));
  });
}

/** The JSON values of a stream of them, each pretty-printed over several lines. */
export function jsonValues(text: string): unknown[] {
  const out: unknown[] = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (ch === '\\') i++;
      else if (ch === '"') inString = false;
    } else if (ch === '"') inString = true;
    else if (ch === '{' || ch === '[') {
      if (depth++ === 0) start = i;
    } else if ((ch === '}' || ch === ']') && --depth === 0) out.push(JSON.parse(text.slice(start, i + 1)));
  }
  return out;
}

/**
 * The official inspector on `store`: `inspector --cli --protocol-era <era>` for every request, a
 * process (and a server) each, the way a script or CI job would use it; `tools()` runs with
 * `--strict`, which exits 6 on any error-severity schema portability problem. The one-shot CLI has
 * no streaming method, so `watch` uses the package's other CLI, `mcpdo`, on a daemon of its own.
 * `home` isolates the inspector's catalog, secrets and daemon from the user's.
 */
export async function inspectorClient(era: InspectorEra, store: string, home: string): Promise<Foreign> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOME: home,
    USERPROFILE: home,
    TMPDIR: home,
    MCP_INSPECTOR_SECRET_STORE: 'memory',
    NO_COLOR: '1',
  };
  /** The CLI's JSON envelope: the result, and with --strict any schema findings (warnings too). */
  const cli = async (args: string[]): Promise<{ result: unknown; schemaFindings?: unknown[] }> => {
    const r = await ran(
      process.execPath,
      [inspectorBin('mcp-inspector'), '--cli', '--protocol-era', era, '--format', 'json', '-q', ...args, ...serverCommand(store)],
      env,
    );
    const envelope = jsonValues(r.stderr)[0] as { error?: { code: string; message: string } } | undefined;
    if (r.code === 0) return JSON.parse(r.stdout) as { result: unknown };
    // A tool result with isError: the result on stdout all the same, exit 5 and tool_is_error.
    if (r.code === 5 && envelope?.error?.code === 'tool_is_error') {
      const envelope = JSON.parse(r.stdout) as { result: { isError?: boolean } };
      expect(envelope.result.isError).toBe(true);
      return envelope;
    }
    throw new ClientError(null, envelope?.error?.message ?? `inspector exited ${r.code}: ${r.stderr}`);
  };
  const { protocolVersion } = (await cli(['--method', 'initialize'])).result as { protocolVersion: string };
  const changes: Change[] = [];
  let daemon: NodeJS.ProcessEnv | undefined;
  let stream: ChildProcess | undefined;
  let err = '';
  const mcpdo = async (args: string[]): Promise<unknown[]> => {
    const r = await ran(process.execPath, [inspectorBin('mcpdo'), '--format', 'json', ...args], daemon ?? env);
    if (r.code !== 0) throw new ClientError(null, `mcpdo ${args.join(' ')} exited ${r.code}: ${r.stdout}${r.stderr}`);
    return jsonValues(r.stdout);
  };
  return {
    version: protocolVersion,
    call: async (input) =>
      answerOf((await cli(['--method', 'tools/call', '--tool-name', 'memory', '--tool-args-json', JSON.stringify(input)])).result as never),
    tools: async () => {
      const { result, schemaFindings } = await cli(['--method', 'tools/list', '--strict']);
      // Not even a warning: the schema is portable to every client the inspector knows of.
      expect(schemaFindings).toBeUndefined();
      return (result as { tools: Tool[] }).tools;
    },
    resources: async (cursor) => {
      // The CLI walks every page itself and answers the whole list.
      expect(cursor).toBeUndefined();
      return (await cli(['--method', 'resources/list'])).result as { resources: Resource[] };
    },
    read: async (uri) => ((await cli(['--method', 'resources/read', '--uri', uri])).result as { contents: [] }).contents,
    watch: async (uri) => {
      // `mcpdo private` prints the shell exports of a daemon of this test's own.
      const exports = (await ran(process.execPath, [inspectorBin('mcpdo'), 'private'], env)).stdout;
      daemon = { ...env };
      for (const [, k, v] of exports.matchAll(/export (\w+)='([^']*)'/g)) daemon[k!] = v!;
      const [connection] = (await mcpdo(['connect', '--era', era, '--', ...serverCommand(store)])) as { name: string }[];
      stream = spawn(
        process.execPath,
        [inspectorBin('mcpdo'), '--format', 'json', '--connection', connection!.name, 'resources/subscribe', uri],
        {
          env: daemon,
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let out = '';
      const subscribed = new Promise<void>((done, fail) => {
        stream!.stdout!.on('data', (d: Buffer) => {
          out += d.toString('utf8');
          const lines = jsonValues(out) as { type: string; uri?: string }[];
          changes.splice(
            0,
            changes.length,
            ...lines.filter((l) => l.type === 'resources/updated').map((l) => ({ event: 'updated' as const, uri: l.uri! })),
          );
          if (lines.some((l) => l.type === 'subscribed')) done();
        });
        stream!.stderr!.on('data', (d: Buffer) => {
          err += d.toString('utf8');
        });
        stream!.on('close', (code) => fail(new ClientError(null, `mcpdo resources/subscribe exited ${code}: ${out}${err}`)));
      });
      await subscribed;
    },
    changes,
    stderr: () => err,
    close: async () => {
      stream?.kill('SIGINT');
      if (daemon !== undefined) await mcpdo(['daemon', 'stop']);
    },
  };
}

// ---- the checks every client goes through -------------------------------------------------------

/** One tool, `memory`, with the memory tool's six commands. */
export async function expectTheTool(c: Foreign): Promise<void> {
  const tools = await c.tools();
  expect(tools.map((t) => t.name)).toEqual(['memory']);
  expect(tools[0]!.inputSchema.properties['command']!.enum).toEqual(['view', 'create', 'str_replace', 'insert', 'delete', 'rename']);
}

/**
 * Runs `inputs` (on a store created empty, the server on LIMITS) through the client and the model
 * side by side: every answer the model's string with its isError. Returns the model (the memories
 * the store now holds). Inputs that are not objects are left out: a client refuses them itself.
 */
export async function expectTheContract(c: Foreign, inputs: unknown[]): Promise<ContractModel> {
  const model = new ContractModel(LIMITS);
  let refused = 0;
  const asked = await agreeThrough(
    (input) => c.call(input),
    model,
    inputs,
    async () => void refused++,
  );
  const notObjects = inputs.filter((i) => i !== undefined && (typeof i !== 'object' || i === null || Array.isArray(i)));
  expect([asked, refused]).toEqual([inputs.length - notObjects.length, notObjects.length]);
  return model;
}

/** The URI of a memory, each path segment percent-encoded (docs/guide/mcp.md). */
export const uriOf = (path: string): string => `memory://${path.split('/').map(encodeURIComponent).join('/')}`;

/** Every page of resources/list, following nextCursor; no memory listed twice. */
export async function listAll(c: Foreign): Promise<{ pages: number; resources: Resource[] }> {
  const resources: Resource[] = [];
  let pages = 0;
  let cursor: string | undefined;
  do {
    const page = await c.resources(cursor);
    resources.push(...page.resources);
    cursor = page.nextCursor;
    pages++;
  } while (cursor !== undefined && pages < 10_000);
  expect(new Set(resources.map((r) => r.uri)).size).toBe(resources.length);
  return { pages, resources };
}

/** resources/list names every memory of `model` by its URI, and resources/read gives each one's content. */
export async function expectTheResources(c: Foreign, model: ContractModel, readAtMost = Number.POSITIVE_INFINITY): Promise<void> {
  const { resources } = await listAll(c);
  const memories = [...model.memories].sort(([a], [b]) => (a < b ? -1 : 1));
  expect(resources.map((r) => [r.name, r.uri]).sort()).toEqual(memories.map(([path]) => [path, uriOf(path)]).sort());
  for (const [path, text] of memories.slice(0, readAtMost)) {
    const contents = await c.read(uriOf(path));
    expect(contents.map((x) => [x.uri, x.text])).toEqual([[uriOf(path), text]]);
  }
  // Not found is -32602 in both eras (2026-07-28 requires it); the inspector's CLI reports the
  // server's message without the code.
  const refused = (e: unknown) => e instanceof ClientError && (e.code === -32602 || (e.code === null && /^no memory at /.test(e.reason)));
  await expect(c.read(uriOf('/memories/absent'))).rejects.toSatisfy(refused);
}

/** More memories than one page of resources/list holds at any page size below a thousand. */
export const MANY = 1_201;

/** Writes MANY memories into `store` in one commit (before its server starts); their paths. */
export async function seedMany(store: string): Promise<string[]> {
  const paths = Array.from({ length: MANY }, (_, i) => `/memories/many/${String(i).padStart(4, '0')}.md`);
  const h = await RaboshMemoryToolHandler.open(store);
  try {
    await h.importMemories(paths.map((path) => ({ path, content: `content of ${path}` })));
  } finally {
    await h.close();
  }
  return paths;
}

/** Following every cursor brings each of `paths` once; the last one reads back. Returns the page count. */
export async function expectEveryPage(c: Foreign, paths: string[]): Promise<number> {
  const { pages, resources } = await listAll(c);
  expect(resources.map((r) => r.name).sort()).toEqual([...paths].sort());
  const last = paths.at(-1)!;
  expect((await c.read(uriOf(last))).map((x) => x.text)).toEqual([`content of ${last}`]);
  return pages;
}

/** The memory a watching client subscribes to, written before its server starts. */
export const WATCHED = '/memories/watched.md';

/**
 * Another handle on `store` changes the watched memory, then adds one: the subscribed client hears
 * of the first as resources/updated for its URI and, when `listChanged`, of the second as
 * resources/list_changed. `c` must be watching WATCHED on a store seeded with it.
 */
export async function expectTheChanges(c: Foreign, store: string, listChanged: boolean): Promise<void> {
  const other = await RaboshMemoryToolHandler.open(store);
  const seen = (what: string, check: () => boolean) =>
    eventually(what, check).catch((e: Error) => {
      throw new Error(`${e.message}; changes ${JSON.stringify(c.changes)}; stderr:\n${c.stderr()}`);
    });
  try {
    expect((await other.execute({ command: 'str_replace', path: WATCHED, old_str: 'v1', new_str: 'v2' })).isError).toBe(false);
    await seen('resources/updated for the watched memory', () => c.changes.some((x) => x.event === 'updated' && x.uri === uriOf(WATCHED)));
    if (!listChanged) return;
    expect((await other.execute({ command: 'create', path: '/memories/new.md', file_text: 'n' })).isError).toBe(false);
    await seen('resources/list_changed', () => c.changes.some((x) => x.event === 'list_changed'));
  } finally {
    await other.close();
  }
}

// ---- the Python clients' suite --------------------------------------------------------------------

/** A client mode and the protocol version it must settle on against this server. */
export interface Era {
  mode: string;
  version: string;
}

/**
 * The suite a Python client goes through in each of `eras`: the tool, every contract outcome, every
 * memory as a resource, then (a second connection, on a store seeded before its server starts) a
 * change by another handle reaching it.
 */
export function pythonSuite(kind: 'sdk' | 'fastmcp', eras: Era[]): void {
  let python = '';
  const dirs: string[] = [];
  const open: Foreign[] = [];
  beforeAll(async () => {
    python = await pythonClients();
  }, 900_000);
  afterEach(async () => {
    await Promise.all(open.splice(0).map((c) => c.close()));
    dirs.splice(0).forEach(removeDir);
  });
  const connected = async (mode: string, store: string) => {
    const c = await pythonClient(python, kind, mode, store);
    open.push(c);
    return c;
  };
  const store = () => {
    const d = makeTempDir(`rabosh-mcp-${kind}`);
    dirs.push(d);
    return d;
  };

  describe.each(eras)('$mode', ({ mode, version }) => {
    it(`settles on ${version}; the tool, every contract outcome and every memory as a resource come through`, async () => {
      const c = await connected(mode, store());
      expect(c.version).toBe(version);
      await expectTheTool(c);
      const model = await expectTheContract(c, OUTCOMES);
      expect(model.memories.size).toBeGreaterThan(5);
      await expectTheResources(c, model);
    });

    it(`walks every page of resources/list (${MANY} memories), following nextCursor`, async () => {
      const dir = store();
      const paths = await seedMany(dir);
      // More than one page: the server bounds resources/list (issue 35 §3) and hands out a cursor.
      expect(await expectEveryPage(await connected(mode, dir), paths)).toBeGreaterThan(1);
    });

    it('hears of another handle changing a subscribed memory, and of the list changing', async () => {
      const dir = store();
      await seed(dir, { [WATCHED]: 'v1' });
      const c = await connected(mode, dir);
      await c.watch(uriOf(WATCHED));
      await expectTheChanges(c, dir, true);
    });
  });
}
