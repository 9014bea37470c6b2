//! rabosh: an embedded, crash-safe MVCC key/value store.
//!
//! An append-only log of checksummed commit records in numbered segment files, an atomically
//! replaced MANIFEST, hint files for fast open, and an in-memory persistent ordered key directory
//! whose versions are shared by snapshots. The on-disk format is described in FORMAT.md.

// The engine's layers, bottom up; a folder uses only the folders below it (docs/architecture.md).
mod crypto;
mod error;
mod io;
mod keydir;
mod log;
/// Counters the engine keeps for tests to read; not a stable API.
#[doc(hidden)]
pub mod probe;
/// What the sealed files of a store hold, for the test kit; compiled only with `testkit`.
#[cfg(feature = "testkit")]
#[doc(hidden)]
pub mod sealed;
mod store;

/// The engine's AEAD (XChaCha20-Poly1305, a random 192-bit nonce per blob), public so the
/// PostgreSQL backend seals its rows with the same cipher, nonce and tag handling.
pub use crypto::crypt;
pub use crypto::encryption::{Encryption, KEY_BYTES};
pub use error::{Error, LockHolder, Result};
#[doc(hidden)]
pub use io::vfs::{CommitLock, LockGuard, Mapped, OpenMode, StdFs, VFile, Vfs, write_all_at};
/// The bytes of decoded hint pages the process keeps (every store's share one budget).
pub use keydir::page_cache::{page_cache_bytes, set_page_cache_bytes};
#[doc(hidden)]
pub use keydir::walk::set_walk_window_pages;
pub use log::format::{ENCRYPTED_FORMAT_VERSION, FORMAT_VERSION};
/// The most metadata bytes one entry may carry (kept in memory for every key).
pub use log::metabuf::MAX_META;
pub use store::batch::{Batch, Op};
pub use store::catch_up::CommitGuard;
pub use store::checkpoint::CheckpointInfo;
pub use store::compact::CompactInfo;
pub use store::handle::{Stats, Store, VerifyReport};
pub use store::options::{DEFAULT_LOCK_TIMEOUT, Durability, Options};
pub use store::reencrypt::reencrypt;
#[doc(hidden)]
pub use store::reencrypt::reencrypt_with;
pub use store::snapshot::{Snapshot, Visit, prefix_successor};
