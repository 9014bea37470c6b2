// Whether a store records history is read from what open found, never from `db.stats()`, whose
// counts walk the whole key directory of a store not listed yet (seconds, and the decoded key
// directory kept, at a million memories): the inspector asks it before it serves anything and
// the history commands before they answer. Each is run here with `stats()` made to throw in its
// process (a preload patches the library the bin imports), and answers as before.
import { spawn, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Rabosh, RaboshMemoryToolHandler } from '../index.js';
import { makeTempDir, removeDir } from './tmp-dir.js';

const root = resolve(import.meta.dirname, '..');
const bin = join(root, 'apps', 'cli', 'dist', 'main.js');
let work: string;
let preload: string;
let plain: string;
let recorded: string;

beforeAll(async () => {
  work = makeTempDir('rabosh-history-flag');
  preload = join(work, 'no-stats.mjs');
  const lib = pathToFileURL(join(root, 'dist', 'esm', 'index.js')).href;
  writeFileSync(
    preload,
    `import { Rabosh } from ${JSON.stringify(lib)};\nRabosh.prototype.stats = () => { throw new Error('stats() was called'); };\n`,
  );
  plain = join(work, 'plain');
  recorded = join(work, 'recorded');
  for (const [dir, history] of [
    [plain, false],
    [recorded, true],
  ] as const) {
    const h = await RaboshMemoryToolHandler.open(dir, { history });
    await h.execute({ command: 'create', path: '/memories/a.md', file_text: 'a' });
    await h.close();
  }
});

afterAll(() => removeDir(work));

const cli = (...args: string[]) => spawnSync(process.execPath, ['--import', preload, bin, ...args], { encoding: 'utf8' });

/** `ui <store> --json` with the preload: the store info its page reads, then a clean stop. */
async function uiInfo(store: string): Promise<{ history: boolean }> {
  const child = spawn(process.execPath, ['--import', preload, bin, 'ui', store, '--json'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((done) => child.once('exit', done));
  try {
    const url = await new Promise<string>((found, failed) => {
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        const m = /"url":\s*"([^"]+)"/.exec(out);
        if (m) found(m[1]!);
      });
      void exited.then((code) => failed(new Error(`ui exited with ${code}: ${err}`)));
    });
    const res = await fetch(`${url}api/info`);
    expect(res.status).toBe(200);
    return (await res.json()) as { history: boolean };
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}

describe('the history flag, without stats()', () => {
  it('the preload does make stats() throw', async () => {
    const r = cli('stats', plain);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain('stats() was called');
  });

  it('the inspector tells the page whether history is recorded', async () => {
    expect((await uiInfo(plain)).history).toBe(false);
    expect((await uiInfo(recorded)).history).toBe(true);
  });

  it('history refuses a store without history, and lists one with it', () => {
    const refused = cli('history', plain, '/memories/a.md');
    expect(refused.stderr).toContain('does not record history');
    const listed = cli('history', recorded, '/memories/a.md', '--json');
    expect(listed.stderr).toBe('');
    expect(listed.status).toBe(0);
    expect(JSON.parse(listed.stdout).data).toHaveLength(1);
  });

  it('history-on says since when history is recorded', async () => {
    const db = await Rabosh.open(recorded);
    const since = db.historySince;
    await db.close();
    expect(since).toBeInstanceOf(Date);
    const on = cli('history-on', recorded, '--json');
    expect(on.stderr).toBe('');
    expect(JSON.parse(on.stdout)).toEqual({ history: true, since: since!.toISOString() });
  });
});
