//! rabosh: an embedded, crash-safe MVCC key/value store.
//!
//! An append-only log of checksummed commit records in numbered segment files, an atomically
//! replaced MANIFEST, hint files for fast open, and an in-memory persistent ordered key directory
//! whose versions are shared by snapshots. The on-disk format is described in FORMAT.md.

mod busy;
mod checkpoint;
mod compact;
/// The engine's AEAD (XChaCha20-Poly1305, a random 192-bit nonce per blob), public so the
/// PostgreSQL backend seals its rows with the same cipher, nonce and tag handling.
pub mod crypt;
mod encryption;
mod error;
mod format;
mod hint;
mod hint_pages;
mod keydir;
mod keyfile;
mod lock;
mod manifest;
mod metabuf;
mod os;
mod paged_run;
/// Counters the engine keeps for tests to read; not a stable API.
#[doc(hidden)]
pub mod probe;
mod recovery;
mod reencrypt;
mod runs;
/// What the sealed files of a store hold, for the test kit; compiled only with `testkit`.
#[cfg(feature = "testkit")]
#[doc(hidden)]
pub mod sealed;
mod segment;
mod shared;
mod snapshot;
mod store;
mod synced;
mod vfs;

pub use encryption::Encryption;
pub use error::{Error, LockHolder, Result};
pub use format::{ENCRYPTED_FORMAT_VERSION, FORMAT_VERSION};
pub use reencrypt::reencrypt;
#[doc(hidden)]
pub use reencrypt::reencrypt_with;
pub use shared::CommitGuard;
pub use snapshot::Snapshot;
pub use store::Store;
#[doc(hidden)]
pub use vfs::{CommitLock, LockGuard, Mapped, OpenMode, StdFs, VFile, Vfs, write_all_at};

use std::sync::Arc;

/// The most metadata bytes one entry may carry (kept in memory for every key).
pub const MAX_META: usize = metabuf::MAX_META;

/// When a commit is durable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Durability {
    /// Every commit is fdatasync'd before `write` returns.
    #[default]
    Sync,
    /// Commits reach the OS page cache only; call [`Store::sync`] to make them durable.
    Buffered,
}

/// [`Options::lock_timeout`] unless set: long enough for any commit a live process makes, short
/// enough that a stopped one is reported rather than waited for.
pub const DEFAULT_LOCK_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// How to open a store.
#[derive(Debug, Clone)]
pub struct Options {
    pub durability: Durability,
    /// Roll the active log over to a new segment past this many bytes.
    pub segment_bytes: u64,
    /// Refuse to open when the log has a torn tail instead of dropping it.
    pub strict: bool,
    /// Create the store (and its directory) when there is none. Off: a directory that is
    /// absent, empty or has no MANIFEST is `Error::NotAStore`, and nothing is created — for
    /// read-only tools, which must never turn a stray directory into a store.
    pub create_if_missing: bool,
    /// Several processes may open the store at once (FORMAT.md, "Several processes"): a shared
    /// directory lock, a cross-process commit lock, catch-up before every decision and read.
    /// Off: the first opener holds the directory exclusively (`Error::Locked` for the others).
    /// Local filesystems only. With `Durability::Buffered` a commit is appended whole under the
    /// commit lock but not fsynced: other processes may read it before it is durable.
    pub shared: bool,
    /// Shared mode: the longest any call waits for the cross-process commit lock (held by
    /// another process through each of its commits) before it fails with `Error::Busy` naming
    /// the holder — so a stopped or stuck process cannot freeze the others. Counted from when the
    /// call began to wait (behind this process's other threads too; see
    /// [`Store::commit_guard_since`]), restarted whenever another process's commit lands. Reads do
    /// not wait for it when what is durable answers them.
    pub lock_timeout: std::time::Duration,
    /// Encrypt everything the store writes under a data key wrapped by this host key
    /// (FORMAT.md, "Encryption at rest"). `None`: a plain store. Opening an encrypted store
    /// without a key is `Error::KeyRequired`, with the wrong one `Error::WrongKey`, and a plain
    /// store with a key `Error::NotEncrypted` (refused, never silently ignored). A store created
    /// with a key is encrypted from its first byte.
    pub encryption: Option<Encryption>,
    /// The filesystem to use; `None` is the real one. Tests inject faults here.
    #[doc(hidden)]
    pub vfs: Option<Arc<dyn Vfs>>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            durability: Durability::Sync,
            segment_bytes: 64 << 20,
            strict: false,
            create_if_missing: true,
            shared: false,
            lock_timeout: DEFAULT_LOCK_TIMEOUT,
            encryption: None,
            vfs: None,
        }
    }
}

/// One operation of a batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    /// `meta`: opaque bytes the layer above keeps beside the value; held in memory for every
    /// key, so listings never read values. At most [`MAX_META`] bytes.
    Put {
        key: Vec<u8>,
        value: Vec<u8>,
        meta: Vec<u8>,
    },
    Delete {
        key: Vec<u8>,
    },
}

/// An atomic group of puts and deletes: one commit, all or nothing.
#[derive(Debug, Clone, Default)]
pub struct Batch {
    ops: Vec<Op>,
}

impl Batch {
    #[must_use]
    pub fn new() -> Self {
        Batch::default()
    }
    pub fn put(&mut self, key: impl Into<Vec<u8>>, value: impl Into<Vec<u8>>, meta: impl Into<Vec<u8>>) {
        self.ops.push(Op::Put { key: key.into(), value: value.into(), meta: meta.into() });
    }
    pub fn delete(&mut self, key: impl Into<Vec<u8>>) {
        self.ops.push(Op::Delete { key: key.into() });
    }
    #[must_use]
    pub fn len(&self) -> usize {
        self.ops.len()
    }
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }
    #[must_use]
    pub fn ops(&self) -> &[Op] {
        &self.ops
    }
}

/// Counters that make work visible to tests and operators.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stats {
    pub commits: u64,
    pub fsyncs: u64,
    /// Values read from disk ("documents read"); metadata reads do not count.
    pub values_read: u64,
    pub bytes_written: u64,
    pub live_bytes: u64,
    pub dead_bytes: u64,
    pub files: u64,
    pub keys: u64,
    pub open_snapshots: u64,
    pub compactions: u64,
    pub seq: u64,
    /// True after a failed write or fsync: writes are refused until reopen.
    pub poisoned: bool,
}

/// What a checkpoint produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckpointInfo {
    /// The sequence number of the last commit the checkpoint holds.
    pub seq: u64,
    /// True when every data file was hard-linked rather than copied.
    pub hard_linked: bool,
}

/// What a compaction did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CompactInfo {
    pub bytes_before: u64,
    pub bytes_after: u64,
}

/// What a full integrity check found (problems are returned as `Error::Corruption`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VerifyReport {
    pub files: u64,
    pub records: u64,
    pub keys: u64,
}

/// The smallest key greater than every key that starts with `prefix` (None: no such key).
#[must_use]
pub fn prefix_successor(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xff {
            end.push(last + 1);
            return Some(end);
        }
    }
    None
}
