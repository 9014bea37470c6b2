// The MCP server (`rabosh-memory mcp <store>`, apps/cli) over stdio, driven by the official SDK's
// client as a host would, one fresh server process per run:
//   - spawn + initialize + the first `resources/list` page;
//   - every page to the end by cursor: each page's time (the middle one reported), the whole
//     walk, the requests, and the server's resident memory after it;
//   - notifications: another process creates memories (`list_changed`) and edits a subscribed
//     one (`resources/updated`); from its commit to the client holding the notification. The
//     server looks every --poll-ms (its default, 1 s), so this is mostly where in a poll the
//     write fell: the minimum is closest to what a look itself costs.

import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ResourceListChangedNotificationSchema, ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { median, nowMs } from '../stats.js';
import { rss } from './proc.js';

export interface McpPaths {
  /** The CLI's built entry (apps/cli/dist/main.js). */
  cli: string;
  /** The built library (dist/esm/index.js), for the writer. */
  lib: string;
}

/** Generous: a busy machine at a million memories. */
const TIMEOUT = 600_000;

export async function measureMcp(store: string, paths: McpPaths, size: number, writes: number): Promise<Record<string, number>> {
  const t0 = nowMs();
  const transport = new StdioClientTransport({ command: process.execPath, args: [paths.cli, 'mcp', store], stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (d: Buffer) => {
    stderr += d.toString('utf8');
  });
  const client = new Client({ name: 'bench-surfaces', version: '0.0.0' });
  const m: Record<string, number> = {};
  try {
    await client.connect(transport, { timeout: TIMEOUT });
    m.initialize_ms = nowMs() - t0;
    const pid = transport.pid as number;
    let t = nowMs();
    let page = await client.listResources(undefined, { timeout: TIMEOUT });
    m.first_page_ms = nowMs() - t;
    m.first_page_total_ms = nowMs() - t0;
    const pageMs: number[] = [m.first_page_ms];
    let memories = page.resources.length;
    const walk0 = t;
    while (page.nextCursor !== undefined) {
      t = nowMs();
      page = await client.listResources({ cursor: page.nextCursor }, { timeout: TIMEOUT });
      pageMs.push(nowMs() - t);
      memories += page.resources.length;
    }
    m.walk_s = (nowMs() - walk0) / 1000;
    m.walk_requests = pageMs.length;
    m.middle_page_ms = pageMs[pageMs.length >> 1] as number;
    m.page_median_ms = median(pageMs);
    m.page_max_ms = Math.max(...pageMs);
    if (memories !== size) throw new Error(`resources/list walked ${memories} memories, the store holds ${size}`);
    const after = rss(pid);
    if (after.rssMib !== undefined) m.rss_after_walk_mib = after.rssMib;
    if (after.anonMib !== undefined) m.anon_after_walk_mib = after.anonMib;
    if (after.peakMib !== undefined) m.peak_mib = after.peakMib;
    Object.assign(m, await notifications(client, store, paths, writes));
    const end = rss(pid);
    if (end.rssMib !== undefined) m.rss_end_mib = end.rssMib;
  } catch (e) {
    throw new Error(`${(e as Error).message}\nserver stderr: ${stderr.slice(-2000)}`);
  } finally {
    await client.close();
  }
  return m;
}

/** Commit → notification held, for `writes` creates (list_changed) and `writes` edits (updated). */
async function notifications(client: Client, store: string, paths: McpPaths, writes: number): Promise<Record<string, number>> {
  const dir = `/memories/surfaces-bench-${Date.now()}`;
  const watched = `memory://${dir}/watched.md`;
  const listed: number[] = [];
  const updated: number[] = [];
  client.setNotificationHandler(ResourceListChangedNotificationSchema, () => void listed.push(Date.now()));
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
    if (n.params.uri === watched) updated.push(Date.now());
  });
  await client.subscribeResource({ uri: watched }, { timeout: TIMEOUT });
  // Far apart enough that each write is its own look (the server's default poll is 1 s).
  const writer = spawn(process.execPath, [join(import.meta.dirname, 'writer.mjs'), paths.lib, store, dir, String(writes), '2500'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  writer.stdout.on('data', (d: Buffer) => {
    out += d.toString('utf8');
  });
  const code = await new Promise<number | null>((done) => writer.once('close', done));
  if (code !== 0) throw new Error(`the writer exited with ${code}`);
  const commits = out
    .trim()
    .split('\n')
    .map((l) => l.split(' ') as [string, string]);
  const at = (kind: string) => commits.filter(([k]) => k === kind || k === 'created').map(([, t]) => Number(t));
  // The k-th notification of a kind answers the k-th commit that causes it (`created` causes both).
  const lags = (commitsAt: number[], seen: number[], what: string) => {
    if (seen.length < commitsAt.length) throw new Error(`${what}: ${seen.length} notifications for ${commitsAt.length} writes`);
    return commitsAt.slice(1).map((c, i) => (seen[i + 1] as number) - c);
  };
  const l = lags(at('listed'), listed, 'list_changed');
  const u = lags(at('updated'), updated, 'resources/updated');
  return {
    list_changed_ms: median(l),
    list_changed_max_ms: Math.max(...l),
    updated_ms: median(u),
    updated_max_ms: Math.max(...u),
  };
}
