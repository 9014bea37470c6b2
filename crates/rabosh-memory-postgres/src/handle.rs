//! A PostgreSQL store as an open handle: it can be closed while handlers still hold it (they then
//! answer [`Error::Closed`], as over a closed embedded store), and its counters outlive the pool.

use std::sync::{Arc, Mutex};

use super::{PgBackend, PgOptions};
use rabosh_memory::backend_kit::{
    Backend, ChangePage, Committed, Cursor, EncryptionKey, Error, OpenStore, ReadView, Result, Stats, TxBody,
};

/// Counters that outlive the connection pool.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PgCounters {
    pub commits: u64,
    pub values_read: u64,
}

pub struct PgHandle {
    live: Mutex<Option<Arc<PgBackend>>>,
    at_close: Mutex<PgCounters>,
}

impl PgHandle {
    /// Connects on the calling thread; see [`PgBackend::open`].
    pub fn open(url: &str, options: PgOptions) -> Result<PgHandle> {
        let backend = PgBackend::open(url, options)?;
        Ok(PgHandle { live: Mutex::new(Some(Arc::new(backend))), at_close: Mutex::new(PgCounters::default()) })
    }

    fn backend(&self) -> Result<Arc<PgBackend>> {
        self.live.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone().ok_or(Error::Closed)
    }

    /// Ends the handle: later calls answer `Closed`; calls in flight finish, then the pool's
    /// connections close. Idempotent.
    pub fn close(&self) {
        let taken = self.live.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take();
        if let Some(b) = taken {
            *self.at_close.lock().unwrap_or_else(std::sync::PoisonError::into_inner) =
                PgCounters { commits: b.commits(), values_read: b.values_read() };
        }
    }

    pub fn counters(&self) -> PgCounters {
        match self.backend() {
            Ok(b) => PgCounters { commits: b.commits(), values_read: b.values_read() },
            Err(_) => *self.at_close.lock().unwrap_or_else(std::sync::PoisonError::into_inner),
        }
    }

    pub fn is_encrypted(&self) -> Result<bool> {
        Ok(self.backend()?.is_encrypted())
    }

    /// See [`PgBackend::rotate_key`].
    pub fn rotate_key(&self, new: &EncryptionKey) -> Result<()> {
        self.backend()?.rotate_key(new)
    }

    /// Fails with `Closed` once closed, like the embedded store's `sync`.
    pub fn check_open(&self) -> Result<()> {
        self.backend().map(|_| ())
    }
}

impl Backend for PgHandle {
    fn read(&self) -> Result<Box<dyn ReadView>> {
        self.backend()?.read()
    }

    fn read_deferred(&self) -> Result<Box<dyn ReadView>> {
        self.backend()?.read_deferred()
    }

    fn transact(&self, body: &mut TxBody<'_>) -> Result<()> {
        self.backend()?.transact(body)
    }

    fn transact_new(&self, body: &mut TxBody<'_>) -> Result<Committed> {
        self.backend()?.transact_new(body)
    }

    fn changes(&self, scope: &str, since: &Cursor, limit: usize) -> Result<ChangePage> {
        self.backend()?.changes(scope, since, limit)
    }

    // VACUUM after a redaction, a prune or an expiry (the trait's default does nothing).
    fn reclaim(&self) -> Result<()> {
        self.backend()?.reclaim()
    }
}

impl OpenStore for PgHandle {
    fn close(&self) -> Result<()> {
        PgHandle::close(self);
        Ok(())
    }

    // Every commit is durable when acknowledged (the server's durability): only `Closed`.
    fn sync(&self) -> Result<()> {
        self.check_open()
    }

    fn is_encrypted(&self) -> Result<bool> {
        PgHandle::is_encrypted(self)
    }

    fn rotate_key(&self, new: &EncryptionKey) -> Result<()> {
        PgHandle::rotate_key(self, new)
    }

    fn stats(&self) -> Stats {
        let c = self.counters();
        Stats { commits: c.commits, values_read: c.values_read, ..Stats::default() }
    }
}
