/**
 * Faults (not outcomes) as typed classes. The binding puts a stable `code` on every error it
 * raises; this module only turns the code into a class.
 */

import type { NativeLockHolder } from './native.js';
import type { Same } from './same-shape.js';

/** Every code a {@link RaboshError} carries, one per fault the binding raises. */
export type RaboshErrorCode =
  | 'RABOSH_IO'
  | 'RABOSH_CORRUPTION'
  | 'RABOSH_UNSUPPORTED_FORMAT'
  | 'RABOSH_STORE_LOCKED'
  | 'RABOSH_STORE_BUSY'
  | 'RABOSH_POISONED'
  | 'RABOSH_CLOSED'
  | 'RABOSH_NOT_A_STORE'
  | 'RABOSH_INVALID_ARGUMENT'
  | 'RABOSH_INVALID_OPTION'
  | 'RABOSH_PRECONDITION_FAILED'
  | 'RABOSH_UNSUPPORTED'
  | 'RABOSH_PANIC'
  | 'RABOSH_WRONG_KEY'
  | 'RABOSH_KEY_REQUIRED'
  | 'RABOSH_NOT_ENCRYPTED'
  | 'RABOSH_HOSTED_ANSWER'
  | PostgresErrorCode;

/** The codes of a PostgreSQL store's faults (a URL passed to `Rabosh.open`). */
export type PostgresErrorCode =
  | 'RABOSH_PG_INVALID_URL'
  | 'RABOSH_PG_UNREACHABLE'
  | 'RABOSH_PG_TIMEOUT'
  | 'RABOSH_PG_AUTHENTICATION_FAILED'
  | 'RABOSH_PG_DATABASE_MISSING'
  | 'RABOSH_PG_TLS'
  | 'RABOSH_PG_CONNECTION_LOST'
  | 'RABOSH_PG_COMMIT_OUTCOME_UNKNOWN'
  | 'RABOSH_PG_CONFLICT'
  | 'RABOSH_PG_SCHEMA_TOO_NEW'
  | 'RABOSH_PG_PERMISSION_DENIED'
  | 'RABOSH_PG_SERVER';

/** Base of every fault; `code` is stable, the message is for operators. */
export class RaboshError extends Error {
  /**
   * Stable, machine-readable kind of the fault; branch on this (or on the subclass), never on the
   * message. Each subclass has its own fixed code (`IoError` → `RABOSH_IO`, …); a bare
   * `RaboshError` carries `RABOSH_PANIC`, a bug below the facade.
   */
  readonly code: RaboshErrorCode;
  constructor(code: RaboshErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = 'RaboshError';
  }
}

/** An operating-system IO call failed. */
export class IoError extends RaboshError {
  /**
   * Set only by `expireBefore`: how many memories it expired (committed, durable) before
   * reclaiming their space failed. The deletions stand; retry `compact()` for the space.
   */
  readonly expired: number | undefined;
  constructor(message: string, options?: { cause?: unknown; expired?: number }) {
    super('RABOSH_IO', message, options);
    this.name = 'IoError';
    this.expired = options?.expired;
  }
}

/** Data on disk would lose or misreport an acknowledged commit. */
export class CorruptionError extends RaboshError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('RABOSH_CORRUPTION', message, options);
    this.name = 'CorruptionError';
  }
}

/** A file was written by a newer format version than this build reads. */
export class UnsupportedFormatError extends RaboshError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('RABOSH_UNSUPPORTED_FORMAT', message, options);
    this.name = 'UnsupportedFormatError';
  }
}

/**
 * A host edit's precondition did not hold: `ifMatch` named a hash the memory no longer has, or
 * `ifNoneMatch: '*'` met an existing memory. `currentSha256` is the memory's hash now (null: there
 * is no memory). Read it again, merge, and retry with the new hash.
 */
export class PreconditionFailedError extends RaboshError {
  /** The memory's content hash now (hex SHA-256), or null when there is no memory. */
  readonly currentSha256: string | null;
  constructor(message: string, currentSha256: string | null) {
    super('RABOSH_PRECONDITION_FAILED', message);
    this.name = 'PreconditionFailedError';
    this.currentSha256 = currentSha256;
  }
}

/** A write or fsync failed earlier; writes are refused until the store is reopened. */
export class PoisonedError extends RaboshError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('RABOSH_POISONED', message, options);
    this.name = 'PoisonedError';
  }
}

/** The store (or the handler) was closed. */
export class StoreClosedError extends RaboshError {
  constructor(message = 'store is closed', options?: { cause?: unknown }) {
    super('RABOSH_CLOSED', message, options);
    this.name = 'StoreClosedError';
  }
}

