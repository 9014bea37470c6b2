/**
 * Progress for long work, only on a terminal: a bar on stderr when stdout is a TTY and the
 * output is for a person (not --json). Piped or scripted runs get no escape codes at all.
 */
import cliProgress from 'cli-progress';

export interface Progress {
  tick(): void;
  stop(): void;
}

const NONE: Progress = { tick() {}, stop() {} };

export function wantProgress(stdoutIsTTY: boolean | undefined, json: boolean): boolean {
  return stdoutIsTTY === true && !json;
}

export function startProgress(enabled: boolean, label: string, total: number): Progress {
  if (!enabled || total === 0) return NONE;
  const bar = new cliProgress.SingleBar(
    { format: `${label} [{bar}] {value}/{total} {percentage}%`, stream: process.stderr, hideCursor: true, clearOnComplete: true },
    cliProgress.Presets.shades_classic,
  );
  bar.start(total, 0);
  return {
    tick: () => bar.increment(),
    stop: () => bar.stop(),
  };
}
