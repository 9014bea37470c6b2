//! Memory-tool semantics over a transactional backend: the six commands as structured outcomes, listing
//! (and its optional index), usage and expiry. Paths arrive already normalised by the caller; this
//! crate decides what happened, never how it reads.
//!
//! The commands are written against the [`Backend`] seam only: each decides inside one
//! transaction, so read-modify-write commands are atomic, and each command that changes anything
//! is exactly one commit. [`EmbeddedStore`] (the rabosh engine) and [`InMemoryBackend`] implement
//! it here; a backend in a crate of its own (`rabosh-memory-postgres`) implements it with
//! [`backend_kit`], the one public module of what a backend needs.
//!
//! A store that records history (its `c:history` setting, see `history/settings.rs`) has every
//! handler over it record a version of every change in the same commit as the change
//! (`history/`: versions, revert, redaction, retention, a view of the past, and host edits with
//! SHA-256 preconditions), however the handler was built.

mod backend;
pub mod backend_kit;
mod backends;
mod browse;
mod bulk;
mod clock;
mod commands;
mod dir_rows;
mod dir_totals;
mod edit;
mod encryption;
mod error;
mod expiry;
mod feed;
mod history;
mod keys;
mod listing;
mod listing_delta;
mod listing_index;
mod meta;
mod open;
mod outcome;
mod page;
mod poison;
mod store;
mod sync_base;
mod tree;
mod workers;

// The backends of this crate live under `backends/`; their module paths stay `crate::embedded`
// and `crate::in_memory`. Backends of crates of their own (`rabosh-memory-postgres`) are built
// on `backend_kit` alone.
use backends::{embedded, in_memory};

pub use backend::{Backend, Committed, DirSummary, Intent, ReadView, TxBody, Visit, WriteOp, WriteSet};
pub use browse::{Child, Children, ExportPage};
pub use bulk::{Import, MemoryRecord};
pub use clock::Clock;
pub use embedded::{
    Appended, CheckpointInfo, CompactInfo, Durability, EmbeddedOptions, EmbeddedStore, LockHolder, Snapshot, Stats,
    VerifyReport,
};
pub use encryption::{EncryptionKey, KEY_BYTES, key_from_slice};
pub use error::{BackendError, Error, Result, Unsupported};
pub use expiry::Expired;
pub use feed::{
    Change, ChangeKind, ChangePage, Cursor, DEFAULT_PAGE as DEFAULT_CHANGES_PAGE, MAX_PAGE as MAX_CHANGES_PAGE,
};
pub use history::{
    Actor, At, Current, DEFAULT_VERSION_PAGE, HistoryOptions, HistoryRequest, HistorySettings, HistoryUsage,
    HostRemove, HostWrite, MAX_ACTOR_ID_BYTES, MAX_ACTOR_TYPE_BYTES, MAX_VERSION_PAGE, Operation, Past, Precondition,
    Redact, Revert, Version, VersionPage, VersionQuery, hex, history_usage_of, id_hex, parse_id, settle_history,
    sha256,
};
pub use in_memory::InMemoryBackend;
pub use open::{StoreOptions, UrlOpener, open, open_with, reencrypt, reencrypt_with};
pub use page::{ListedMemory, MemoryPage};
pub use store::{Capabilities, OpenStore, Store};
pub use sync_base::{BaseWrite, SyncApply, SyncEntry, SyncOp};
pub use workers::{Job, Workers};

pub use outcome::{Create, Delete, DirEntry, Insert, Rename, StrReplace, Usage, View};

use std::sync::Arc;

/// The longest file a view renders, in stored lines.
pub const MAX_VIEW_LINES: u64 = 999_999;
/// The root every path lives under; always a directory, never a memory.
pub const ROOT: &str = "/memories";
/// The longest path, in UTF-8 bytes (contract §2 step 6).
pub const MAX_PATH_BYTES: usize = 1024;
/// [`MemoryOptions::max_memory_bytes`] unless set: 1 MiB.
pub const DEFAULT_MAX_MEMORY_BYTES: u64 = 1 << 20;
/// How long a shared store's call waits for another process's commit lock unless the opener
/// says otherwise (the engine's default).
pub const DEFAULT_LOCK_TIMEOUT: std::time::Duration = rabosh::DEFAULT_LOCK_TIMEOUT;

/// Options of one handler (one scope).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryOptions {
    /// Key prefix separating namespaces: `[A-Za-z0-9_.-]{1,64}`.
    pub scope: String,
    /// Cap on one memory's content in UTF-8 bytes (create, `str_replace`, insert).
    pub max_memory_bytes: u64,
    /// `create` on an existing memory replaces it (keeping createdAt) instead of refusing.
    pub create_overwrites: bool,
    /// `view` of a memory records accessedAt (every such view becomes a commit).
    pub track_access: bool,
    /// Answer directory views from the aggregated listing index (default true: the
    /// benchmark shows listings up to 100x faster for about 30 bytes more memory per memory).
    pub listing_index: bool,
}

impl Default for MemoryOptions {
    fn default() -> Self {
        MemoryOptions {
            scope: "default".into(),
            max_memory_bytes: DEFAULT_MAX_MEMORY_BYTES,
            create_overwrites: false,
            track_access: false,
            listing_index: true,
        }
    }
}

/// One handler: the six commands over one scope of a backend.
pub struct Memories {
    backend: Arc<dyn Backend>,
    options: MemoryOptions,
    clock: Clock,
    /// Some: every change this handler commits records its versions (`history/`).
    history: Option<HistoryOptions>,
    /// The store was seen recording history (it never stops): skip reading its settings.
    history_seen_on: std::sync::atomic::AtomicBool,
    actor: Option<Actor>,
}

impl Memories {
    /// Validates the options (scope pattern, positive limits).
    pub fn new(backend: Arc<dyn Backend>, options: MemoryOptions) -> Result<Memories> {
        if !keys::valid_scope(&options.scope) {
            return Err(Error::InvalidOption { option: "scope", value: options.scope.clone() });
        }
        if options.max_memory_bytes < 1 {
            return Err(Error::InvalidOption {
                option: "max_memory_bytes",
                value: options.max_memory_bytes.to_string(),
            });
        }
        Ok(Memories {
            backend,
            options,
            clock: Clock::system(),
            history: None,
            history_seen_on: std::sync::atomic::AtomicBool::default(),
            actor: None,
        })
    }

    /// Replaces the clock that stamps createdAt, updatedAt and accessedAt (for tests).
    #[must_use]
    pub fn with_clock(mut self, clock: Clock) -> Memories {
        self.clock = clock;
        self
    }

    pub fn options(&self) -> &MemoryOptions {
        &self.options
    }

    pub fn backend(&self) -> &Arc<dyn Backend> {
        &self.backend
    }

    /// The paths of this scope that changed after `since` (None: from the feed's start), oldest
    /// first, at most `limit` (default [`DEFAULT_CHANGES_PAGE`], at most
    /// [`MAX_CHANGES_PAGE`]): each path once, as of its latest change (`feed.rs`). Reads no
    /// memory. A cursor older than the feed answers for is answered `reset`. A limit of 0
    /// answers no changes and the cursor of the state now (a reader that starts from now).
    pub fn changes(&self, since: Option<&str>, limit: Option<usize>) -> Result<ChangePage> {
        let since = match since {
            Some(s) => Cursor::decode(s)?,
            None => Cursor::default(),
        };
        self.backend.changes(&self.options.scope, &since, limit.unwrap_or(DEFAULT_CHANGES_PAGE))
    }
}
