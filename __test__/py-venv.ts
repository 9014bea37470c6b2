// A Python venv holding pinned packages, made once from PyPI and kept under node_modules/.cache
// (named by the hash of the requirements and of the interpreter), so reruns start at once and a
// fresh clone builds it on its first run. Test files running in parallel share one build: the
// first takes a lock directory, the others wait for its ready mark.
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const cache = resolve(import.meta.dirname, '..', 'node_modules', '.cache', 'rabosh-py-venv');

/** Debian's, or whatever python3 the PATH has (Windows: python). */
function interpreter(): { python: string; version: string } {
  for (const python of ['python3', 'python']) {
    const r = spawnSync(python, ['-c', 'import sys, venv; print(sys.version)'], { encoding: 'utf8' });
    if (r.status === 0) return { python, version: r.stdout.trim() };
  }
  throw new Error('no python3 with the venv module on PATH (Debian: apt-get install python3 python3-venv)');
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
};

function run(command: string, args: string[]): Promise<void> {
  return new Promise((done, fail) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const keep = (d: Buffer) => {
      out += d.toString();
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('error', fail);
    child.on('close', (code) => (code === 0 ? done() : fail(new Error(`${command} ${args.join(' ')} exited ${code}:\n${out}`))));
  });
}

/** The venv's python, with `requirements` installed; builds the venv if no run has yet. */
export async function pythonWith(requirements: string): Promise<string> {
  const { python, version } = interpreter();
  const hash = createHash('sha256').update(version).update(readFileSync(requirements)).digest('hex').slice(0, 16);
  const dir = join(cache, hash);
  const bin = process.platform === 'win32' ? join(dir, 'Scripts', 'python.exe') : join(dir, 'bin', 'python');
  const ready = join(dir, '.ready');
  const lock = `${dir}.lock`;
  mkdirSync(cache, { recursive: true });
  for (;;) {
    if (existsSync(ready)) return bin;
    try {
      mkdirSync(lock);
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      // A builder that died (killed test run) leaves its lock: take it over.
      let holder = 0;
      try {
        holder = Number(readFileSync(join(lock, 'pid'), 'utf8'));
      } catch {
        // Not written yet, or the lock is gone already: look again.
      }
      if (holder > 0 && !alive(holder)) rmSync(lock, { recursive: true, force: true });
      else await new Promise((r) => setTimeout(r, 500));
    }
  }
  try {
    writeFileSync(join(lock, 'pid'), String(process.pid));
    rmSync(dir, { recursive: true, force: true });
    await run(python, ['-m', 'venv', dir]);
    await run(bin, ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '-r', requirements]);
    writeFileSync(ready, '');
    return bin;
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}
