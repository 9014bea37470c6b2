// npm, run the way the test runner was started: under `npm test` npm names its own entry point
// (run with this Node, no shell needed); otherwise the `npm` on PATH.
import { execFileSync, type ExecFileSyncOptions } from 'node:child_process';

const isWindows = process.platform === 'win32';

export function npm(args: string[], cwd: string, extraEnv: NodeJS.ProcessEnv = {}): string {
  const npmCli = process.env['npm_execpath'];
  const opts: ExecFileSyncOptions = {
    cwd,
    encoding: 'utf8',
    stdio: 'pipe',
    env: { ...process.env, npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false', ...extraEnv },
  };
  if (npmCli?.endsWith('.js')) return execFileSync(process.execPath, [npmCli, ...args], opts) as string;
  return execFileSync(isWindows ? 'npm.cmd' : 'npm', args, { ...opts, shell: isWindows }) as string;
}
