/** The one door to the addon: the generated CommonJS loader, shared by the ESM and CJS builds. */
export { NativeMemories, NativeStore, NativeSnapshot } from '../binding.cjs';
export type {
  NativeCreate,
  NativeDelete,
  NativeDurability,
  NativeExportedMemory,
  NativeImport,
  NativeInsert,
  NativeMemoryFile,
  NativeRename,
  NativeStats,
  NativeStoreOptions,
  NativeStrReplace,
  NativeView,
} from '../binding.cjs';
