//! How to open a store.

use crate::crypto::encryption::Encryption;
use crate::io::vfs::Vfs;
use std::sync::Arc;

/// When a commit is durable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Durability {
    /// Every commit is fdatasync'd before `write` returns.
    #[default]
    Sync,
    /// Commits reach the OS page cache only; call [`Store::sync`](crate::Store::sync) to make
    /// them durable.
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
    /// [`Store::commit_guard_since`](crate::Store::commit_guard_since)), restarted whenever
    /// another process's commit lands. Reads do not wait for it when what is durable answers them.
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
