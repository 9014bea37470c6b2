// The history subcommands as a real process: list, show, revert, redact, with --json; they refuse
// an empty or non-store directory (creating nothing) and a store without history; the CLI's import
// and expire record versions in a store that records history (history is the store's).
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

import { RaboshMemoryToolHandler } from '../index.js';
import { cli, json } from './cli-harness.js';
import { makeTempDir, removeDir } from './tmp-dir.js';

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach(removeDir));

describe('rabosh-memory history / show / revert / redact', () => {
  it('lists, shows, reverts and redacts', async () => {
    const dir = makeTempDir('rabosh-history-cli');
    dirs.push(dir);
    const h = await RaboshMemoryToolHandler.open(dir, { history: true, actor: { type: 'user', id: 'u1' } });
    await h.execute({ command: 'create', path: '/memories/n.md', file_text: 'first' });
    await h.execute({ command: 'str_replace', path: '/memories/n.md', old_str: 'first', new_str: 'second' });
    await h.close();

    const listed = cli('history', dir, '/memories/n.md', '--json');
    expect(listed.status).toBe(0);
    const versions = json(listed).data;
    expect(versions.map((v: { operation: string }) => v.operation)).toEqual(['modified', 'created']);
    expect(versions[0].actor).toEqual({ type: 'user', id: 'u1' });
    const human = cli('history', dir, '/memories', '--prefix');
    expect(human.stdout.trim().split('\n')).toHaveLength(2);
    expect(human.stdout).toContain('user:u1');

    const shown = json(cli('show', dir, versions[1].id, '--json'));
    expect(shown).toMatchObject({ content: 'first', operation: 'created', path: '/memories/n.md' });
    expect(cli('show', dir, '0'.repeat(32)).status).toBe(1);

    const reverted = cli('revert', dir, '/memories/n.md', versions[1].id, '--json');
    expect(reverted.status).toBe(0);
    expect(json(reverted).versionId).toMatch(/^[0-9a-f]{32}$/);
    expect(cli('view', dir, '/memories/n.md').stdout).toContain('first');

    const redacted = json(cli('redact', dir, versions[1].id, '--json'));
    expect(redacted).toMatchObject({ id: versions[1].id, path: null, contentSha256: null });
    expect(json(cli('show', dir, versions[1].id, '--json')).content).toBeNull();
    const bad = cli('redact', dir, 'nope', '--json');
    expect(bad.status).toBe(1);
    expect(JSON.parse(bad.stderr).error.code).toBe('RABOSH_INVALID_ARGUMENT');
  });

  it('refuse an empty or non-store directory and create nothing', () => {
    const root = makeTempDir('rabosh-history-cli-none');
    dirs.push(root);
    const empty = join(root, 'empty');
    mkdirSync(empty);
    const other = join(root, 'other');
    mkdirSync(other);
    writeFileSync(join(other, 'notes.txt'), 'not a store');
    const id = '0'.repeat(32);
    for (const dir of [empty, other, join(root, 'missing')]) {
      for (const args of [['history', dir, '/memories/a'], ['show', dir, id], ['revert', dir, '/memories/a', id], ['redact', dir, id]]) {
        const r = cli(...args, '--json');
        expect(r.status, `${args.join(' ')}`).not.toBe(0);
        expect(r.stdout).toBe('');
      }
    }
    expect(readdirSync(empty)).toEqual([]);
    expect(readdirSync(other)).toEqual(['notes.txt']);
    expect(readdirSync(root).sort()).toEqual(['empty', 'other']);
  });

  it('say so on a store without history', async () => {
    const dir = makeTempDir('rabosh-history-cli-off');
    dirs.push(dir);
    const h = await RaboshMemoryToolHandler.open(dir);
    await h.execute({ command: 'create', path: '/memories/n.md', file_text: 'x' });
    await h.close();
    const r = cli('history', dir, '/memories/n.md');
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('does not record history');
    expect(JSON.parse(cli('history', dir, '/memories/n.md', '--json').stderr).error.code).toBe('CLI_NO_HISTORY');
  });

  it("import and expire record versions in a store with history, like every change", async () => {
    const root = makeTempDir('rabosh-history-cli-import');
    dirs.push(root);
    const dir = join(root, 'store');
    const h = await RaboshMemoryToolHandler.open(dir, { history: true });
    await h.close();
    const from = join(root, 'from');
    mkdirSync(join(from, 'memories'), { recursive: true });
    writeFileSync(join(from, 'memories', 'i.md'), 'imported');
    expect(cli('import', from, dir).status).toBe(0);
    expect(cli('expire', dir, '--before', String(Date.now() + 60_000)).status).toBe(0);
    const listed = json(cli('history', dir, '/memories/i.md', '--json')).data;
    expect(listed.map((v: { operation: string }) => v.operation)).toEqual(['deleted', 'created']);
  });
});
