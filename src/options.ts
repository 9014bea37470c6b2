/**
 * How every options object is checked: values shown safely in the refusal, and one rule for
 * keys — an unknown (or misspelt) key is refused with `InvalidOptionError` naming it, never
 * ignored (a caller who wrote `exclusiv: true` must not believe the store is held alone).
 */

import { InvalidOptionError } from './errors.js';

/** A value as a refusal shows it, whatever it is (a string quoted; never a throw). */
export function show(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  try {
    return String(value);
  } catch {
    return Object.prototype.toString.call(value);
  }
}

export function refuse(option: string, value: unknown, why: string): never {
  throw new InvalidOptionError(`invalid option ${option}: ${show(value)} (${why})`);
}

/** `options` as a record (undefined and null: empty); anything but an object is refused. */
export function optionRecord(options: unknown): Record<string, unknown> {
  if (options === undefined || options === null) return {};
  if (typeof options !== 'object') throw new InvalidOptionError(`invalid options: ${show(options)} (must be an object)`);
  return options as Record<string, unknown>;
}

/** Refuses the first key of `o` that is not in `known`. */
export function refuseUnknownKeys(o: Record<string, unknown>, known: readonly string[]): void {
  for (const key of Object.keys(o)) {
    if (!known.includes(key)) refuse(key, o[key], 'unknown option');
  }
}
