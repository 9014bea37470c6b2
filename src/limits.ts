/**
 * Every default and limit a host or the app may need to show or check, each defined once: those
 * the Rust crates enforce come from them through the binding (crates/rabosh-node/src/limits.rs),
 * the facade's own are defined here.
 */

export {
  DEFAULT_LOCK_TIMEOUT_MS,
  DEFAULT_MAX_MEMORY_BYTES,
  DEFAULT_VERSION_PAGE,
  MAX_PATH_BYTES,
  MAX_VERSION_PAGE,
  MAX_VIEW_LINES,
} from './native.js';

/** The handler option `viewMaxChars` unless set: the longest file view, in UTF-16 code units. */
export const DEFAULT_VIEW_MAX_CHARS = 16_000;
