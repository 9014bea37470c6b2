// The CLI by URL, against the real server of with-postgres.mjs: a postgres:// URL in place of
// <dir> works for view, usage, export, import, expire, stats and history; read-only commands
// refuse a schema without a store and create nothing; checkpoint and verify exit 1 with
// RABOSH_UNSUPPORTED; and no output, error or not, quotes the host or the password.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NotAStoreError, Rabosh, RaboshMemoryToolHandler } from '../index.js';
import { cli, json, writeTree, type Run } from './cli-harness.js';
import { freshPgUrl, pgBaseUrl } from './pg-url.js';
import { makeTempDir, removeDir } from './tmp-dir.js';

let tmp: string;
beforeEach(() => {
  tmp = makeTempDir('rabosh-cli-pg');
});
afterEach(() => removeDir(tmp));

/** What must never be printed: the URL's host and password. */
function secrets(): string[] {
  const u = new URL(pgBaseUrl());
  return [u.hostname, decodeURIComponent(u.password)].filter((s) => s.length > 0);
}

function quiet(r: Run): Run {
  for (const s of secrets()) {
    expect(r.stdout).not.toContain(s);
    expect(r.stderr).not.toContain(s);
  }
  return r;
}

const schemaOf = (url: string) => new URL(url).searchParams.get('schema');

/** Whether a store exists at `url`, asked without creating one. */
async function holdsStore(url: string): Promise<boolean> {
  try {
    await (await Rabosh.open(url, { create: false })).close();
    return true;
  } catch (e) {
    if (e instanceof NotAStoreError) return false;
    throw e;
  }
}

describe('rabosh-memory <command> postgres://…', () => {
  it('import, view, usage, export, expire and stats work by URL', () => {
    const url = freshPgUrl('cli');
    writeTree(join(tmp, 'from'), { 'memories/a.md': 'one\ntwo', 'memories/d/b.md': 'bb' });
    expect(quiet(cli('import', join(tmp, 'from'), url)).stdout).toBe('imported 2 memories (9 B) in one commit\n');
    expect(quiet(cli('view', url)).stdout).toBe(
      "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n" +
        '9B\t/memories\n7B\t/memories/a.md\n2B\t/memories/d/\n2B\t/memories/d/b.md\n',
    );
    expect(quiet(cli('view', url, '/memories/a.md', '--range', '2,2')).stdout).toBe(
      "Here's the content of /memories/a.md with line numbers:\n     2\ttwo\n",
    );
    expect(json(quiet(cli('usage', url, '--json')))).toEqual({ memories: 2, bytes: 9 });
    const to = join(tmp, 'to');
    expect(quiet(cli('export', url, to)).status).toBe(0);
    expect(readFileSync(join(to, 'memories', 'd', 'b.md'), 'utf8')).toBe('bb');
    expect(Object.keys(json(quiet(cli('stats', url, '--json')))).sort()).toEqual(['deadBytes', 'files', 'keys', 'liveBytes', 'seq']);
    expect(json(quiet(cli('expire', url, '--before', String(Date.now() + 60_000), '--json'))).deleted).toBe(2);
    expect(json(quiet(cli('usage', url, '--json')))).toEqual({ memories: 0, bytes: 0 });
    // Another scope of the same URL.
    expect(quiet(cli('import', join(tmp, 'from'), url, '--scope', 'other')).status).toBe(0);
    expect(json(quiet(cli('usage', url, '--scope', 'other', '--json')))).toEqual({ memories: 2, bytes: 9 });
  });

  it('history lists the versions a history-enabled handler recorded', async () => {
    const url = freshPgUrl('clihist');
    const h = new RaboshMemoryToolHandler(await Rabosh.open(url, { history: true }));
    try {
      await h.execute({ command: 'create', path: '/memories/h.md', file_text: 'v1' });
      await h.execute({ command: 'str_replace', path: '/memories/h.md', old_str: 'v1', new_str: 'v2' });
    } finally {
      await h.close();
    }
    const r = quiet(cli('history', url, '/memories/h.md', '--json'));
    expect(r.status).toBe(0);
    expect(json(r).data.map((v: { operation: string }) => v.operation)).toEqual(['modified', 'created']);
  });

  it('read-only commands refuse a schema without a store, name it by schema only, and create nothing', async () => {
    const url = freshPgUrl('clinone');
    for (const args of [
      ['view', url],
      ['usage', url],
      ['export', url, join(tmp, 'x')],
      ['expire', url, '--before', '1d'],
      ['history', url, '/memories/a'],
    ]) {
      const r = quiet(cli(...args));
      expect(r.status, args[0]).toBe(1);
      expect(r.stderr, args[0]).toBe(`rabosh-memory: no store at the PostgreSQL store (schema ${schemaOf(url)})\n`);
    }
    expect(JSON.parse(quiet(cli('usage', url, '--json')).stderr).error.code).toBe('CLI_NO_STORE');
    expect(existsSync(join(tmp, 'x'))).toBe(false);
    expect(await holdsStore(url)).toBe(false);
  });

  it('checkpoint and verify exit 1 with RABOSH_UNSUPPORTED and say why', () => {
    const url = freshPgUrl('climaint');
    writeTree(join(tmp, 'from'), { 'memories/a.md': 'x' });
    expect(cli('import', join(tmp, 'from'), url).status).toBe(0);
    for (const args of [
      ['verify', url],
      ['checkpoint', url, join(tmp, 'cp')],
    ]) {
      const r = quiet(cli(...args));
      expect(r.status, args[0]).toBe(1);
      expect(r.stderr, args[0]).toBe(
        `rabosh-memory: ${args[0]} is not supported by PostgreSQL stores (the server owns storage, durability and who may connect)\n`,
      );
      const j = JSON.parse(quiet(cli(...args, '--json')).stderr);
      expect(j.error.code, args[0]).toBe('RABOSH_UNSUPPORTED');
    }
    expect(existsSync(join(tmp, 'cp'))).toBe(false);
  });

  it('a wrong password fails with the typed code and quotes neither host nor password', () => {
    const u = new URL(freshPgUrl('clipw'));
    u.password = 'definitely-wrong-pw';
    const r = cli('usage', u.toString(), '--json');
    quiet(r);
    expect(r.stderr).not.toContain('definitely-wrong-pw');
    expect(r.status).toBe(1);
    expect(JSON.parse(r.stderr).error.code).toBe('RABOSH_PG_AUTHENTICATION_FAILED');
  });
});
