//! The backend kit: everything a backend in a crate of its own implements and uses, and nothing
//! else of this crate's internals (`rabosh-memory-postgres` is built on this module alone).
//!
//! # What a backend implements
//!
//! - [`ReadView`]: `get`, `meta` and ordered prefix scans (`scan`, `scan_keys`) over byte keys,
//!   each view one consistent state. Rows are opaque: keys and metadata belong to this crate.
//! - [`Backend`]: `read` (a view of the newest committed state) and `transact`: run the body on
//!   the newest state and commit its [`WriteSet`] as ONE unit, or nothing. The body may be run
//!   again (it only stages; the write set is cleared before each run), so a backend may rerun it
//!   on a conflict. `transact_new` honours [`WriteSet::new_only_keys`] (answering
//!   [`Committed::Taken`] when one exists at commit).
//! - [`OpenStore`]: close, sync, encryption state, key rotation and counters of an open store,
//!   and a [`UrlOpener`] that claims the backend's URLs, states its [`Capabilities`] and opens
//!   it into a [`Store`] ([`Store::other`]).
//!
//! # What a backend guarantees
//!
//! - Atomic commits: every row of a write set commits, or none does; a reader never sees part of
//!   one (a command that changes anything is exactly one commit).
//! - Serializable bodies: what the body read is still so when its writes commit (or the commit
//!   fails and the body runs again).
//! - Durability: `transact` returns `Ok` only once the commit is as durable as the store's
//!   options promise (capabilities without `buffered`: durable on return).
//! - Outcomes: a failure is `Err` with nothing committed, except when the outcome is unknown (a
//!   connection lost during COMMIT, an IO fault after the commit reached storage): then the
//!   backend answers a typed error saying so, and poisons itself ([`Poison`]) when state it
//!   keeps in the process may depend on that outcome, so no later call builds on a state it
//!   cannot know. A backend whose every later answer comes from its server (PostgreSQL) goes
//!   on: the server's state is the truth, and a failover must not stop the handle. Its own faults travel as [`Error::Backend`] with a stable
//!   code ([`BackendError`]) and never a secret (a password or host) in the message.
//! - Change feed: a backend records [`feed_changes`] of each write set in the same commit,
//!   one entry per path (its latest change, the older one removed), drops the entries of
//!   [`WriteSet::forgotten`] keys (raising the horizon its `reset` answers below), and answers
//!   [`Backend::changes`] in commit order: every change at a position below a cursor it hands
//!   out has committed, so no later commit can land behind it.
//! - Listing aggregates: a backend that keeps one (to answer `dir_summary` and `usage` without
//!   scanning) updates it in the same commit from [`size_changes`] of the write set, and may
//!   build its answers with [`summary_of_rows`]; one that keeps none answers them with the
//!   trait's default scans. Every backend calls [`size_changes`] before committing either way:
//!   it refuses a memory row staged without an intent, which would leave the aggregates behind.
//!
//! Adding a backend: a crate implementing the above, and one line in the binding's list of
//! openers (`crates/rabosh-node/src/backends.rs`).

pub use crate::backend::{
    Backend, Committed, DirSummary, ReadView, SETTINGS_PREFIX, TxBody, Visit, WriteOp, WriteSet, resume_from,
};
pub use crate::dir_rows::{DirRow, summary_of_rows};
pub use crate::embedded::{Durability, Stats};
pub use crate::encryption::{EncryptionKey, KEY_BYTES};
pub use crate::error::{BackendError, Error, Result, Unsupported};
pub use crate::feed::{
    Change, ChangeKind, ChangePage, Cursor, FeedChange, MAX_PAGE as MAX_CHANGES_PAGE, feed_changes, now as changes_now,
};
pub use crate::listing_delta::{SizeChange, size_changes};
pub use crate::open::{StoreOptions, UrlOpener};
pub use crate::outcome::{DirEntry, Usage};
pub use crate::poison::{PanicGuard, Poison};
pub use crate::store::{Capabilities, OpenStore, Store};
pub use crate::workers::Workers;
pub use crate::{MAX_PATH_BYTES, ROOT};

/// The key layout (`m:{scope}:{path}`) as far as a backend's listing aggregate reads it.
pub mod keys {
    pub use crate::keys::{hidden, parse, segments, subtree_prefix};
}

/// The engine's AEAD under a data key, so a backend that seals rows
/// client-side uses the same cipher as the embedded store.
pub mod crypt {
    pub use rabosh::crypt::{Crypt, NONCE, OVERHEAD, random};
}

/// The size of the memory whose metadata is `meta` (stored at `key`, named in the error when
/// the metadata is not ours): what a backend filling its listing aggregate from existing rows
/// needs of them.
pub fn memory_size(key: &[u8], meta: &[u8]) -> Result<u64> {
    Ok(crate::meta::MemMeta::decode(key, meta)?.size)
}

/// The fields of the memory metadata `meta` (stored at `key`), in either layout (`meta.rs`):
/// size, lines, created, updated, accessed (0 = never), and the position of the change feed
/// entry it names (the compact layout only). For tests and tools that read stored rows.
pub fn memory_fields(key: &[u8], meta: &[u8]) -> Result<(u64, u64, i64, i64, i64, Option<u64>)> {
    let m = crate::meta::MemMeta::decode(key, meta)?;
    Ok((m.size, m.lines, m.created_ms, m.updated_ms, m.accessed_ms, m.feed_position))
}
