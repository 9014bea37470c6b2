//! Memory-tool semantics over the rabosh engine: the six commands as structured outcomes, listing
//! (and its optional index), usage and expiry. Paths arrive already normalised by the caller; this
//! crate decides what happened, never how it reads.
//!
//! Every command holds the store's write lock from its first read to its commit, so read-modify-
//! write commands are atomic, and each command that changes anything is exactly one engine commit.

mod backend;
mod bulk;
mod clock;
mod commands;
mod edit;
mod expiry;
mod keys;
mod listing;
mod listing_index;
mod meta;
mod outcome;
mod store;
mod tree;

#[cfg(feature = "postgres")]
pub mod postgres;

pub use backend::{Backend, ReadView, TxBody, Visit, WriteOp, WriteSet};
pub use bulk::{Import, MemoryRecord};
pub use clock::Clock;
pub use store::MemoryStore;

pub use outcome::{Create, Delete, DirEntry, Insert, Rename, StrReplace, Usage, View};

use std::fmt;
use std::sync::Arc;

/// The longest file a view renders, in stored lines.
pub const MAX_VIEW_LINES: u64 = 999_999;
/// The root every path lives under; always a directory, never a memory.
pub const ROOT: &str = "/memories";

#[derive(Debug)]
pub enum Error {
    /// The engine failed (IO, corruption, closed, locked …).
    Engine(rabosh::Error),
    /// A handler option is out of range; names the option and the value.
    InvalidOption { option: &'static str, value: String },
    /// A path that is not in normalised form reached this crate (a caller bug, not model input).
    NotNormalised(String),
    /// The PostgreSQL backend failed (typed; no host name or password in the message).
    #[cfg(feature = "postgres")]
    Postgres(postgres::PgError),
}

pub type Result<T> = std::result::Result<T, Error>;

impl From<rabosh::Error> for Error {
    fn from(e: rabosh::Error) -> Self {
        Error::Engine(e)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Engine(e) => e.fmt(f),
            Error::InvalidOption { option, value } => write!(f, "invalid option {option}: {value}"),
            Error::NotNormalised(p) => write!(f, "path is not normalised: {p:?}"),
            #[cfg(feature = "postgres")]
            Error::Postgres(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for Error {}

/// Options of one handler (one scope).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryOptions {
    /// Key prefix separating namespaces: `[A-Za-z0-9_.-]{1,64}`.
    pub scope: String,
    /// Cap on one memory's content in UTF-8 bytes (create, str_replace, insert).
    pub max_memory_bytes: u64,
    /// `create` on an existing memory replaces it (keeping createdAt) instead of refusing.
    pub create_overwrites: bool,
    /// `view` of a memory records accessedAt (every such view becomes a commit).
    pub track_access: bool,
    /// Answer directory views from the aggregated listing index (default true: the README's
    /// benchmark shows listings up to 100x faster for about 40% more memory per memory).
    pub listing_index: bool,
}

impl Default for MemoryOptions {
    fn default() -> Self {
        MemoryOptions {
            scope: "default".into(),
            max_memory_bytes: 1 << 20,
            create_overwrites: false,
            track_access: false,
            listing_index: true,
        }
    }
}

/// One handler: the six commands over one scope of a store.
pub struct Memories {
    store: Arc<MemoryStore>,
    options: MemoryOptions,
    clock: Clock,
}

impl Memories {
    /// Validates the options (scope pattern, positive limits).
    pub fn new(store: Arc<MemoryStore>, options: MemoryOptions) -> Result<Memories> {
        if !keys::valid_scope(&options.scope) {
            return Err(Error::InvalidOption { option: "scope", value: options.scope.clone() });
        }
        if options.max_memory_bytes < 1 {
            return Err(Error::InvalidOption {
                option: "max_memory_bytes",
                value: options.max_memory_bytes.to_string(),
            });
        }
        Ok(Memories { store, options, clock: Clock::system() })
    }

    /// Replaces the clock that stamps createdAt, updatedAt and accessedAt (for tests).
    pub fn with_clock(mut self, clock: Clock) -> Memories {
        self.clock = clock;
        self
    }

    pub fn options(&self) -> &MemoryOptions {
        &self.options
    }

    pub fn store(&self) -> &Arc<MemoryStore> {
        &self.store
    }
}
