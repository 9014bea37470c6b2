export { Rabosh } from './src/store.js';
export type {
  CheckpointInfo,
  CompactInfo,
  Durability,
  RaboshOptions,
  RaboshStats,
  Snapshot,
  StoreCounters,
  StoreHistoryUsage,
  VerifyReport,
} from './src/store.js';
export type { EncryptionOptions, RekeyOptions } from './src/encryption.js';
export { RaboshMemoryToolHandler } from './src/handler.js';
export type { MemoryToolOptions, MemoryUsage, ScopeUsage, ToolOutput } from './src/handler.js';
export {
  DEFAULT_LOCK_TIMEOUT_MS,
  DEFAULT_MAX_MEMORY_BYTES,
  DEFAULT_VERSION_PAGE,
  DEFAULT_VIEW_MAX_CHARS,
  MAX_PATH_BYTES,
  MAX_VERSION_PAGE,
  MAX_VIEW_LINES,
} from './src/limits.js';
export type {
  Actor,
  HistoricView,
  HistoryOptions,
  HistoryUsage,
  HostMemory,
  MemoryVersion,
  MemoryVersionWithContent,
  PutOptions,
  PutResult,
  RemoveResult,
  RevertResult,
  VersionOperation,
  VersionPage,
  VersionQuery,
} from './src/history.js';
export type { ExportedMemory, ImportOptions, ImportResult, MemoryFile } from './src/bulk.js';
export type { DirectoryEntry, DirectoryPage, ExportStreamOptions, PageOptions } from './src/browse.js';
export type { ListedMemory, ListOptions, MemoryPage } from './src/listing-page.js';
export type { ChangeKind, ChangesOptions, ChangesPage, MemoryChange } from './src/changes.js';
export type {
  ConflictKind,
  ConflictPolicy,
  DeleteOptions,
  IncrementalOptions,
  KeptVersion,
  SkipReason,
  SyncChange,
  SyncConflict,
  SyncConflictInfo,
  SyncDeletion,
  SyncEveryOptions,
  SyncOptions,
  SyncReport,
  SyncRunner,
  SyncSide,
  SyncSkip,
} from './src/sync/types.js';
export { faultAnswer, memoryResult, memoryTool } from './src/tool.js';
export type { MemoryToolUse } from './src/tool.js';
export { MemoryPath } from './src/path.js';
export {
  BackendUnavailableError,
  CommitOutcomeUnknownError,
  CorruptionError,
  EncryptionKeyRequiredError,
  HostedAnswerError,
  InvalidArgumentError,
  InvalidOptionError,
  IoError,
  NotAStoreError,
  NotEncryptedError,
  PoisonedError,
  PreconditionFailedError,
  PostgresError,
  RaboshError,
  StoreClosedError,
  StoreLockedError,
  StoreBusyError,
  UnsupportedError,
  UnsupportedFormatError,
  WrongKeyError,
} from './src/errors.js';
export type { LockHolder, PostgresErrorCode, RaboshErrorCode } from './src/errors.js';
