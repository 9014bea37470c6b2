/**
 * Progress for long work, only on a terminal: a bar on stderr when stdout is a TTY and the
 * output is for a person (not --json). Piped or scripted runs get no escape codes at all.
 */
import cliProgress from 'cli-progress';

export interface Progress {
  tick(): void;
  stop(): void;
}

/** Where progress is drawn: the CLI's stderr (the bar draws only when that is a terminal too). */
export interface ProgressStream {
  write(s: string): unknown;
  isTTY?: boolean;
}

const NONE: Progress = { tick() {}, stop() {} };

export function wantProgress(stdoutIsTTY: boolean | undefined, json: boolean): boolean {
  return stdoutIsTTY === true && !json;
}

export function startProgress(enabled: boolean, label: string, total: number, stream: ProgressStream): Progress {
  if (!enabled || total === 0) return NONE;
  const bar = new cliProgress.SingleBar(
    {
      format: `${label} [{bar}] {value}/{total} {percentage}%`,
      stream: stream as NodeJS.WritableStream,
      hideCursor: true,
      clearOnComplete: true,
    },
    cliProgress.Presets.shades_classic,
  );
  bar.start(total, 0);
  return {
    tick: () => bar.increment(),
    stop: () => bar.stop(),
  };
}

/** One line saying what a step that cannot count its progress is doing; erased when it ends. */
export function startStatus(enabled: boolean, text: string, stream: ProgressStream): Progress {
  if (!enabled) return NONE;
  stream.write(text);
  let stopped = false;
  return {
    tick() {},
    stop: () => {
      if (stopped) return;
      stopped = true;
      stream.write('\r\u001b[K');
    },
  };
}
