/** The one door to the addon: the generated CommonJS loader, shared by the ESM and CJS builds. */
export { NativeMemories, NativeStore, NativeSnapshot } from '../binding.cjs';
export type { NativeDirEntry, NativeImport, NativeMemoryFile, NativeOutcome, NativeStats } from '../binding.cjs';
