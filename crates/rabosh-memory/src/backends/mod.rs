//! The backends under the seam (`backend.rs`): the embedded engine, an in-memory map (the
//! longhand model tests compare against) and PostgreSQL.

pub mod embedded;
pub mod in_memory;
#[cfg(feature = "postgres")]
pub mod postgres;
