//! Shared mode, seen from the store: the commit guard (the cross-process commit lock, taken
//! after this process caught up with every other's commits) and the catch-up itself.

use crate::error::{Error, Result};
use crate::io::vfs::{OpenMode, VFile};
use crate::keydir::map::{Keys, Version};
use crate::log::manifest::{MANIFEST, Manifest};
use crate::log::segment::{ScanMode, Scanned, Segment, scan_from};
use crate::store::busy::GateGuard;
use crate::store::handle::Store;
use crate::store::shared::{FileLock, SharedState, appended_at, manifest_maybe_replaced};
use crate::store::writer::{ActiveLog, Writer};
use std::cell::RefCell;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

thread_local! {
    /// Stores whose commit lock this thread holds (by address): a read inside a commit is
    /// already caught up and must not wait for the lock it holds.
    static HELD: RefCell<Vec<usize>> = const { RefCell::new(Vec::new()) };
    /// Stores whose commit lock this thread holds for a batch ([`Store::batch_guard`]): their
    /// appends leave the fsync to the batch's end.
    static BATCH: RefCell<Vec<usize>> = const { RefCell::new(Vec::new()) };
}

/// Held while one commit (or maintenance step) decides, appends and syncs: in shared mode the
/// cross-process commit lock, taken after this process caught up with every other's commits.
/// Without shared mode it holds nothing (the writer mutex serialises, as always).
pub struct CommitGuard<'a> {
    store: &'a Store,
    file: Option<FileLock>,
    _gate: Option<GateGuard<'a>>,
    batch: bool,
}

impl Drop for CommitGuard<'_> {
    fn drop(&mut self) {
        if self.file.is_none() {
            return;
        }
        if self.batch {
            let me = std::ptr::from_ref::<Store>(self.store) as usize;
            BATCH.with(|b| b.borrow_mut().retain(|a| *a != me));
            // The next holder must find every commit durable. Normally the batch's owner has
            // waited already; this covers an owner that unwound (a failure poisons the store).
            let _ = self.store.settle_pending();
        }
        // Still under the lock: what memory holds is what the files hold now.
        self.store.note_seen();
        self.file = None;
        let me = std::ptr::from_ref::<Store>(self.store) as usize;
        HELD.with(|h| h.borrow_mut().retain(|a| *a != me));
    }
}

impl Store {
    fn held_here(&self) -> bool {
        let me = std::ptr::from_ref::<Store>(self) as usize;
        HELD.with(|h| h.borrow().contains(&me))
    }

    pub(crate) fn holds_commit_lock(&self) -> bool {
        self.shared.is_none() || self.held_here()
    }