/** Opened with `create: false` where no store exists (absent, empty, or not a store); nothing was written. */
export class NotAStoreError extends RaboshError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('RABOSH_NOT_A_STORE', message, options);
    this.name = 'NotAStoreError';
  }
}

/** A handler or store option is out of range; the message names the option and the value. */
export class InvalidOptionError extends RaboshError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('RABOSH_INVALID_OPTION', message, options);
    this.name = 'InvalidOptionError';
  }
}

/** The caller asked for something the store cannot do (e.g. a non-empty checkpoint target). */
export class InvalidArgumentError extends RaboshError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('RABOSH_INVALID_ARGUMENT', message, options);
    this.name = 'InvalidArgumentError';
  }
}

/** The store cannot do this at all (the engine's maintenance on a PostgreSQL store). */
export class UnsupportedError extends RaboshError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('RABOSH_UNSUPPORTED', message, options);
    this.name = 'UnsupportedError';
  }
}

/**
 * The store is encrypted and the key given does not open it (its key check failed). Nothing
 * was read or written; open again with the right key.
 */
export class WrongKeyError extends RaboshError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('RABOSH_WRONG_KEY', message, options);
    this.name = 'WrongKeyError';
  }
}

/** The store is encrypted and was opened without `encryption`; nothing was read or written. */
export class EncryptionKeyRequiredError extends RaboshError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('RABOSH_KEY_REQUIRED', message, options);
    this.name = 'EncryptionKeyRequiredError';
  }
}

/**
 * A key was given for a store that holds plain data (encrypt it first: `rabosh-memory encrypt`),
 * or a plain operation was asked of an encrypted one. Nothing was written.
 */
export class NotEncryptedError extends RaboshError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('RABOSH_NOT_ENCRYPTED', message, options);
    this.name = 'NotEncryptedError';
  }
}

/**
 * `db.sync`: the hosted memory store answered something the sync cannot use (not JSON, a memory
 * without its fields, a listing whose pages never end). The sync stops; what it committed locally
 * before stands, and the next sync starts over from the store's records.
 */
export class HostedAnswerError extends RaboshError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('RABOSH_HOSTED_ANSWER', message, options);
    this.name = 'HostedAnswerError';
  }
}

/**
 * A PostgreSQL store's fault; `code` says which (`RABOSH_PG_*`). Messages never hold a host
 * name, an address or a password. Subclasses group what a caller does about it.
 */
export class PostgresError extends RaboshError {
  declare readonly code: PostgresErrorCode;
  constructor(code: PostgresErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
    this.name = 'PostgresError';
  }
}

/**
 * The server could not be used: unreachable or refused, a timeout, a wrong user or password, a
 * missing database, TLS refused, or the connection lost before the commit was sent (nothing
 * was committed; the next call reconnects).
 */
export class BackendUnavailableError extends PostgresError {
  constructor(code: PostgresErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
    this.name = 'BackendUnavailableError';
  }
}

/**
 * The connection broke while COMMIT was in flight: the command may or may not have committed.
 * The handle goes on (on the node that now takes writes, after a failover); read to learn
 * which, and never just send the command again where running it twice would differ.
 */
export class CommitOutcomeUnknownError extends PostgresError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('RABOSH_PG_COMMIT_OUTCOME_UNKNOWN', message, options);
    this.name = 'CommitOutcomeUnknownError';
  }
}

const UNAVAILABLE: readonly string[] = [
  'RABOSH_PG_UNREACHABLE',
  'RABOSH_PG_TIMEOUT',
  'RABOSH_PG_AUTHENTICATION_FAILED',
  'RABOSH_PG_DATABASE_MISSING',
  'RABOSH_PG_TLS',
  'RABOSH_PG_CONNECTION_LOST',
];

/** Who holds a store's lock. */
export interface LockHolder {
  /** Process id of the holder, or null when the lock file does not say. */
  pid: number | null;
  /** Host name the holder ran on, or null when unknown; compare it before trusting `pid`. */
  host: string | null;
  /** When the holder process started, when known. */
  startedAt: Date | null;
  /** A process with that pid and start time runs on this host now. */
  isRunning: boolean;
  /** The holder is this very process (the store is already open here). */
  thisProcess: boolean;
}

// The public holder is the binding's, with its start as a Date and unknowns as null: a field
// added or renamed on either side alone stops this compiling.
const holderMatchesBinding: Same<keyof LockHolder, Exclude<keyof NativeLockHolder, 'startedAtMs'> | 'startedAt'> = true;
void holderMatchesBinding;

