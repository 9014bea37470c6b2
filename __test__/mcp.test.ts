// The MCP server (`rabosh-memory mcp`) as a client sees it: the MCP SDK's own Client spawning the
// built CLI over stdio. Every answer is checked against the longhand contract model
// (fixtures/contract-model.ts), which words the strings on its own — nothing here writes one out —
// first on inputs chosen to reach every outcome of the contract, then on the differential test's
// generated scripts. Then the tool's description, the resources and their change notifications
// when another process writes, and faults answered by code with no host path.
import { spawnSync } from 'node:child_process';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { ResourceListChangedNotificationSchema, ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { Rabosh, RaboshMemoryToolHandler } from '../index.js';
import { ContractModel, type Limits } from './fixtures/contract-model.js';
import { step, toInput } from './fixtures/contract-scripts.js';
import { seed } from './cli-harness.js';
import { OUTCOMES } from './fixtures/contract-outcomes.js';
import { agree, bin, eventually, memory, serve, type Served } from './mcp-harness.js';
import { makeTempDir, removeDir } from './tmp-dir.js';

const dirs: string[] = [];
const servers: Served[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
  dirs.splice(0).forEach(removeDir);
});

async function started(target: string, args: string[] = []): Promise<Served> {
  const s = await serve(target, args);
  servers.push(s);
  return s;
}

function store(): string {
  const d = makeTempDir('rabosh-mcp');
  dirs.push(d);
  return d;
}

