//! The only file that speaks the rabosh engine's API: opening, snapshots, batches and errors are
//! translated here into this crate's own types, and the maintenance reports and lock holder,
//! whose shape this crate shares, are re-exported from here; so an engine API change touches
//! this file alone.

use std::path::Path;
use std::time::Instant;

use crate::backend::{DirSummary, ReadView, Visit, WriteOp, resume_from};
use crate::dir_totals;
use crate::listing::{scan_summary, scan_usage};
use crate::{Error, Result, Usage};

use super::{EmbeddedOptions, Stats};

// The engine's own reports and lock holder, re-exported whole: this crate adds nothing to their
// shape, so a second definition would only be a copy to keep in step (as with the options and
// counters, re-exported in `mod.rs`).
pub use rabosh::{CheckpointInfo, CompactInfo, LockHolder, VerifyReport};

pub(crate) struct Engine(rabosh::Store);

/// Rewrites the closed store in `dir` from `from` to `to` (None: plain), crash-safely: a kill at
/// any point leaves it opening with `from` or with `to` (`rabosh-memory encrypt` / `decrypt`).
pub fn reencrypt(dir: &Path, from: Option<&crate::EncryptionKey>, to: Option<&crate::EncryptionKey>) -> Result<()> {
    Ok(rabosh::reencrypt(dir, from.cloned(), to.cloned())?)
}

/// A pinned read view: later commits never change what it answers. Dropping it unpins. It holds
/// the engine's snapshot only, not the store (an unreleased snapshot must not keep a dropped
/// store's lock), so its listings come from the directory totals the store keeps, or scans.
#[derive(Clone)]
pub struct Snapshot(rabosh::Snapshot);

impl Engine {
    pub fn open(dir: &Path, options: EmbeddedOptions) -> Result<Engine> {
        Ok(Engine(rabosh::Store::open(dir, options)?))
    }

    pub fn is_encrypted(&self) -> bool {
        self.0.is_encrypted()
    }

    pub fn rotate_key(&self, new: &crate::EncryptionKey) -> Result<()> {
        Ok(self.0.rotate_key(new.clone())?)
    }

    /// The durable (published) state.
    pub fn snapshot(&self) -> Result<Snapshot> {
        Ok(Snapshot(self.0.snapshot()?))
    }

    /// [`rabosh::Store::release_retired`]: after a snapshot is released.
    pub fn release_retired(&self) -> Result<()> {
        Ok(self.0.release_retired()?)
    }

    /// [`Engine::snapshot`] without waiting for another process (`Busy` at once instead).
    pub fn snapshot_without_waiting(&self) -> Result<Snapshot> {
        Ok(Snapshot(self.0.snapshot_without_waiting()?))
    }

    /// [`Engine::snapshot`] when no catch-up on another process is due; `None` otherwise.
    pub fn snapshot_if_current(&self) -> Result<Option<Snapshot>> {
        Ok(self.0.snapshot_if_current()?.map(Snapshot))
    }

    /// The newest state, including commits appended but not yet durable.
    /// Held from the decision through the append: in shared mode the cross-process commit
    /// lock, taken after catching up with every other process's commits.
    /// `started`: when the caller began to wait (the lock timeout bounds its whole wait).
    pub fn commit_guard_since(&self, started: Instant) -> Result<rabosh::CommitGuard<'_>> {
        Ok(self.0.commit_guard_since(started)?)
    }

    /// [`rabosh::Store::batch_guard`]: the commit lock held across a batch of commits whose
    /// oldest began to wait at `started`.
    pub fn batch_guard_since(&self, started: Instant) -> Result<rabosh::CommitGuard<'_>> {
        Ok(self.0.batch_guard_since(started)?)
    }

    /// The longest wait for another process's commit lock (shared mode).
    pub fn lock_timeout(&self) -> std::time::Duration {
        self.0.options().lock_timeout
    }

    pub fn is_shared(&self) -> bool {
        self.0.is_shared()
    }

    /// The published seq as this process knows it, without a catch-up.
    pub fn published_seq(&self) -> u64 {
        self.0.published_seq()
    }

    pub fn latest(&self) -> Result<Snapshot> {
        Ok(Snapshot(self.0.latest_snapshot()?))
    }

    pub fn append(&self, ops: Vec<WriteOp>) -> Result<u64> {
        let mut batch = rabosh::Batch::with_capacity(ops.len());
        for op in ops {
            match op {
                WriteOp::Put { key, value, meta } => batch.put(key, value, meta),
                WriteOp::Delete { key } => batch.delete(key),
            }
        }
        Ok(self.0.append(batch)?)
    }

    pub fn wait_durable(&self, seq: u64) -> Result<()> {
        Ok(self.0.wait_durable(seq)?)
    }

    pub fn sync(&self) -> Result<()> {
        Ok(self.0.sync()?)
    }

    pub fn close(&self) -> Result<()> {
        Ok(self.0.close()?)
    }

    pub fn compact(&self) -> Result<CompactInfo> {
        Ok(self.0.compact()?)
    }

    pub fn checkpoint(&self, target: &Path) -> Result<CheckpointInfo> {
        Ok(self.0.checkpoint(target)?)
    }

    pub fn verify(&self) -> Result<VerifyReport> {
        Ok(self.0.verify()?)
    }

    pub fn stats(&self) -> Stats {
        self.0.stats()
    }
}

