//! Memory-tool semantics over the rabosh engine: the six commands as structured outcomes, listing
//! (and its optional index), usage and expiry. Paths arrive already normalised by the caller; this
//! crate decides what happened, never how it reads.
//!
//! API SKELETON: signatures fixed so the binding can be built in parallel; bodies to be written.

mod outcome;

pub use outcome::{Create, Delete, DirEntry, Insert, Rename, StrReplace, Usage, View};

use std::fmt;
use std::path::Path;
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
    /// Answer directory views from the aggregated listing index.
    pub listing_index: bool,
}

impl Default for MemoryOptions {
    fn default() -> Self {
        MemoryOptions {
            scope: "default".into(),
            max_memory_bytes: 1 << 20,
            create_overwrites: false,
            track_access: false,
            listing_index: false,
        }
    }
}

/// The engine plus what every handler over it shares: the write lock that keeps each command's
/// read-modify-write atomic, and the listing indexes kept current by every commit.
pub struct MemoryStore {
    engine: rabosh::Store,
}

impl MemoryStore {
    pub fn open(dir: impl AsRef<Path>, options: rabosh::Options) -> Result<Arc<MemoryStore>> {
        Ok(Arc::new(MemoryStore { engine: rabosh::Store::open(dir, options)? }))
    }

    pub fn engine(&self) -> &rabosh::Store {
        &self.engine
    }

    /// Close the engine (idempotent); every later command fails with the engine's Closed error.
    pub fn close(&self) -> Result<()> {
        Ok(self.engine.close()?)
    }
}

/// One handler: the six commands over one scope of a store.
pub struct Memories {
    #[allow(dead_code)]
    store: Arc<MemoryStore>,
    #[allow(dead_code)]
    options: MemoryOptions,
}

impl Memories {
    /// Validates the options (scope pattern, positive limits).
    pub fn new(store: Arc<MemoryStore>, options: MemoryOptions) -> Result<Memories> {
        Ok(Memories { store, options })
    }

    pub fn options(&self) -> &MemoryOptions {
        &self.options
    }

    pub fn view(&self, path: &str) -> Result<View> {
        todo!("{path}")
    }

    pub fn create(&self, path: &str, file_text: &str) -> Result<Create> {
        todo!("{path}{file_text}")
    }

    pub fn str_replace(&self, path: &str, old_str: &str, new_str: &str) -> Result<StrReplace> {
        todo!("{path}{old_str}{new_str}")
    }

    /// `insert_line` is None when the model sent something that is not an integer.
    pub fn insert(&self, path: &str, insert_line: Option<i64>, insert_text: &str) -> Result<Insert> {
        todo!("{path}{insert_line:?}{insert_text}")
    }

    pub fn delete(&self, path: &str) -> Result<Delete> {
        todo!("{path}")
    }

    pub fn rename(&self, old_path: &str, new_path: &str) -> Result<Rename> {
        todo!("{old_path}{new_path}")
    }

    pub fn usage(&self) -> Result<Usage> {
        todo!()
    }

    /// Deletes every memory last updated (or accessed, with track_access) before `instant_ms`.
    pub fn expire_before(&self, instant_ms: i64) -> Result<u64> {
        todo!("{instant_ms}")
    }
}
