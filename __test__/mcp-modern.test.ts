// The server on protocol revision 2026-07-28, spoken to in raw JSON-RPC so that every field of
// the wire is seen: server/discover, the per-request envelope, resultType on every result,
// ttlMs/cacheScope on the cacheable ones, -32022 for a version not served (on the first request
// and on any later one), subscriptions/listen, and the 2025-11-25 handshake still served by the
// same command. External clients drive the same server in their own suites.
import { afterEach, describe, expect, it } from 'vitest';
import { RaboshMemoryToolHandler } from '../index.js';
import { MODERN_VERSIONS } from '../apps/cli/src/mcp/versions.js';
import { CALL_MS, eventually } from './mcp-harness.js';
import { envelope, type Message, type RawServer, startRaw } from './mcp-raw.js';
import { makeTempDir, removeDir } from './tmp-dir.js';

const dirs: string[] = [];
const servers: RawServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
  dirs.splice(0).forEach(removeDir);
});

function started(args: string[] = [], dir = store()): RawServer {
  const s = startRaw(dir, args);
  servers.push(s);
  return s;
}

function store(): string {
  const d = makeTempDir('rabosh-mcp-modern');
  dirs.push(d);
  return d;
}

const result = (m: Message) => {
  if (!('result' in m)) throw new Error(`expected a result, got ${JSON.stringify(m)}`);
  return m['result'] as Record<string, unknown>;
};
const error = (m: Message) => {
  if (!('error' in m)) throw new Error(`expected an error, got ${JSON.stringify(m)}`);
  return m['error'] as { code: number; message: string; data?: unknown };
};
const SERVER_INFO = 'io.modelcontextprotocol/serverInfo';

