/** Types for scripts/release-layout.mjs (imported by __test__/shipping-npm.test.ts). */
export declare function releaseProblems(root: string, want?: { binaries?: boolean; optionalDependencies?: boolean }): string[];
