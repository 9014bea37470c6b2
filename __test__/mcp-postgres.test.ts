// The MCP server on a postgres:// URL, against the real server scripts/with-postgres.mjs starts
// (RABOSH_PG_URL; without it these fail, saying how to run them, like every PostgreSQL suite):
// every contract outcome through it, three servers counting on one schema with one SIGKILLed,
// a change notification when another process writes, and nothing it prints quotes the host or
// the password.
import { ResourceListChangedNotificationSchema, ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { RaboshMemoryToolHandler } from '../index.js';
import { ContractModel } from './fixtures/contract-model.js';
import { OUTCOMES } from './fixtures/contract-outcomes.js';
import { COUNTER, agree, count, countIn, eventually, memory, serve, type Served } from './mcp-harness.js';
import { freshPgUrl, pgBaseUrl } from './pg-url.js';

const TIMES = Number(process.env['RABOSH_MCP_COUNT'] ?? 20);

const servers: Served[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    quiet(s.stderr());
    await s.close().catch(() => {});
  }
});

async function started(url: string, args: string[] = []): Promise<Served> {
  const s = await serve(url, args);
  servers.push(s);
  return s;
}

/** Neither the host nor the password appears in `text`. */
function quiet(text: string): void {
  const u = new URL(pgBaseUrl());
  for (const secret of [u.hostname, decodeURIComponent(u.password)].filter((x) => x.length > 0)) expect(text).not.toContain(secret);
}

describe('the MCP server on PostgreSQL', () => {
  it("answers every contract outcome with the model's string and isError", async () => {
    const s = await started(freshPgUrl('mcp'), ['--max-memory-bytes', '4096', '--view-max-chars', '120']);
    const model = new ContractModel({ maxMemoryBytes: 4096, viewMaxChars: 120 });
    expect(await agree(s, model, OUTCOMES)).toBe(OUTCOMES.length);
    expect(s.stderr()).toContain('serving the PostgreSQL store (schema mcp_');
  });

  it(`three servers count ${TIMES} times each, one SIGKILLed mid-way: no acknowledged increment lost`, async () => {
    const url = freshPgUrl('mcpcount');
    const seeder = await RaboshMemoryToolHandler.open(url);
    await seeder.execute({ command: 'create', path: COUNTER, file_text: 'count: 0\n' });
    await seeder.close();
    const all = await Promise.all([started(url), started(url), started(url)]);
    const acks = [0, 0, 0];
    let killed = false;
    const finished = await Promise.all(
      all.map((s, i) =>
        count(s, TIMES, () => {
          acks[i]!++;
          if (i === 0 && acks[0] === Math.floor(TIMES / 3) && !killed) {
            killed = true;
            process.kill(s.pid, 'SIGKILL');
          }
        }),
      ),
    );
    expect(finished).toEqual([false, true, true]);
    const reader = await RaboshMemoryToolHandler.open(url);
    const final = countIn((await reader.execute({ command: 'view', path: COUNTER })).text);
    await reader.close();
    const acked = acks.reduce((a, b) => a + b, 0);
    expect(final, `${final} counted, ${acked} acknowledged (${acks.join(' + ')})`).toBeGreaterThanOrEqual(acked);
    expect(final).toBeLessThanOrEqual(acked + 1);
  });

  it('tells a subscribed client when another process writes', async () => {
    const url = freshPgUrl('mcpwatch');
    const other = await RaboshMemoryToolHandler.open(url);
    try {
      await other.execute({ command: 'create', path: '/memories/w.md', file_text: 'v1' });
      const s = await started(url, ['--poll-ms', '200']);
      const updated: string[] = [];
      let listChanged = 0;
      s.client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updated.push(n.params.uri));
      s.client.setNotificationHandler(ResourceListChangedNotificationSchema, () => void listChanged++);
      await s.client.subscribeResource({ uri: 'memory:///memories/w.md' });
      await other.execute({ command: 'str_replace', path: '/memories/w.md', old_str: 'v1', new_str: 'v2' });
      await eventually('resources/updated', () => updated.includes('memory:///memories/w.md'));
      await other.execute({ command: 'create', path: '/memories/n.md', file_text: 'n' });
      await eventually('resources/list_changed', () => listChanged > 0);
      expect((await s.client.readResource({ uri: 'memory:///memories/w.md' })).contents[0]).toMatchObject({ text: 'v2' });
      expect((await memory(s.client, { command: 'view', path: '/memories/n.md' })).isError).toBe(false);
    } finally {
      await other.close();
    }
  });
});
