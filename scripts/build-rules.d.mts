/** Types for scripts/build-rules.mjs (imported by __test__/shipping-rules.test.ts). */
export declare const STORE_DIR_FILES: Set<string>;
export declare const COMPACT_CALLERS: ReadonlyArray<{ file: string; fn: string }>;
export declare function stripComments(text: string): string;
export declare function facadeFiles(root: string): string[];
export declare function pathImportViolations(root: string): string[];
export declare function compactFiles(root: string): string[];
export declare function compactViolations(root: string): string[];
export declare function importCycles(root: string): string[];
export declare function dependencyViolations(root: string): string[];
