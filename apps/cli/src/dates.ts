/** The `--before` value of `expire`: an ISO 8601 date/time, epoch milliseconds, or an age (30d, 12h, 90m). */
import { CliError, EXIT } from './exit.js';

const AGE = /^(\d+)([dhm])$/;
const UNIT_MS = { d: 86_400_000, h: 3_600_000, m: 60_000 } as const;
const ISO = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,3})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;

export function parseBefore(raw: string, now: number = Date.now()): Date {
  const text = raw.trim();
  const age = AGE.exec(text);
  let ms: number;
  if (age) ms = now - Number(age[1]) * UNIT_MS[age[2] as keyof typeof UNIT_MS];
  else if (/^\d+$/.test(text)) ms = Number(text);
  else if (ISO.test(text)) ms = Date.parse(text.replace(' ', 'T'));
  else ms = Number.NaN;
  if (!Number.isFinite(ms)) {
    throw new CliError(
      `invalid --before ${JSON.stringify(raw)}: use an ISO 8601 date (2025-01-31, 2025-01-31T12:00:00Z), epoch milliseconds, or an age such as 30d, 12h, 90m`,
      EXIT.usage,
      'CLI_USAGE',
    );
  }
  return new Date(ms);
}
