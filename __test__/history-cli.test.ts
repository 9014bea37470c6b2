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
      for (const args of [
        ['history', dir, '/memories/a'],
        ['show', dir, id],
        ['revert', dir, '/memories/a', id],
        ['redact', dir, id],
      ]) {
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

  it('say how to turn history on from the shell, and history-on does it from then on', async () => {
    const dir = makeTempDir('rabosh-history-cli-on');
    dirs.push(dir);
    const h = await RaboshMemoryToolHandler.open(dir);
    await h.execute({ command: 'create', path: '/memories/old.md', file_text: 'before' });
    await h.close();
    expect(cli('history', dir, '/memories/old.md').stderr).toBe(
      `rabosh-memory: ${dir} does not record history: turn it on with \`rabosh-memory history-on ${dir}\` (changes are recorded from then on, not before)\n`,
    );
    const on = cli('history-on', dir, '--json');
    expect(on.status, on.stderr).toBe(0);
    expect(json(on)).toMatchObject({ history: true });
    expect(Date.parse(json(on).since)).toBeGreaterThan(0);
    // Nothing before it is a version; the next change is.
    expect(cli('history', dir, '/memories/old.md').stdout).toBe('no versions of /memories/old.md\n');
    const later = await RaboshMemoryToolHandler.open(dir);
    await later.execute({ command: 'str_replace', path: '/memories/old.md', old_str: 'before', new_str: 'after' });
    await later.close();
    expect(json(cli('history', dir, '/memories/old.md', '--json')).data.map((v: { operation: string }) => v.operation)).toEqual([
      'modified',
    ]);
    // Asked again, it stays on and says since when.
    expect(json(cli('history-on', dir, '--json')).since).toBe(json(on).since);
  });

  it('stats prints the history figures in words, and as numbers with --json', async () => {
    const dir = makeTempDir('rabosh-history-cli-stats');
    dirs.push(dir);
    const h = await RaboshMemoryToolHandler.open(dir, { history: true });
    await h.execute({ command: 'create', path: '/memories/n.md', file_text: 'first' });
    await h.execute({ command: 'str_replace', path: '/memories/n.md', old_str: 'first', new_str: 'second' });
    await h.close();
    const human = cli('stats', dir);
    expect(human.status).toBe(0);
    expect(human.stdout).not.toContain('[object Object]');
    expect(human.stdout).toMatch(/^history +2 versions, 11 B \(11 bytes\)$/m);
    expect(json(cli('stats', dir, '--json')).history).toEqual({ since: expect.any(String), versions: 2, bytes: 11 });
  });

  it('history follows a renamed memory to its old name, as the inspector does', async () => {
    const dir = makeTempDir('rabosh-history-cli-rename');
    dirs.push(dir);
    const h = await RaboshMemoryToolHandler.open(dir, { history: true });
    await h.execute({ command: 'create', path: '/memories/a.md', file_text: 'one' });
    await h.execute({ command: 'str_replace', path: '/memories/a.md', old_str: 'one', new_str: 'two' });
    await h.execute({ command: 'rename', old_path: '/memories/a.md', new_path: '/memories/b.md' });
    const memoryId = (await h.versions({ path: '/memories/b.md', limit: 1 })).data[0]!.memoryId;
    const all = (await h.versions({ memoryId, limit: 100 })).data.map((v) => v.id);
    await h.close();
    const listed = json(cli('history', dir, '/memories/b.md', '--json')).data;
    expect(listed.map((v: { operation: string }) => v.operation)).toEqual(['renamed', 'modified', 'created']);
    expect(listed.map((v: { path: string }) => v.path)).toEqual(['/memories/b.md', '/memories/a.md', '/memories/a.md']);
    expect(listed.map((v: { id: string }) => v.id)).toEqual(all);
  });

  it('revert, import and expire record the CLI as their actor', async () => {
    const root = makeTempDir('rabosh-history-cli-actor');
    dirs.push(root);
    const dir = join(root, 'store');
    const h = await RaboshMemoryToolHandler.open(dir, { history: true });
    await h.execute({ command: 'create', path: '/memories/n.md', file_text: 'first' });
    await h.execute({ command: 'str_replace', path: '/memories/n.md', old_str: 'first', new_str: 'second' });
    const first = (await h.versions({ path: '/memories/n.md', limit: 100 })).data.at(-1)!.id;
    await h.close();
    expect(cli('revert', dir, '/memories/n.md', first).status).toBe(0);
    const from = join(root, 'from');
    mkdirSync(join(from, 'memories'), { recursive: true });
    writeFileSync(join(from, 'memories', 'i.md'), 'imported');
    expect(cli('import', from, dir).status).toBe(0);
    expect(cli('expire', dir, '--before', String(Date.now() + 60_000)).status).toBe(0);
    const cliActor = { type: 'user', id: 'cli' };
    const byPath = (p: string) =>
      json(cli('history', dir, p, '--json')).data.map((v: { operation: string; actor: unknown }) => [v.operation, v.actor]);
    expect(byPath('/memories/n.md')).toEqual([
      ['deleted', cliActor],
      ['modified', cliActor],
      ['modified', null],
      ['created', null],
    ]);
    expect(byPath('/memories/i.md')).toEqual([
      ['deleted', cliActor],
      ['created', cliActor],
    ]);
    expect(cli('history', dir, '/memories/n.md').stdout).toContain('user:cli');
  });

  it('import and expire record versions in a store with history, like every change', async () => {
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
