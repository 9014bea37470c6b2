/** The one door to the addon: the generated CommonJS loader, shared by the ESM and CJS builds. */
export { NativeMemories, NativeStore, NativeSnapshot } from '../binding.cjs';
export type {
  NativeCreate,
  NativeDelete,
  NativeExportedMemory,
  NativeImport,
  NativeInsert,
  NativeMemoryFile,
  NativeRename,
  NativeStats,
  NativeStrReplace,
  NativeView,
} from '../binding.cjs';