impl Snapshot {
    /// The sequence number of the last commit this view sees.
    #[must_use]
    pub fn seq(&self) -> u64 {
        self.0.seq()
    }
}

impl ReadView for Snapshot {
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        Ok(self.0.get(key)?)
    }

    fn meta(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        Ok(self.0.meta(key)?)
    }

    /// Corruption when the key directory cannot be built (a sealed hint's page and its
    /// segment both damaged): a listing answers that, never a panic in a worker.
    /// Visited, not iterated: the engine then holds a few hint pages at a time, so a scan of
    /// every memory keeps the page cache's budget, not every page it passed.
    fn scan_prefix(&self, prefix: &[u8], visit: &mut Visit<'_>) -> Result<()> {
        let end = rabosh::prefix_successor(prefix);
        Ok(self.0.try_visit(prefix, end.as_deref(), true, visit)?)
    }

    /// From the directory totals the store keeps, when they describe this state; else a scan.
    fn dir_summary(&self, scope: &str, dir: &str) -> Result<DirSummary> {
        match dir_totals::summary(self, self.seq(), scope, dir, u64::MAX)? {
            Some(summary) => Ok(summary),
            None => scan_summary(self, scope, dir),
        }
    }

    fn usage(&self, scope: &str) -> Result<Usage> {
        match dir_totals::usage(self, self.seq(), scope)? {
            Some(usage) => Ok(usage),
            None => scan_usage(self, scope),
        }
    }

    /// Keys under `prefix` after `after`: a seek to the cursor, then one step per key.
    fn scan_prefix_after(&self, prefix: &[u8], after: Option<&[u8]>, visit: &mut Visit<'_>) -> Result<()> {
        let from = resume_from(prefix, after);
        let end = rabosh::prefix_successor(prefix);
        Ok(self.0.try_visit(&from, end.as_deref(), true, visit)?)
    }

    /// Keys under `prefix` below `before`, from the top: a seek, then one step per key.
    fn scan_prefix_rev(&self, prefix: &[u8], before: Option<&[u8]>, visit: &mut Visit<'_>) -> Result<()> {
        let end = rabosh::prefix_successor(prefix);
        let to = match (before, end.as_deref()) {
            (Some(b), Some(e)) => Some(b.min(e)),
            (b, e) => b.or(e),
        };
        Ok(self.0.try_visit(prefix, to, false, visit)?)
    }
}

impl From<rabosh::Error> for Error {
    fn from(e: rabosh::Error) -> Error {
        let message = e.to_string();
        match e {
            rabosh::Error::Io { .. } => Error::Io(message),
            rabosh::Error::Corruption { .. } => Error::Corruption(message),
            rabosh::Error::Unsupported { .. } => Error::UnsupportedFormat(message),
            rabosh::Error::Locked { holder, .. } => Error::Locked { message, holder },
            rabosh::Error::Busy { holder, .. } => Error::Busy { message, holder },
            rabosh::Error::Poisoned { reason } => Error::Poisoned(reason),
            rabosh::Error::Closed => Error::Closed,
            rabosh::Error::InvalidArgument(m) => Error::InvalidArgument(m),
            rabosh::Error::NotAStore { .. } => Error::NotAStore(message),
            rabosh::Error::WrongKey { .. } => Error::WrongKey(message),
            rabosh::Error::KeyRequired { .. } => Error::KeyRequired(message),
            rabosh::Error::NotEncrypted { .. } => Error::NotEncrypted(message),
        }
    }
}