/** Another open handle (another process, or this one) holds the store. Never force it. */
export class StoreLockedError extends RaboshError {
  /** Who holds the lock, as recorded by the holder; fields it could not learn are null/false. */
  readonly holder: LockHolder;
  constructor(message: string, holder: LockHolder, options?: { cause?: unknown }) {
    super('RABOSH_STORE_LOCKED', message, options);
    this.name = 'StoreLockedError';
    this.holder = holder;
  }
}

/**
 * A shared store's commit lock stayed held by another process (or a program holding its
 * `WRITER` file) for longer than the `lockTimeout` store option — a stopped or stuck holder.
 * Nothing was done; the call may be retried once the holder continues or exits.
 */
export class StoreBusyError extends RaboshError {
  /** Who holds the commit lock, as far as the OS tells (on Linux its pid); else null/false. */
  readonly holder: LockHolder;
  constructor(message: string, holder: LockHolder, options?: { cause?: unknown }) {
    super('RABOSH_STORE_BUSY', message, options);
    this.name = 'StoreBusyError';
    this.holder = holder;
  }
}

type Plain = { code?: unknown; message?: unknown; holder?: unknown; expired?: unknown };

/** The public holder from the binding's (`NativeLockHolder`), read defensively: it rode on an error. */
function holderOf(raw: unknown): LockHolder {
  const h: Partial<Record<keyof NativeLockHolder, unknown>> = typeof raw === 'object' && raw !== null ? raw : {};
  return {
    pid: typeof h.pid === 'number' ? h.pid : null,
    host: typeof h.host === 'string' ? h.host : null,
    startedAt: typeof h.startedAtMs === 'number' ? new Date(h.startedAtMs) : null,
    isRunning: h.isRunning === true,
    thisProcess: h.thisProcess === true,
  };
}

/** The typed form of an error the binding raised; anything else is returned unchanged. */
export function fromNative(e: unknown): unknown {
  if (e instanceof RaboshError || typeof e !== 'object' || e === null) return e;
  const { code, message, holder, expired } = e as Plain;
  const msg = typeof message === 'string' ? message : String(message);
  const cause = { cause: e };
  switch (code) {
    case 'RABOSH_IO':
      return new IoError(msg, typeof expired === 'number' ? { ...cause, expired } : cause);
    case 'RABOSH_CORRUPTION':
      return new CorruptionError(msg, cause);
    case 'RABOSH_UNSUPPORTED_FORMAT':
      return new UnsupportedFormatError(msg, cause);
    case 'RABOSH_STORE_LOCKED':
      return new StoreLockedError(msg, holderOf(holder), cause);
    case 'RABOSH_STORE_BUSY':
      return new StoreBusyError(msg, holderOf(holder), cause);
    case 'RABOSH_POISONED':
      return new PoisonedError(msg, cause);
    case 'RABOSH_CLOSED':
      return new StoreClosedError(msg, cause);
    case 'RABOSH_NOT_A_STORE':
      return new NotAStoreError(msg, cause);
    case 'RABOSH_INVALID_OPTION':
      return new InvalidOptionError(msg, cause);
    case 'RABOSH_INVALID_ARGUMENT':
      return new InvalidArgumentError(msg, cause);
    case 'RABOSH_UNSUPPORTED':
      return new UnsupportedError(msg, cause);
    case 'RABOSH_WRONG_KEY':
      return new WrongKeyError(msg, cause);
    case 'RABOSH_KEY_REQUIRED':
      return new EncryptionKeyRequiredError(msg, cause);
    case 'RABOSH_NOT_ENCRYPTED':
      return new NotEncryptedError(msg, cause);
    case 'RABOSH_PANIC':
      return new RaboshError('RABOSH_PANIC', msg, cause);
    case 'RABOSH_PG_COMMIT_OUTCOME_UNKNOWN':
      return new CommitOutcomeUnknownError(msg, cause);
    default:
      if (typeof code === 'string' && UNAVAILABLE.includes(code)) {
        return new BackendUnavailableError(code as PostgresErrorCode, msg, cause);
      }
      if (typeof code === 'string' && code.startsWith('RABOSH_PG_')) {
        return new PostgresError(code as PostgresErrorCode, msg, cause);
      }
      return e;
  }
}

/** Runs a native call, typing whatever it throws or rejects with. */
export async function native<T>(call: () => T | Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (e) {
    throw fromNative(e);
  }
}

/** The same for a call that stays synchronous. */
export function nativeSync<T>(call: () => T): T {
  try {
    return call();
  } catch (e) {
    throw fromNative(e);
  }
}
