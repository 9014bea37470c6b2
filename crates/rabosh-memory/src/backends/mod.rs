//! The backends of this crate under the seam (`backend.rs`): the embedded engine and an
//! in-memory map (the longhand model tests compare against). PostgreSQL lives in a crate of its
//! own, `rabosh-memory-postgres`, built on `backend_kit` alone.
//!
//! What a new backend implements: `ReadView` (get, meta, prefix scans) and `Backend::transact`
//! (run the body on the newest state, commit its `WriteSet` as one unit), in a module of its own
//! here, or in a crate of its own on `backend_kit` (whose module doc says what it guarantees).
//! Rows are opaque to it. A backend that keeps a listing aggregate (as the embedded engine's
//! per-directory totals and index, and PostgreSQL's summary table, do) keeps it from
//! `listing_delta::size_changes` of each write set, in the same commit, and answers
//! `dir_summary`/`usage` from it; one without answers them by the default scans. Every backend
//! calls `size_changes` before it commits either way: it refuses a memory row staged without an
//! intent, which would leave the aggregates behind.

pub mod embedded;
pub mod in_memory;