describe('MCP 2026-07-28 over stdio', () => {
  it(
    'answers server/discover with the revisions served, its capabilities, resultType and cache hints',
    async () => {
      const s = started();
      const discovered = result(await s.modern('server/discover'));
      expect(discovered).toMatchObject({
        supportedVersions: [...MODERN_VERSIONS],
        capabilities: { tools: {}, resources: { subscribe: true, listChanged: true } },
        resultType: 'complete',
        cacheScope: 'public',
      });
      expect(discovered['supportedVersions']).toEqual(['2026-07-28']);
      expect(discovered['ttlMs']).toEqual(expect.any(Number));
      expect(discovered['instructions']).toMatch(/memory:\/\/\/memories/);
      expect((discovered['_meta'] as Record<string, unknown>)[SERVER_INFO]).toMatchObject({ name: 'rabosh-memory' });
      expect(discovered).not.toHaveProperty('capabilities.logging');
    },
    CALL_MS,
  );

  it(
    'serves stateless requests: resultType on every result, ttlMs and cacheScope on lists and reads',
    async () => {
      const s = started();
      // No server/discover first: a request carrying the envelope opens the connection by itself.
      const tools = result(await s.modern('tools/list'));
      expect(tools).toMatchObject({ resultType: 'complete', cacheScope: 'public' });
      expect((tools['tools'] as { name: string }[]).map((t) => t.name)).toEqual(['memory']);
      expect(result(await s.modern('tools/list'))['tools']).toEqual(tools['tools']);

      const created = result(
        await s.modern('tools/call', { name: 'memory', arguments: { command: 'create', path: '/memories/a.md', file_text: 'hi\n' } }),
      );
      expect(created).toMatchObject({
        resultType: 'complete',
        content: [{ type: 'text', text: 'File created successfully at: /memories/a.md' }],
      });
      expect(created).not.toHaveProperty('isError');
      const refused = result(await s.modern('tools/call', { name: 'memory', arguments: { command: 'view', path: '/memories/nope' } }));
      expect(refused).toMatchObject({
        resultType: 'complete',
        isError: true,
        content: [{ type: 'text', text: 'The path /memories/nope does not exist. Please provide a valid path.' }],
      });

      const listed = result(await s.modern('resources/list'));
      expect(listed).toMatchObject({ resultType: 'complete', ttlMs: 0, cacheScope: 'private' });
      expect(listed['resources']).toEqual([{ uri: 'memory:///memories/a.md', name: '/memories/a.md', mimeType: 'text/markdown', size: 3 }]);
      const read = result(await s.modern('resources/read', { uri: 'memory:///memories/a.md' }));
      expect(read).toMatchObject({ resultType: 'complete', ttlMs: 0, cacheScope: 'private' });
      expect(read['contents']).toEqual([{ uri: 'memory:///memories/a.md', mimeType: 'text/markdown', text: 'hi\n' }]);
      expect(error(await s.modern('resources/read', { uri: 'memory:///memories/absent' }))).toMatchObject({
        code: -32602,
        data: { uri: 'memory:///memories/absent' },
      });

      // A request without the envelope on a 2026-07-28 connection is refused, not served.
      expect(error(await s.request('tools/list')).code).toBe(-32602);
      expect(s.messages().filter((m) => m.method === 'notifications/message')).toEqual([]);
    },
    CALL_MS,
  );

  it(
    'answers -32022 for a version it does not serve, on the first request and on a later one',
    async () => {
      const s = started();
      const first = error(await s.request('tools/list', { _meta: envelope('2099-01-01') }));
      expect(first).toMatchObject({ code: -32022, data: { supported: ['2026-07-28'], requested: '2099-01-01' } });
      result(await s.modern('server/discover'));
      const later = error(await s.request('resources/list', { _meta: envelope('2030-01-01') }));
      expect(later).toMatchObject({ code: -32022, data: { supported: ['2026-07-28'], requested: '2030-01-01' } });
      const tool = { name: 'memory', arguments: { command: 'create', path: '/memories/x', file_text: 'x' } };
      expect(error(await s.request('tools/call', { ...tool, _meta: envelope('2025-11-25') })).code).toBe(-32022);
      // Nothing was written by the refused call.
      expect(result(await s.modern('resources/list'))['resources']).toEqual([]);
    },
    CALL_MS,
  );

  it(
    'streams list and content changes on subscriptions/listen, to the listener that asked',
    async () => {
      const dir = store();
      const seeded = await RaboshMemoryToolHandler.open(dir);
      await seeded.execute({ command: 'create', path: '/memories/watched.md', file_text: 'v1' });
      await seeded.close();
      const s = started(['--poll-ms', '100'], dir);
      result(await s.modern('server/discover'));
      const uri = 'memory:///memories/watched.md';
      s.send({
        jsonrpc: '2.0',
        id: 'listen-1',
        method: 'subscriptions/listen',
        params: { _meta: envelope(), notifications: { resourcesListChanged: true, resourceSubscriptions: [uri] } },
      });
      const stamped = (method: string) =>
        s
          .messages()
          .filter(
            (m) =>
              m.method === method &&
              (m.params?.['_meta'] as Record<string, unknown>)?.['io.modelcontextprotocol/subscriptionId'] === 'listen-1',
          );
      await eventually('the acknowledgement', () => stamped('notifications/subscriptions/acknowledged').length === 1);
      expect(stamped('notifications/subscriptions/acknowledged')[0]!.params).toMatchObject({
        notifications: { resourcesListChanged: true, resourceSubscriptions: [uri] },
      });

      const other = await RaboshMemoryToolHandler.open(dir);
      try {
        await other.execute({ command: 'str_replace', path: '/memories/watched.md', old_str: 'v1', new_str: 'v2' });
        await eventually('resources/updated on the stream', () => stamped('notifications/resources/updated').length > 0);
        expect(stamped('notifications/resources/updated')[0]!.params).toMatchObject({ uri });
        expect(stamped('notifications/resources/list_changed')).toEqual([]);
        await other.execute({ command: 'create', path: '/memories/new.md', file_text: 'n' });
        await eventually('resources/list_changed on the stream', () => stamped('notifications/resources/list_changed').length > 0);
      } finally {
        await other.close();
      }
      // Nothing outside the stream, and no log messages nobody asked for.
      const unstamped = s.messages().filter((m) => m.method !== undefined && m.id === undefined && !('_meta' in (m.params ?? {})));
      expect(unstamped).toEqual([]);
    },
    CALL_MS,
  );

  it(
    'still serves the 2025-11-25 handshake, with no 2026 fields on its results',
    async () => {
      const s = started();
      const init = result(
        await s.request('initialize', {
          protocolVersion: '2025-11-25',
          capabilities: {},
          clientInfo: { name: 'raw-legacy', version: '0' },
        }),
      );
      expect(init).toMatchObject({ protocolVersion: '2025-11-25', serverInfo: { name: 'rabosh-memory' } });
      s.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      const tools = result(await s.request('tools/list'));
      expect((tools['tools'] as { name: string }[]).map((t) => t.name)).toEqual(['memory']);
      for (const r of [init, tools, result(await s.request('resources/list'))]) {
        expect(r).not.toHaveProperty('resultType');
        expect(r).not.toHaveProperty('ttlMs');
        expect(r).not.toHaveProperty('cacheScope');
      }
    },
    CALL_MS,
  );
});
