//! [`Store`]: one open store, whatever its backend, and what that backend can do
//! ([`Capabilities`]). A binding holds this one type: it asks the capabilities where to run a
//! call, and every call a backend does not have is refused here, in one wording.

use std::sync::Arc;

use crate::backend::Backend;
use crate::embedded::{CheckpointInfo, CompactInfo, EmbeddedStore, Snapshot, Stats, VerifyReport};
use crate::error::Unsupported;
use crate::workers::Workers;
use crate::{Error, Result};

/// What a store's backend can do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(clippy::struct_excessive_bools)] // independent yes/no answers the binding passes on as they are
pub struct Capabilities {
    /// The backend's name as a sentence says it (`embedded`, `PostgreSQL`).
    pub backend: &'static str,
    /// Why the calls it lacks are missing, said once for all of them.
    pub why: &'static str,
    /// `durability: buffered` (acknowledged before durable, made durable by `sync`).
    pub buffered: bool,
    /// `exclusive: true` (holding the store alone, refusing every other opener).
    pub exclusive: bool,
    /// Pinned read views ([`Store::snapshot`]).
    pub snapshots: bool,
    /// [`Store::checkpoint`], [`Store::compact`] and [`Store::verify`].
    pub maintenance: bool,
    /// Reads are in this process's memory: a bounded view may run on a caller's thread that
    /// must not wait (the JS thread).
    pub reads_in_process: bool,
    /// Commits can share one fsync ([`Store::group_commit`]).
    pub group_commit: bool,
    /// Calls wait on something outside the process: they run on the store's own threads
    /// ([`Store::workers`]), never on a caller's shared pool.
    pub own_workers: bool,
}

impl Capabilities {
    pub const EMBEDDED: Capabilities = Capabilities {
        backend: "embedded",
        why: "",
        buffered: true,
        exclusive: true,
        snapshots: true,
        maintenance: true,
        reads_in_process: true,
        group_commit: true,
        own_workers: false,
    };

    fn refusal(&self, what: impl Into<String>) -> Unsupported {
        Unsupported { what: what.into(), backend: self.backend, why: self.why }
    }

    /// `Ok` when `has`, else the call `what` refused in the one wording.
    pub fn require(&self, has: bool, what: &str) -> Result<()> {
        if has { Ok(()) } else { Err(Error::Unsupported(self.refusal(what))) }
    }

    /// The option `option` refused as given (`what` says the value), in the same wording.
    #[must_use]
    pub fn refuse_option(&self, option: &'static str, what: &str) -> Error {
        Error::OptionUnsupported { option, refusal: self.refusal(what) }
    }
}

/// An open store of a backend that lives in a crate of its own (what its
/// [`UrlOpener`](crate::backend_kit::UrlOpener) opens): the seam plus the calls every store
/// answers. Such a store has no snapshots, maintenance or group commit; its capabilities say
/// what else it lacks.
pub trait OpenStore: Backend {
    /// Ends the store: later calls answer `Closed`, calls in flight finish. Idempotent.
    fn close(&self) -> Result<()>;
    /// Makes every commit so far durable (at once where each commit is durable when
    /// acknowledged); `Closed` once closed.
    fn sync(&self) -> Result<()>;
    /// Whether the store is encrypted at rest; `Closed` once closed.
    fn is_encrypted(&self) -> Result<bool>;
    /// Rewraps the data key under `new`, as [`Store::rotate_key`] promises.
    fn rotate_key(&self, new: &crate::EncryptionKey) -> Result<()>;
    /// Counters kept in memory (no IO); the ones the backend does not keep are zero.
    fn stats(&self) -> Stats;
}

enum Kind {
    Embedded(Arc<EmbeddedStore>),
    Other(Arc<dyn OpenStore>),
}

/// One open store. Cheap to share behind an `Arc`; every handler over it uses [`Store::backend`].
pub struct Store {
    kind: Kind,
    capabilities: Capabilities,
    workers: Option<Arc<Workers>>,
}

impl Store {
    pub(crate) fn embedded(store: Arc<EmbeddedStore>) -> Store {
        Store { kind: Kind::Embedded(store), capabilities: Capabilities::EMBEDDED, workers: None }
    }

