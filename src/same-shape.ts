/**
 * Compile-time checks that a public type keeps the shape of the binding's generated one.
 */

/**
 * `true` exactly when `A` and `B` are the same type: a public type that must keep the shape of
 * the binding's generated one says so with `const x: Same<Public, Generated> = true`, which
 * stops compiling when either changes alone.
 */
export type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