    /// Takes the commit lock and catches up (shared mode); a no-op guard otherwise. A commit
    /// decided and appended while holding it can lose no other process's update.
    pub fn commit_guard(&self) -> Result<CommitGuard<'_>> {
        self.commit_guard_since(Instant::now())
    }

    /// [`Store::commit_guard`] for a caller that began to wait at `started` (a command queued
    /// behind others): the lock timeout bounds its whole wait, not only this last part of it.
    pub fn commit_guard_since(&self, started: Instant) -> Result<CommitGuard<'_>> {
        let Some(sh) = &self.shared else {
            return Ok(CommitGuard { store: self, file: None, _gate: None, batch: false });
        };
        if self.held_here() {
            // Held for a batch on this thread: the commit is part of it (nothing to take).
            if self.batching_here() {
                return Ok(CommitGuard { store: self, file: None, _gate: None, batch: false });
            }
            return Err(Error::InvalidArgument("the commit lock is already held by this thread".into()));
        }
        let (gate, file) = sh.lock(started)?;
        self.guard_with(gate, file)
    }

    /// [`Store::commit_guard`] if it can be had without waiting (no thread of this process and
    /// no other process holds the lock); `None` otherwise.
    fn try_commit_guard(&self) -> Result<Option<CommitGuard<'_>>> {
        let Some(sh) = &self.shared else { return Ok(None) };
        if self.held_here() {
            return Ok(None);
        }
        let Some(gate) = sh.gate.try_enter() else { return Ok(None) };
        let Some(file) = sh.try_lock_file()? else { return Ok(None) };
        gate.holding();
        self.guard_with(gate, file).map(Some)
    }

    fn guard_with<'a>(&'a self, gate: GateGuard<'a>, file: FileLock) -> Result<CommitGuard<'a>> {
        let me = std::ptr::from_ref::<Store>(self) as usize;
        HELD.with(|h| h.borrow_mut().push(me));
        let guard = CommitGuard { store: self, file: Some(file), _gate: Some(gate), batch: false };
        {
            let mut w = self.writable()?;
            self.catch_up(&mut w)?;
        }
        Ok(guard)
    }

    /// [`Store::commit_guard`] held across several commits: each [`Store::append`] under it
    /// returns without its fsync, and one [`Store::wait_durable`] for the last covers them all
    /// before the guard is dropped (dropping it without that syncs anyway). Other processes'
    /// commits wait meanwhile, as they would behind one commit. Without shared mode, a no-op
    /// guard: appends there never sync inline.
    pub fn batch_guard(&self) -> Result<CommitGuard<'_>> {
        self.batch_guard_since(Instant::now())
    }

    /// [`Store::batch_guard`] for a batch whose oldest command began to wait at `started`.
    pub fn batch_guard_since(&self, started: Instant) -> Result<CommitGuard<'_>> {
        let mut guard = self.commit_guard_since(started)?;
        if guard.file.is_some() {
            guard.batch = true;
            let me = std::ptr::from_ref::<Store>(self) as usize;
            BATCH.with(|b| b.borrow_mut().push(me));
        }
        Ok(guard)
    }

    pub(crate) fn batching_here(&self) -> bool {
        let me = std::ptr::from_ref::<Store>(self) as usize;
        BATCH.with(|b| b.borrow().contains(&me))
    }

    /// Before a read in shared mode: catch up if another process changed the files. With the
    /// commit lock free, under it (as a commit would). Held elsewhere — by a process that may be
    /// stopped — the read answers from what is durable without it: the frames of the active
    /// segment the synced record names (every acknowledged commit of a live process is among
    /// them). Only a replaced MANIFEST needs the lock (a reload opens the listed segments), and
    /// waits for it as long as the lock timeout at most.
    pub(crate) fn catch_up_for_read(&self) -> Result<()> {
        if !self.needs_catch_up() {
            return Ok(());
        }
        if !self.catch_up_without_waiting()? {
            drop(self.commit_guard()?);
        }
        Ok(())
    }

    /// [`Store::catch_up_for_read`] without its last resort (waiting for the lock): false when
    /// only that would do.
    pub(crate) fn catch_up_without_waiting(&self) -> Result<bool> {
        if !self.needs_catch_up() {
            return Ok(true);
        }
        if let Some(guard) = self.try_commit_guard()? {
            drop(guard);
            return Ok(true);
        }
        self.catch_up_durable(false)
    }

    /// Without the commit lock: applies the frames of the active segment the synced record names
    /// durable (complete, checksummed, never cut: a cut happens only past that length). False
    /// when that cannot answer: the MANIFEST was replaced (or, `tail_only`, there is nothing
    /// durable to apply while frames follow — the caller then decides whether to wait).
    pub(crate) fn catch_up_durable(&self, tail_only: bool) -> Result<bool> {
        let Some(sh) = &self.shared else { return Ok(true) };
        let mut w = self.writable()?;
        if w.log().tail.is_some() {
            return Ok(false); // this process holds the lock and is mid-commit: it is caught up
        }
        if manifest_maybe_replaced(&sh.seen()) {
            let path = self.dir.join(MANIFEST);
            let f = self.vfs.open(&path, OpenMode::Read).map_err(|e| Error::io("open", &path, e))?;
            let len = f.len().map_err(|e| Error::io("stat", &path, e))?;
            let mut buf = vec![0u8; len.min(1 << 24) as usize];
            crate::io::vfs::read_exact_at(&*f, &mut buf, 0).map_err(|e| Error::io("read", &path, e))?;
            // Read through the handle kept: this content is that file's, whatever replaces it.
            if Manifest::decode(&buf, &path)? != w.manifest {
                return Ok(false);
            }
            if cfg!(unix) {
                sh.seen().manifest = Some(f);
            }
        }
        let synced = w.synced.as_ref().and_then(crate::log::synced::SyncedFile::read);
        let log = w.log();
        let seg = log.seg.clone();
        let durable = synced.filter(|p| p.segment == seg.number).map_or(0, |p| p.len);
        if durable <= log.len {
            let mut seen = sh.seen();
            if seen.active.as_ref().is_none_or(|a| a.number != seg.number) {
                seen.active = Some(seg.clone());
                seen.len = log.len;
            }
            return Ok(!tail_only || !appended_at(&seg, log.len).unwrap_or(true));
        }
        let cur = self.current.load_full();
        let bounded = crate::io::vfs::Bounded { inner: seg.file(), len: durable };
        let sc = scan_tail(&seg, &bounded, log.len, cur.seq + 1, durable)?;
        let valid_len = sc.valid_len;
        self.apply_tail(log, &cur, sc, valid_len)?;
        let mut seen = sh.seen();
        seen.active = Some(seg);
        seen.len = log.len;
        Ok(true)
    }

    /// Whether a read must catch up first (takes the commit lock) — false without shared mode,
    /// and on the thread that holds the lock.
    pub(crate) fn needs_catch_up(&self) -> bool {
        self.shared.is_some() && !self.held_here() && self.files_changed()
    }

    /// After this process appended under the commit lock: the segment's growth is its own, not
    /// another process's change for a reader to catch up on (no one else appends meanwhile).
    pub(crate) fn note_own_append(&self, log: &ActiveLog) {
        let Some(sh) = &self.shared else { return };
        let mut seen = sh.seen();
        if seen.active.as_ref().is_some_and(|a| a.number == log.seg.number) {
            seen.len = log.len;
        }
    }

    /// After a snapshot is released (shared mode): when another process replaced the MANIFEST
    /// (a compaction, a rotation), catch up now if the commit lock is free, so that the segments
    /// it retired are closed here when their last snapshot lets go, not at this process's next
    /// read. Never waits: with the lock held elsewhere, the next read catches up as before.
    pub fn release_retired(&self) -> Result<()> {
        let Some(sh) = &self.shared else { return Ok(()) };
        if self.closed.load(Ordering::SeqCst) || !self.manifest_replaced(sh) {
            return Ok(());
        }
        if let Some(guard) = self.try_commit_guard()? {
            drop(guard);
        }
        Ok(())
    }

    fn manifest_replaced(&self, sh: &SharedState) -> bool {
        let seen = sh.seen();
        if cfg!(unix) {
            manifest_maybe_replaced(&seen)
        } else {
            seen.known.as_ref().is_none_or(|m| Manifest::read(&*self.vfs, &self.dir).map_or(true, |d| d != *m))
        }
    }

    /// Cheap: one fstat and one short read, no lock (on Windows, a read of the small MANIFEST
    /// instead of the fstat; rename is atomic there too, so it is the old file or the new).
    fn files_changed(&self) -> bool {
        let Some(sh) = &self.shared else { return false };
        let manifest_replaced = self.manifest_replaced(sh);
        let seen = sh.seen();
        let appended = seen.active.as_ref().is_none_or(|a| appended_at(a, seen.len).unwrap_or(true));
        manifest_replaced || appended
    }

    /// Records the MANIFEST and active segment as this process now knows them (under the lock).
    pub(crate) fn note_seen(&self) {
        let Some(sh) = &self.shared else { return };
        let w = self.writer.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let Some(log) = w.log.as_ref() else { return };
        let mut seen = sh.seen();
        // Not on Windows: an open handle there could make another process's MANIFEST
        // replacement fail, and it would tell nothing (see `manifest_maybe_replaced`).
        if cfg!(unix) && seen.manifest.as_ref().is_none_or(|m| m.unlinked().unwrap_or(true)) {
            seen.manifest = self.vfs.open(&self.dir.join(MANIFEST), OpenMode::Read).ok();
        }
        if cfg!(not(unix)) {
            seen.known = Some(w.manifest.clone());
        }
        seen.active = Some(log.seg.clone());
        seen.len = log.len;
    }

    /// Brings memory up to the files (under the commit lock and the writer mutex).
    pub(crate) fn catch_up(&self, w: &mut Writer) -> Result<()> {
        let Some(sh) = &self.shared else { return Ok(()) };
        let replaced = manifest_maybe_replaced(&sh.seen());
        if replaced {
            let on_disk = Manifest::read(&*self.vfs, &self.dir)?;
            if on_disk != w.manifest {
                return self.reload(w, on_disk);
            }
        }
        self.catch_up_tail(w)
    }

    /// Applies the frames other processes appended to the active segment; cuts a torn tail a
    /// dead holder of the lock left (no live process is writing: we hold the lock).
    fn catch_up_tail(&self, w: &mut Writer) -> Result<()> {
        let synced = w.synced.as_ref().and_then(crate::log::synced::SyncedFile::read);
        let log = w.log();
        let seg = log.seg.clone();
        if !appended_at(&seg, log.len).map_err(|e| Error::io("read", &seg.path, e))? {
            return Ok(());
        }
        let file_len = seg.file().len().map_err(|e| Error::io("stat", &seg.path, e))?;
        log.alloc = file_len;
        if file_len < log.len {
            return Err(Error::Corruption {
                file: seg.path.clone(),
                offset: file_len,
                reason: format!("active segment shrank to {file_len} bytes; {} were read", log.len),
            });
        }
        let cur = self.current.load_full();
        let durable = synced.filter(|p| p.segment == seg.number).map_or(0, |p| p.len);
        let sc = scan_tail(&seg, seg.file(), log.len, cur.seq + 1, durable)?;
        if sc.torn.is_some() {
            seg.file().set_len(sc.valid_len).map_err(|e| self.poison(Error::io("truncate", &seg.path, e)))?;
            log.alloc = sc.valid_len;
            seg.file().sync_data().map_err(|e| self.poison(Error::io("fsync", &seg.path, e)))?;
            self.counters.fsync();
        }
        self.apply_tail(log, &cur, sc, durable)
    }

    /// Publishes the frames a catch-up scanned past `log.len` (over `cur`, the version they
    /// follow): the key directory, the active log's records and length, the disk counter.
    /// `synced_len`: how far the segment is now known durable.
    fn apply_tail(&self, log: &mut ActiveLog, cur: &Version, sc: Scanned, synced_len: u64) -> Result<()> {
        let mut keys = Keys::clone(&cur.keys);
        keys.apply_recs(&sc.recs)?;
        let grown = sc.valid_len - log.len;
        log.recs.extend(sc.recs);
        log.len = sc.valid_len;
        log.synced_len = log.synced_len.max(synced_len);
        self.counters.disk_bytes.fetch_add(grown, Ordering::Relaxed);
        let seq = sc.last_seq.unwrap_or(cur.seq);
        self.current.store(Arc::new(Version { keys: Arc::new(keys), seq, segments: cur.segments.clone() }));
        Ok(())
    }

    /// Another process rotated or compacted: load what the new MANIFEST lists, from scratch.
    /// The segments the old version saw stay open for the snapshots that hold them.
    fn reload(&self, w: &mut Writer, manifest: Manifest) -> Result<()> {
        crate::store::recovery::check_shape(&manifest, &self.dir.join(MANIFEST))?;
        let synced = w.synced.as_ref().ok_or(Error::Closed)?;
        let loaded = crate::store::recovery::load(
            &self.vfs,
            &self.dir,
            &manifest,
            synced,
            self.options.strict,
            &self.counters,
            self.crypt(),
        )?;
        let Some(log) = loaded.log else {
            return Err(Error::Corruption {
                file: self.dir.join(MANIFEST),
                offset: 0,
                reason: "the MANIFEST lists no active segment".into(),
            });
        };
        let mut segments = loaded.segments;
        segments.sort_by_key(|s| s.number);
        // What another process retired: unlinked by this process when its last reader here
        // lets go, in case the retiring process died before it could (its files hold values a
        // redaction erased; a sweep under the lock leaves segments held here to their holders).
        let listed: std::collections::HashSet<u64> = manifest.segments.iter().map(|s| s.number).collect();
        for s in self.current.load().segments.iter() {
            if !listed.contains(&s.number) {
                s.mark_obsolete();
            }
        }
        w.manifest = manifest;
        w.log = Some(log);
        self.counters.disk_bytes.store(loaded.disk, Ordering::Relaxed);
        self.current.store(Arc::new(Version { keys: loaded.keys, seq: loaded.seq, segments: Arc::new(segments) }));
        Ok(())
    }
}

/// The frames of the active segment `seg` past `from` (where this process stopped reading), in
/// `file`: the segment's own, or a view of it bounded to what is durable. `durable`: the length
/// the synced record names, before which no run of zeros may end the log.
fn scan_tail(seg: &Segment, file: &dyn VFile, from: u64, next_seq: u64, durable: u64) -> Result<Scanned> {
    let id = (seg.number, seg.version, crate::log::format::KIND_LOG);
    let mode = ScanMode::Active { synced: durable, trust_zeros: true };
    scan_from(file, &seg.path, id, from, next_seq, mode, seg.crypt())
}