describe('the memory tool over MCP', () => {
  it('lists one tool, "memory", with the memory tool\'s fields, write hints and view described as read-only', async () => {
    const s = await started(store());
    const { tools } = await s.client.listTools();
    expect(tools.map((t) => t.name)).toEqual(['memory']);
    const tool = tools[0]!;
    const props = tool.inputSchema.properties as Record<string, { enum?: string[] }>;
    expect(props['command']!.enum).toEqual(['view', 'create', 'str_replace', 'insert', 'delete', 'rename']);
    expect(Object.keys(props).sort()).toEqual(
      ['command', 'file_text', 'insert_line', 'insert_text', 'new_path', 'new_str', 'old_path', 'old_str', 'path', 'view_range'].sort(),
    );
    expect(tool.inputSchema.required).toEqual(['command']);
    expect(tool.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true, openWorldHint: false });
    expect(tool.description).toMatch(/view \(read-only/);
    expect(s.client.getServerCapabilities()?.resources).toEqual({ subscribe: true, listChanged: true });
  });

  it("answers every contract outcome with the model's string and isError", async () => {
    const lim: Limits = { maxMemoryBytes: 4096, viewMaxChars: 120 };
    const s = await started(store(), ['--max-memory-bytes', '4096', '--view-max-chars', '120']);
    const model = new ContractModel(lim);
    const answered = await agree(s, model, OUTCOMES);
    expect(answered).toBe(OUTCOMES.length);
    // Each outcome was reached: every failure kind and every success kind appear among the answers.
    expect(model.memories.has('/memories/moved/a.md')).toBe(true);
  });

  it("answers the differential test's generated scripts exactly as the model does", async () => {
    const runs = Number(process.env['RABOSH_MCP_FC_RUNS'] ?? 12);
    const caps = fc.record({ maxMemoryBytes: fc.constantFrom(24, 64, 1 << 20), viewMaxChars: fc.constantFrom(12, 40, 16_000) });
    await fc.assert(
      fc.asyncProperty(caps, fc.array(step, { minLength: 1, maxLength: 30, size: 'max' }), async (lim, steps) => {
        const dir = makeTempDir('rabosh-mcp-fc');
        const s = await serve(dir, ['--max-memory-bytes', String(lim.maxMemoryBytes), '--view-max-chars', String(lim.viewMaxChars)]);
        try {
          const model = new ContractModel(lim);
          await agree(
            s,
            model,
            steps.map((st) => (m: ContractModel) => toInput(st, m)),
          );
        } finally {
          await s.close();
          removeDir(dir);
        }
      }),
      { numRuns: runs },
    );
  });

  it('--scope and --history: the memories land in that scope, each change recorded as the MCP client', async () => {
    const dir = store();
    const s = await started(dir, ['--scope', 'team.a', '--history']);
    await memory(s.client, { command: 'create', path: '/memories/a', file_text: 'x' });
    await memory(s.client, { command: 'str_replace', path: '/memories/a', old_str: 'x', new_str: 'y' });
    await s.close();
    const db = await Rabosh.open(dir, { history: true });
    try {
      expect(await new RaboshMemoryToolHandler(db).usage()).toMatchObject({ memories: 0 });
      const scoped = new RaboshMemoryToolHandler(db, { scope: 'team.a' });
      expect((await scoped.get('/memories/a'))?.content).toBe('y');
      const page = await scoped.versions({ path: '/memories/a' });
      expect(page.data.map((v) => [v.operation, v.actor])).toEqual([
        ['modified', { type: 'mcp', id: 'rabosh-test' }],
        ['created', { type: 'mcp', id: 'rabosh-test' }],
      ]);
    } finally {
      await db.close();
    }
  });

  it("starts from the README's configuration: its mcpServers entry, its command line for claude mcp add", async () => {
    const readme = readFileSync(join(import.meta.dirname, '..', 'README.md'), 'utf8');
    const from = readme.indexOf('\n## MCP server\n');
    const section = readme.slice(from, readme.indexOf('\n## ', from + 1));
    const json = JSON.parse(/```json\n([\s\S]*?)```/.exec(section)![1]!) as {
      mcpServers: Record<string, { command: string; args: string[] }>;
    };
    const entry = json.mcpServers['memory']!;
    expect(entry.command).toBe('npx');
    expect(entry.args.slice(0, 3)).toEqual(['-y', 'rabosh-memory-cli', 'mcp']);
    const added = /claude mcp add --scope project memory -- npx (.*)/.exec(section)![1]!.split(' ');
    expect(added).toEqual(entry.args);
    // npx would fetch the published package; the built one takes the same arguments after `mcp`.
    const s = await started(store(), entry.args.slice(4));
    expect((await s.client.listTools()).tools.map((t) => t.name)).toEqual(['memory']);
  });

  it('refuses a bad option before serving: exit 2, the reason on stderr, nothing on stdout', () => {
    for (const args of [['--scope', 'no/slash'], ['--max-memory-bytes', '0'], ['--poll-ms', 'soon'], ['--no-such-option']]) {
      const r = spawnSync(process.execPath, [bin, 'mcp', store(), ...args], { encoding: 'utf8', input: '', timeout: 120_000 });
      expect(r.status, args.join(' ')).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(/invalid|unknown option/);
    }
  });

  it('answers a store fault with its stable code and no host path; the operator gets the detail on stderr', async () => {
    const dir = store();
    const s = await started(dir);
    expect((await memory(s.client, { command: 'create', path: '/memories/a', file_text: 'x' })).isError).toBe(false);
    // Another process replaces the MANIFEST with garbage: the server's next catch-up finds it.
    writeFileSync(join(dir, 'MANIFEST.new'), 'garbage'.repeat(64));
    renameSync(join(dir, 'MANIFEST.new'), join(dir, 'MANIFEST'));
    for (const input of [
      { command: 'create', path: '/memories/b', file_text: 'y' },
      { command: 'view', path: '/memories' },
    ]) {
      const got = await memory(s.client, input);
      expect(got.isError).toBe(true);
      expect(got.text).toMatch(/^Error: memory store fault \(RABOSH_[A-Z_]+\)$/);
      expect(got.text).not.toContain(dir);
    }
    const listed = s.client.listResources();
    await expect(listed).rejects.toThrow(/memory store fault \(RABOSH_[A-Z_]+\)/);
    await listed.catch((e: Error) => expect(e.message).not.toContain(dir));
    await eventually('the fault on stderr', () => s.stderr().includes(join(dir, 'MANIFEST')));
  });
});