    /// A store of a backend crate of its own. `workers`: the store's own threads, where every
    /// call that reaches it runs (for a backend that waits on something outside the process,
    /// with `own_workers` in its capabilities); None: calls run on the caller's threads.
    pub fn other(store: Arc<dyn OpenStore>, capabilities: Capabilities, workers: Option<Arc<Workers>>) -> Store {
        Store { kind: Kind::Other(store), capabilities, workers }
    }

    #[must_use]
    pub fn capabilities(&self) -> &Capabilities {
        &self.capabilities
    }

    /// What the memory semantics run over.
    #[must_use]
    pub fn backend(&self) -> Arc<dyn Backend> {
        match &self.kind {
            Kind::Embedded(s) => s.clone(),
            Kind::Other(s) => s.clone(),
        }
    }

    /// The engine whose commits can share one fsync ([`EmbeddedStore::appending`]), for a write
    /// queue; None when the backend has no such thing (its `transact` is durable on return).
    #[must_use]
    pub fn group_commit(&self) -> Option<&Arc<EmbeddedStore>> {
        match &self.kind {
            Kind::Embedded(s) => Some(s),
            Kind::Other(_) => None,
        }
    }

    /// The store's own threads, where every call that reaches its backend must run; None when
    /// calls may run on the caller's threads.
    #[must_use]
    pub fn workers(&self) -> Option<&Arc<Workers>> {
        self.workers.as_ref()
    }

    /// Releases the lock and every file (or the connection pool); idempotent. Calls in flight
    /// finish; later ones answer `Closed`.
    pub fn close(&self) -> Result<()> {
        match &self.kind {
            Kind::Embedded(s) => s.close(),
            Kind::Other(s) => s.close(),
        }
    }

    /// Makes every commit so far durable; at once where every commit is durable when
    /// acknowledged. `Closed` once closed.
    pub fn sync(&self) -> Result<()> {
        match &self.kind {
            Kind::Embedded(s) => s.sync(),
            Kind::Other(s) => s.sync(),
        }
    }

    fn maintained(&self, what: &str) -> Result<&Arc<EmbeddedStore>> {
        self.capabilities.require(self.capabilities.maintenance, what)?;
        self.group_commit().ok_or_else(|| Error::Unsupported(self.capabilities.refusal(what)))
    }

    pub fn checkpoint(&self, dir: &str) -> Result<CheckpointInfo> {
        self.maintained("checkpoint")?.checkpoint(dir)
    }

    pub fn compact(&self) -> Result<CompactInfo> {
        self.maintained("compact")?.compact()
    }

    pub fn verify(&self) -> Result<VerifyReport> {
        self.maintained("verify")?.verify()
    }

    pub fn snapshot(&self) -> Result<Snapshot> {
        self.capabilities.require(self.capabilities.snapshots, "snapshot")?;
        match &self.kind {
            // Never waits for another process's commit lock: callers pin views on the JS thread.
            Kind::Embedded(s) => s.snapshot_without_waiting(),
            Kind::Other(_) => Err(Error::Unsupported(self.capabilities.refusal("snapshot"))),
        }
    }

    /// After a [`Store::snapshot`] is released: what another process retired while it was held
    /// is closed here now, not at this handle's next read (never waits for a lock).
    pub fn release_retired(&self) -> Result<()> {
        match &self.kind {
            Kind::Embedded(s) => s.release_retired(),
            // Other backends hold no files a snapshot pins.
            Kind::Other(_) => Ok(()),
        }
    }

    /// Whether the store is encrypted at rest; `Closed` once closed.
    pub fn is_encrypted(&self) -> Result<bool> {
        match &self.kind {
            Kind::Embedded(s) => s.is_encrypted(),
            Kind::Other(s) => s.is_encrypted(),
        }
    }

    /// Rewraps the store's data key under `new`, crash-safely and without rewriting data: the
    /// old key or the new one opens the store after a crash, never neither. Handles already open
    /// (here and in other processes) keep working. `NotEncrypted` for a plain store.
    pub fn rotate_key(&self, new: &crate::EncryptionKey) -> Result<()> {
        match &self.kind {
            Kind::Embedded(s) => s.rotate_key(new),
            Kind::Other(s) => s.rotate_key(new),
        }
    }

    /// Counters kept in memory (no IO). Where the backend keeps fewer, the rest are zero.
    #[must_use]
    pub fn stats(&self) -> Stats {
        match &self.kind {
            Kind::Embedded(s) => s.stats(),
            Kind::Other(s) => s.stats(),
        }
    }
}
