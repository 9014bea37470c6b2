/** The one door to the addon: the generated CommonJS loader, shared by the ESM and CJS builds. */
export {
  NativeMemories,
  NativeStore,
  NativeSnapshot,
  DEFAULT_LOCK_TIMEOUT_MS,
  DEFAULT_MAX_MEMORY_BYTES,
  DEFAULT_VERSION_PAGE,
  MAX_ACTOR_ID_BYTES,
  MAX_ACTOR_TYPE_BYTES,
  MAX_PATH_BYTES,
  MAX_VERSION_PAGE,
  MAX_VIEW_LINES,
} from '../binding.cjs';
export type {
  NativeCreate,
  NativeDelete,
  NativeDurability,
  NativeActor,
  NativeExportedMemory,
  NativeExportPage,
  NativeHistoryOptions,
  NativeHistoryRequest,
  NativeImport,
  NativeInsert,
  NativeLockHolder,
  NativeMemoryFile,
  NativeRename,
  NativeStoreOptions,
  NativeStrReplace,
  NativeView,
} from '../binding.cjs';
// The reports the facade hands on unchanged: generated under their public names, with their
// documentation, from crates/rabosh-node/src/reports.rs.
export type { CheckpointInfo, CompactInfo, HistoryUsage, ScopeUsage, StoreCounters, VerifyReport } from '../binding.cjs';
