//! Shared mode: several processes, one store (FORMAT.md, "Several processes").
//!
//! What serialises commits: an exclusive OS lock on `WRITER`, held from the catch-up that
//! precedes a decision through the append and its fsync. The kernel drops it when its holder
//! dies, so a SIGKILL while holding it blocks no one; the next holder cuts the torn tail the
//! dead one may have left (recovery's own rules, over the tail only).
//!
//! How a process learns of others' commits: before a decision (under the lock) and before a
//! read, it compares what it knows — the MANIFEST inode it last read (replaced whole by
//! rotation and compaction, so an unlinked one means "changed") and the active segment's
//! length — with the files; on a difference it takes the lock and catches up: the new tail of
//! the active segment only, or everything when the MANIFEST was replaced.
//!
//! How segments are retired safely: every process keeps its own handle on every segment its
//! versions see, so a segment another process's compaction unlinked stays readable (Unix). A
//! process opens only segments named by a MANIFEST read under the lock, and compaction swaps the
//! MANIFEST under the lock, so a listed segment is never gone when it is opened.

use crate::error::{Error, Result};
use crate::io::vfs::{CommitLock, VFile, Vfs};
use crate::log::manifest::Manifest;
use crate::log::segment::Segment;
use crate::store::busy::{Gate, GateGuard, Patience, Waiters};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

pub const WRITER: &str = "WRITER";

/// What this process knows of the files, to tell cheaply whether another process changed them.
pub(crate) struct Seen {
    pub manifest: Option<Arc<dyn VFile>>,
    pub active: Option<Arc<Segment>>,
    pub len: u64,
    /// The MANIFEST as last read under the lock, where an open handle cannot tell that it was
    /// replaced (Windows): a read compares the file's contents with it instead.
    pub known: Option<Manifest>,
}

pub(crate) struct SharedState {
    /// The commit lock's file (never deleted: a replaced file would let two writers in);
    /// `None` once closed, so close releases its descriptor whenever the handle is dropped.
    writer: Mutex<Option<Arc<dyn CommitLock>>>,
    vfs: Arc<dyn Vfs>,
    path: PathBuf,
    /// The longest wait for the lock (`Options::lock_timeout`), and the helper that waits.
    timeout: Duration,
    waiters: Waiters,
    /// A handle on the synced record, read while waiting to tell a slow turn from a stuck holder;
    /// `None` once closed (a closed handle the host still references keeps no descriptor).
    synced: Mutex<Option<crate::log::synced::SyncedFile>>,
    /// One commit-lock holder (or waiter) per process at a time (the OS lock is per open file).
    pub gate: Gate,
    seen: Mutex<Seen>,
}

impl SharedState {
    pub fn open(vfs: &Arc<dyn Vfs>, dir: &Path, timeout: Duration) -> Result<SharedState> {
        let path = dir.join(WRITER);
        let writer: Arc<dyn CommitLock> = Arc::from(vfs.commit_lock(&path).map_err(|e| Error::io("open", &path, e))?);
        Ok(SharedState {
            writer: Mutex::new(Some(writer)),
            vfs: vfs.clone(),
            path,
            timeout,
            waiters: Waiters::default(),
            synced: Mutex::new(crate::log::synced::SyncedFile::open(&**vfs, dir).ok()),
            gate: Gate::default(),
            seen: Mutex::new(Seen { manifest: None, active: None, len: 0, known: None }),
        })
    }

    /// Enters the gate and takes the commit lock, waiting for its holder (released by the kernel
    /// if that one dies) until the lock timeout has passed since `started` (when the caller began
    /// to wait) with no commit landing: `Busy`, naming the holder, after that.
    pub(crate) fn lock(&self, started: Instant) -> Result<(GateGuard<'_>, FileLock)> {
        let progress = || self.progress();
        let mut patience = Patience::new(started, self.timeout, &progress);
        let gate = self.gate.enter(&self.path, &mut patience)?;
        let file = self.lock_file_with(&mut patience)?;
        gate.holding();
        Ok((gate, file))
    }

    /// The commit lock for an open (no other thread has the store yet), waiting as [`Self::lock`].
    pub fn lock_file(&self, started: Instant) -> Result<FileLock> {
        let progress = || self.progress();
        self.lock_file_with(&mut Patience::new(started, self.timeout, &progress))
    }

    fn lock_file_with(&self, patience: &mut Patience<'_>) -> Result<FileLock> {
        if let Some(held) = self.try_lock_file()? {
            return Ok(held);
        }
        let own = self.waiters.wait(&self.vfs, &self.path, patience)?;
        Ok(FileLock(Arc::from(own)))
    }

    /// What the synced record says, as one number: every durable commit of any process moves it.
    fn progress(&self) -> u64 {
        let p = self
            .synced
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .as_ref()
            .and_then(crate::log::synced::SyncedFile::read);
        p.map_or(0, |p| p.segment.rotate_left(40) ^ p.len)
    }

    /// The commit lock if no one holds it, at once; `None` otherwise.
    pub(crate) fn try_lock_file(&self) -> Result<Option<FileLock>> {
        let writer =
            self.writer.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone().ok_or(Error::Closed)?;
        if writer.try_lock().map_err(|e| Error::io("lock", &self.path, e))? {
            Ok(Some(FileLock(writer)))
        } else {
            Ok(None)
        }
    }

    /// Close: drop the handles this process kept to notice others' changes, and the commit
    /// lock's file (its descriptor goes once no guard holds it).
    pub fn release(&self) {
        *self.writer.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = None;
        *self.synced.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = None;
        let mut seen = self.seen();
        seen.manifest = None;
        seen.active = None;
        seen.known = None;
    }

    pub(crate) fn seen(&self) -> MutexGuard<'_, Seen> {
        self.seen.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// Whether the MANIFEST this process last read may have been replaced. Unix tells by its link
/// count (replacement unlinks it). Elsewhere (Windows) an open file's link count is not known
/// here, so the answer is always "maybe": every catch-up rereads the small MANIFEST (a read
/// compares it with the one last seen, `files_changed`) — never a stale view or an append to a
/// sealed segment.
pub(crate) fn manifest_maybe_replaced(seen: &Seen) -> bool {
    if cfg!(not(unix)) {
        return true;
    }
    seen.manifest.as_ref().is_none_or(|m| m.unlinked().unwrap_or(true))
}

/// Whether anything follows byte `len` of the active segment: a frame header another process
/// wrote over the zeros ahead of the log (or past its end), or a file cut shorter than `len`
/// (damage the catch-up reports). A read, not the file's length: zeros written ahead make the
/// file longer than its log.
pub(crate) fn appended_at(seg: &Segment, len: u64) -> std::io::Result<bool> {
    let mut head = [0u8; crate::log::format::FRAME_HEADER];
    let n = seg.file().read_at(&mut head, len)?;
    if n == 0 {
        return Ok(seg.file().len()? < len);
    }
    Ok(head[..n].iter().any(|&b| b != 0))
}

/// The OS commit lock, released on drop.
pub(crate) struct FileLock(Arc<dyn CommitLock>);
impl Drop for FileLock {
    fn drop(&mut self) {
        self.0.unlock();
    }
}
