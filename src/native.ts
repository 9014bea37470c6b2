/** The one door to the addon: the generated CommonJS loader, shared by the ESM and CJS builds. */
export { NativeMemories, NativeStore, NativeSnapshot, MAX_ACTOR_ID_BYTES, MAX_ACTOR_TYPE_BYTES } from '../binding.cjs';
export type {
  NativeCreate,
  NativeDelete,
  NativeDurability,
  NativeExportedMemory,
  NativeExportPage,
  NativeImport,
  NativeInsert,
  NativeMemoryFile,
  NativeRename,
  NativeStats,
  NativeStoreOptions,
  NativeStrReplace,
  NativeView,
} from '../binding.cjs';