describe('memories as MCP resources', () => {
  it('lists and reads every memory by its memory:// URI', async () => {
    const s = await started(store());
    const files = { '/memories/notes.md': '# notes\n', '/memories/a b/\u{1F600}%?#.txt': 'odd name', '/memories/.hidden/k': 'k' };
    for (const [path, file_text] of Object.entries(files)) await memory(s.client, { command: 'create', path, file_text });
    const { resources } = await s.client.listResources();
    expect(resources.map((r) => r.name).sort()).toEqual(Object.keys(files).sort());
    const notes = resources.find((r) => r.name === '/memories/notes.md')!;
    expect(notes).toMatchObject({ uri: 'memory:///memories/notes.md', mimeType: 'text/markdown', size: 8 });
    for (const r of resources) {
      expect(r.uri.startsWith('memory:///memories/')).toBe(true);
      const read = await s.client.readResource({ uri: r.uri });
      expect(read.contents).toEqual([{ uri: r.uri, mimeType: r.mimeType, text: files[r.name as keyof typeof files] }]);
    }
    await expect(s.client.readResource({ uri: 'memory:///memories/absent' })).rejects.toMatchObject({ code: -32602 });
    await expect(s.client.readResource({ uri: 'file:///etc/passwd' })).rejects.toMatchObject({ code: -32602 });
    await expect(s.client.readResource({ uri: 'memory:///memories/%2e%2e/%2e%2e/etc' })).rejects.toMatchObject({ code: -32602 });
    await expect(s.client.readResource({ uri: 'memory:///memories/%E0%A4%A' })).rejects.toMatchObject({ code: -32602 });
  });

  it('tells a subscribed client when another process writes, and every client when the list changes', async () => {
    const dir = store();
    // Written before the server starts, so they are its baseline, not changes it reports.
    await seed(dir, { '/memories/watched.md': 'v1', '/memories/other.md': 'o1' });
    const s = await started(dir, ['--poll-ms', '100']);
    const updated: string[] = [];
    let listChanged = 0;
    s.client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updated.push(n.params.uri));
    s.client.setNotificationHandler(ResourceListChangedNotificationSchema, () => void listChanged++);
    // Spelled otherwise than the list does: the subscription is to the memory, not the spelling.
    await s.client.subscribeResource({ uri: 'memory:///memories/./watched.md' });
    await expect(s.client.subscribeResource({ uri: 'memory:///memories/../etc' })).rejects.toMatchObject({ code: -32602 });

    const other = await RaboshMemoryToolHandler.open(dir);
    try {
      await other.execute({ command: 'str_replace', path: '/memories/other.md', old_str: 'o1', new_str: 'o2' });
      await other.execute({ command: 'str_replace', path: '/memories/watched.md', old_str: 'v1', new_str: 'v2' });
      await eventually('resources/updated for the watched memory', () => updated.includes('memory:///memories/watched.md')).catch((e) => {
        throw new Error(`${e.message}; updated ${JSON.stringify(updated)}, list changed ${listChanged}; stderr: ${s.stderr()}`);
      });
      expect(updated).not.toContain('memory:///memories/other.md');
      expect(listChanged).toBe(0);
      expect((await s.client.readResource({ uri: 'memory:///memories/watched.md' })).contents[0]).toMatchObject({ text: 'v2' });

      await other.execute({ command: 'create', path: '/memories/new.md', file_text: 'n' });
      await eventually('resources/list_changed after a create elsewhere', () => listChanged > 0);
      expect((await s.client.listResources()).resources.map((r) => r.name)).toContain('/memories/new.md');

      await s.client.unsubscribeResource({ uri: 'memory:///memories/watched.md' });
      updated.length = 0;
      listChanged = 0;
      await other.execute({ command: 'delete', path: '/memories/watched.md' });
      await eventually('resources/list_changed after a delete elsewhere', () => listChanged > 0);
      expect(updated).toEqual([]);
    } finally {
      await other.close();
    }
  });
});
