//! The store handle and the write path: append → fsync → apply → publish, one writer at a time.

use crate::error::{Error, Result};
use crate::io::vfs::{Vfs, write_all_at};
use crate::keydir::map::{KeyMap, Keys, Version};
use crate::log::format::{FORMAT_VERSION, KIND_LOG, PayloadBuilder, SEG_HEADER, synced_marker};
use crate::log::manifest::SegMeta;
use crate::log::metabuf::MetaBuf;
use crate::log::record::{Entry, Key, Rec};
use crate::log::segment::{Segment, seg_name};
use crate::log::synced::SyncedPoint;
use crate::store::batch::{Batch, Op};
use crate::store::options::{Durability, Options};
use crate::store::snapshot::Snapshot;
use crate::store::writer::{ActiveLog, Counters, Writer, create_log_segment};
use arc_swap::ArcSwap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

/// Cuts the active segment back to its last frame when zeros were written ahead of it (not
/// synced here); whether it did.
fn cut_zeros_ahead(log: &mut ActiveLog) -> Result<bool> {
    let f = log.seg.file();
    let len = f.len().map_err(|e| Error::io("stat", &log.seg.path, e))?;
    if len <= log.len {
        return Ok(false);
    }
    f.set_len(log.len).map_err(|e| Error::io("truncate", &log.seg.path, e))?;
    log.alloc = log.len;
    Ok(true)
}

/// Zeros written ahead of the log's end at a time (see [`ActiveLog::alloc`]).
const ZEROS_AHEAD: u64 = 1 << 20;

/// An open store. Share it between threads with `Arc<Store>`; one writer at a time inside.
pub struct Store {
    pub(crate) dir: PathBuf,
    pub(crate) options: Options,
    pub(crate) vfs: Arc<dyn Vfs>,
    pub(crate) current: ArcSwap<Version>,
    pub(crate) writer: Mutex<Writer>,
    /// Held by the one waiter that fsyncs for everyone (group commit); others queue behind it
    /// and usually find their commit already durable.
    pub(crate) syncer: Mutex<()>,
    pub(crate) counters: Arc<Counters>,
    pub(crate) closed: AtomicBool,
    /// Set by the first failed write/fsync (or a panic under the writer mutex): from then on
    /// every call answers `Poisoned` until reopen, so nothing answers from a failed commit.
    pub(crate) poisoned: OnceLock<String>,
    /// Shared mode's commit lock and what this process last saw of the files.
    pub(crate) shared: Option<crate::store::shared::SharedState>,
    /// An encrypted store's data key (FORMAT.md, "Encryption at rest").
    pub(crate) data_key: Option<crate::crypto::keyfile::DataKey>,
}

impl Store {
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The cipher everything this store writes is sealed with; `None` for a plain store.
    pub(crate) fn crypt(&self) -> Option<&Arc<crate::crypto::crypt::Crypt>> {
        self.data_key.as_ref().map(|dk| &dk.crypt)
    }

    pub fn options(&self) -> &Options {
        &self.options
    }

    /// The writer, even after a panic under its mutex (which poisons the store): for the
    /// calls that still run on a poisoned store (close, verify).
    fn lock_writer_anyway(&self) -> MutexGuard<'_, Writer> {
        self.writer.lock().unwrap_or_else(|p| {
            let _ = self.poisoned.set(PANICKED.into());
            p.into_inner()
        })
    }

    /// The writer, unless a panic under its mutex left it half-updated.
    fn lock_writer(&self) -> Result<MutexGuard<'_, Writer>> {
        match self.writer.lock() {
            Ok(w) => Ok(w),
            Err(_) => Err(self.poison(Error::Poisoned { reason: PANICKED.into() })),
        }
    }

    /// `Err(Poisoned)` once a failure has poisoned the store.
    pub(crate) fn check_poison(&self) -> Result<()> {
        if self.writer.is_poisoned() {
            let _ = self.poisoned.set(PANICKED.into());
        }
        match self.poisoned.get() {
            Some(r) => Err(Error::Poisoned { reason: r.clone() }),
            None => Ok(()),
        }
    }

    /// Records the first failure that poisons the store and passes it on.
    pub(crate) fn poison(&self, e: Error) -> Error {
        let _ = self.poisoned.set(e.to_string());
        e
    }

    /// The writer, if writes are allowed.
    pub(crate) fn writable(&self) -> Result<MutexGuard<'_, Writer>> {
        let w = self.lock_writer()?;
        if self.closed.load(Ordering::SeqCst) || w.log.is_none() {
            return Err(Error::Closed);
        }
        self.check_poison()?;
        Ok(w)
    }

    pub(crate) fn fsyncs(&self) -> impl Fn() + '_ {
        || self.counters.fsync()
    }

    /// Apply a batch as one commit; returns its sequence number once durable (per durability).
    /// An empty batch commits nothing and returns the current sequence number.
    pub fn write(&self, batch: Batch) -> Result<u64> {
        let _guard = self.commit_guard()?;
        let seq = self.append(batch)?;
        self.wait_durable(seq)?;
        Ok(seq)
    }

    /// The newest state, including commits appended but not yet durable (Sync mode). For a
    /// writer deciding what to append next; readers want [`Store::snapshot`].
    pub fn latest_snapshot(&self) -> Result<Snapshot> {
        let w = self.lock_writer()?;
        if self.closed.load(Ordering::SeqCst) {
            return Err(Error::Closed);
        }
        self.check_poison()?;
        let tail = w.log.as_ref().and_then(|l| l.tail.clone());
        let v = tail.unwrap_or_else(|| self.current.load_full());
        Ok(Snapshot::new(v, self.counters.clone()))
    }

    /// Write a batch into the log as the next commit and return its sequence number. In Sync
    /// mode it is neither fsynced nor visible to [`Store::snapshot`] until
    /// [`Store::wait_durable`] (by this caller or any other) covers it; in Buffered mode it is
    /// published at once. An empty batch commits nothing and returns the latest sequence number.
    ///
    /// Shared mode: call it while holding [`Store::commit_guard`] (decide on
    /// [`Store::latest_snapshot`] under the same guard); the commit is fsynced before it
    /// returns, so no other process ever reads a commit that is not durable.
    pub fn append(&self, batch: Batch) -> Result<u64> {
        if !self.holds_commit_lock() {
            return Err(Error::InvalidArgument("in shared mode, append only while holding commit_guard()".into()));
        }
        let mut w = self.writable()?;
        let cur = w.log().tail.clone().unwrap_or_else(|| self.current.load_full());
        if batch.is_empty() {
            return Ok(cur.seq);
        }
        let seq = cur.seq + 1;
        let payload = 13
            + batch
                .ops
                .iter()
                .map(|op| match op {
                    Op::Put { key, value, meta } => PayloadBuilder::put_len(key.len(), value.len(), meta.len()),
                    Op::Delete { key } => PayloadBuilder::delete_len(key.len()),
                })
                .sum::<usize>();
        let mut pb = PayloadBuilder::with_capacity(KIND_LOG, seq, payload);
        let mut puts = Vec::with_capacity(batch.len());
        for op in &batch.ops {
            match op {
                Op::Put { key, value, meta } => {
                    if key.len() > u32::MAX as usize || value.len() > crate::log::format::MAX_FRAME {
                        return Err(Error::InvalidArgument("key or value too large".into()));
                    }
                    if meta.len() > crate::log::metabuf::MAX_META {
                        return Err(Error::InvalidArgument(format!(
                            "metadata longer than {} bytes",
                            crate::log::metabuf::MAX_META
                        )));
                    }
                    pb.put(seq, key, value, meta);
                    puts.push(true);
                }
                Op::Delete { key } => {
                    if key.len() > u32::MAX as usize {
                        return Err(Error::InvalidArgument("key too large".into()));
                    }
                    pb.delete(seq, key);
                    puts.push(false);
                }
            }
            if pb.buf.len() > crate::log::format::MAX_FRAME {
                return Err(Error::InvalidArgument(format!(
                    "batch exceeds the largest commit ({} bytes)",
                    crate::log::format::MAX_FRAME
                )));
            }
        }
        // Sealing adds a nonce and tag per blob: the frame must still fit what a reader accepts.
        if pb.frame_len(self.crypt().is_some()) - crate::log::format::FRAME_HEADER > crate::log::format::MAX_FRAME {
            return Err(Error::InvalidArgument(format!(
                "batch exceeds the largest commit ({} bytes)",
                crate::log::format::MAX_FRAME
            )));
        }
        let buffered = self.options.durability == Durability::Buffered;
        // A Sync-mode frame unflagged says "every byte before me was durable when I was
        // written" (FORMAT.md, recovery rule 6). Behind a pending group that is not so: flag it
        // BUFFERED, so a crash tearing an earlier unsynced frame reads as a torn tail. In shared
        // mode another process's buffered commits may precede it, unsynced: the same.
        let flagged = buffered || w.log().tail.is_some() || self.unsynced_before(w.log());
        let frame_len = pb.frame_len(self.crypt().is_some()) as u64;
        let log = w.log();
        // Every key's entry in the directory this commit builds on, read before a byte is written
        // or a segment sealed: one that cannot be read (a hint page and its segment both
        // damaged) refuses the commit, nothing written and the store not poisoned. Applying the
        // commit takes a key found absent as absent (an import's keys: one search of the runs
        // a key, not two; a byte a key kept, not an entry), unless a seal published another
        // directory in between; a key found is read again (answered the same).
        let base = log.tail.clone().unwrap_or_else(|| self.current.load_full());
        let mut absent = Vec::with_capacity(batch.ops.len());
        for op in &batch.ops {
            let (Op::Put { key, .. } | Op::Delete { key }) = op;
            absent.push(base.keys.get(key)?.is_none());
        }
        if (log.len > SEG_HEADER as u64 && log.len + frame_len > self.options.segment_bytes)
            || log.version < FORMAT_VERSION
        {
            self.rotate(&mut w)?;
        }
        // Rotation published a version with the new segment (and settled any tail); build on
        // the newest.
        let log = w.log();
        let cur = log.tail.clone().unwrap_or_else(|| self.current.load_full());
        let same = Arc::ptr_eq(&base, &cur);
        drop(base);
        let mut before = absent.into_iter().map(move |a| (same && a).then_some(None));
        let active = log.seg.clone();
        let mut keys = Keys::clone(&cur.keys);
        // Everything before the marker is durable already (open fsynced it), so marker and
        // commit go out in one write.
        let lead = if buffered && self.mark_before_buffered(log) { synced_marker(cur.seq) } else { Vec::new() };
        let off = log.len + lead.len() as u64;
        // Sealed where it will lie: its position is in every blob's associated data.
        let (frame, placed) = pb.seal(flagged, active.crypt(), active.number, off)?;
        // In front of the frame in its own buffer (room was kept for it): no copy of the commit.
        let mut bytes = frame;
        if !lead.is_empty() {
            bytes.splice(0..0, lead);
        }
        if let Err(e) = self.write_ahead(log, &bytes) {
            return Err(self.poison(Error::io("write", &active.path, e)));
        }
        log.len += bytes.len() as u64;
        self.note_own_append(log);
        log.mark_first = false;
        log.unsynced |= buffered;
        self.counters.disk_bytes.fetch_add(bytes.len() as u64, Ordering::Relaxed);
        self.counters.bytes_written.fetch_add(bytes.len() as u64, Ordering::Relaxed);

        let base = off + crate::log::format::FRAME_HEADER as u64;
        let mut placed = placed.into_iter();
        for (op, is_put) in batch.ops.into_iter().zip(puts) {
            let at = if is_put { placed.next() } else { None };
            let (key, entry) = match (op, at) {
                (Op::Put { key, meta, .. }, Some(at)) => (
                    key,
                    Some(Entry {
                        seq,
                        meta: MetaBuf::new(&meta),
                        seg: active.number,
                        off: base + at.rel as u64,
                        len: at.len,
                        crc: at.crc,
                    }),
                ),
                (Op::Delete { key }, _) | (Op::Put { key, .. }, None) => (key, None),
            };
            let key: Key = key.into();
            log.recs.insert(key.clone(), &Rec { seq, entry: entry.clone() });
            if let Err(e) = keys.apply_read(key, entry, before.next().flatten()) {
                return Err(self.poison(e));
            }
        }
        let v = Arc::new(Version { keys: Arc::new(keys), seq, segments: cur.segments.clone() });
        self.counters.commits.fetch_add(1, Ordering::Relaxed);
        if buffered {
            // Publishing last: a reader sees the whole batch or none of it.
            self.current.store(v);
        } else {
            log.tail = Some(v);
        }
        if self.shared.is_some() && !buffered && !self.batching_here() {
            // The commit lock is released after this: the next holder must find it durable.
            self.settle(&mut w)?;
        }
        Ok(seq)
    }

    /// Writes `bytes` at the end of the log. When they would pass the zeros written ahead, zeros
    /// follow them in the same write, so the fsync that covers this commit makes the new file
    /// size durable once and the next commits' fsyncs flush data only.
    fn write_ahead(&self, log: &mut ActiveLog, bytes: &[u8]) -> std::io::Result<()> {
        let end = log.len + bytes.len() as u64;
        if end > log.alloc {
            // Another process sharing the store may have written zeros ahead already.
            log.alloc = log.alloc.max(log.seg.file().len()?);
        }
        if end <= log.alloc {
            return write_all_at(log.seg.file(), bytes, log.len);
        }
        let ahead = ZEROS_AHEAD.min(self.options.segment_bytes.saturating_sub(end)) as usize;
        let mut buf = Vec::with_capacity(bytes.len() + ahead);
        buf.extend_from_slice(bytes);
        buf.resize(bytes.len() + ahead, 0);
        write_all_at(log.seg.file(), &buf, log.len)?;
        log.alloc = end + ahead as u64;
        Ok(())
    }

    /// Shared mode: bytes of the active segment not known durable (another process's buffered
    /// commits, or this one's). What this process knows durable comes from its own fsyncs and
    /// the synced record it read while catching up, which is never ahead of the disk.
    fn unsynced_before(&self, log: &ActiveLog) -> bool {
        // A fresh segment's header is durable (created with an fsync) before anything is known.
        self.shared.is_some() && log.synced_len.max(SEG_HEADER as u64) < log.len
    }

    /// Whether a buffered commit must be preceded by a synced marker: one process knows this
    /// from open (`mark_first`); in shared mode, when everything before is known durable and the
    /// segment holds frames (a marker right after a marker is allowed, and costs a few bytes).
    fn mark_before_buffered(&self, log: &ActiveLog) -> bool {
        match self.shared {
            None => log.mark_first,
            Some(_) => log.synced_len == log.len && log.len > SEG_HEADER as u64,
        }
    }

    /// Return once commit `seq` (from [`Store::append`]) is durable and published. Concurrent
    /// waiters share fsyncs: one leader at a time syncs the active segment, which covers every
    /// commit appended before it started, and publishes the newest of them.
    ///
    /// Once the store is poisoned it answers `Poisoned`, except (Sync mode) for a commit already
    /// published: that one was fsynced before the failure, and reporting it failed would be
    /// false.
    pub fn wait_durable(&self, seq: u64) -> Result<()> {
        let published = || self.current.load().seq >= seq && self.options.durability == Durability::Sync;
        if published() {
            return Ok(());
        }
        self.check_poison()?;
        if self.options.durability == Durability::Buffered && self.current.load().seq >= seq {
            return Ok(());
        }
        let _leader = self.syncer.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if published() {
            return Ok(());
        }
        let (v, active, len) = {
            let mut w = self.lock_writer()?;
            // Settled by another operation (rotate, checkpoint, close) since the check above.
            if published() {
                return Ok(());
            }
            self.check_poison()?;
            match w.log.as_mut() {
                Some(ActiveLog { tail: Some(t), seg, len, .. }) if t.seq >= seq => (t.clone(), seg.clone(), *len),
                // Not published, not pending: it never made it (closed before it was settled).
                _ => return Err(Error::Closed),
            }
        };
        // The fsync runs without the writer mutex: appends keep landing behind it and form
        // the next group.
        let synced = active.file().sync_data();
        let mut w = self.lock_writer()?;
        if let Err(e) = synced {
            return Err(self.poison(Error::io("fsync", &active.path, e)));
        }
        self.counters.fsync();
        self.check_still_linked(&active)?;
        Self::note_synced(&mut w, active.number, len);
        self.publish_durable(&mut w, v);
        Ok(())
    }

    /// A store whose directory was removed (or whose active segment was unlinked) under it
    /// must not acknowledge anything more: the commits would vanish with the last handle.
    fn check_still_linked(&self, seg: &Segment) -> Result<()> {
        match seg.file().unlinked() {
            Ok(false) => Ok(()),
            Ok(true) => Err(self.poison(Error::io(
                "check",
                &seg.path,
                std::io::Error::new(std::io::ErrorKind::NotFound, "the store's files were removed while it was open"),
            ))),
            Err(e) => Err(self.poison(Error::io("stat", &seg.path, e))),
        }
    }

    /// Records (without an fsync) that `len` bytes of segment `number` are durable, if that
    /// is news; a stale record only makes recovery more lenient, so a failed write is ignored.
    pub(crate) fn note_synced(w: &mut Writer, number: u64, len: u64) {
        let Some(log) = w.log.as_mut() else { return };
        if log.seg.number != number || len <= log.synced_len {
            return;
        }
        if w.synced.as_ref().is_some_and(|f| f.write(SyncedPoint { segment: number, len }).is_ok()) {
            log.synced_len = len;
        }
    }

    /// Publish `v`, known durable, unless something newer (or a rewrite of the same commit, as
    /// compaction publishes) is already out. Under the writer mutex: every publisher holds it.
    fn publish_durable(&self, w: &mut Writer, v: Arc<Version>) {
        if let Some(log) = w.log.as_mut()
            && log.tail.as_ref().is_some_and(|t| t.seq <= v.seq)
        {
            log.tail = None;
        }
        if v.seq > self.current.load().seq {
            self.current.store(v);
        }
    }

    /// Make a pending tail durable and published, inline: every operation that reads or
    /// replaces `current` under the writer mutex does this first, so it never loses or rewinds
    /// appended commits. A failed fsync poisons.
    pub(crate) fn settle(&self, w: &mut Writer) -> Result<()> {
        let log = w.log();
        let Some(v) = log.tail.clone() else { return Ok(()) };
        let (active, len) = (log.seg.clone(), log.len);
        if let Err(e) = active.file().sync_data() {
            return Err(self.poison(Error::io("fsync", &active.path, e)));
        }
        self.counters.fsync();
        self.check_still_linked(&active)?;
        Self::note_synced(w, active.number, len);
        self.publish_durable(w, v);
        Ok(())
    }

    /// Make every commit so far durable (for `Durability::Buffered`). In shared mode: every
    /// commit any process appended before it took the commit lock.
    pub fn sync(&self) -> Result<()> {
        let _guard = self.commit_guard()?;
        let mut w = self.writable()?;
        self.settle(&mut w)?;
        let r = self.sync_active(&mut w);
        r.map_err(|e| self.poison(e))
    }

    /// fsync the active segment; if buffered commits were among what it covered, append a
    /// synced marker and fsync that too, so recovery can tell a later hole in front of them from
    /// damage (FORMAT.md, recovery rule 6).
    fn sync_active(&self, w: &mut Writer) -> Result<()> {
        let needs_marker = w.log().unsynced || self.unsynced_before(w.log());
        let log = w.log();
        let active = log.seg.clone();
        active.file().sync_data().map_err(|e| Error::io("fsync", &active.path, e))?;
        self.counters.fsync();
        if needs_marker {
            let marker = synced_marker(self.current.load().seq);
            write_all_at(active.file(), &marker, log.len).map_err(|e| Error::io("write", &active.path, e))?;
            log.len += marker.len() as u64;
            log.unsynced = false;
            self.counters.disk_bytes.fetch_add(marker.len() as u64, Ordering::Relaxed);
            self.counters.bytes_written.fetch_add(marker.len() as u64, Ordering::Relaxed);
            active.file().sync_data().map_err(|e| Error::io("fsync", &active.path, e))?;
            self.counters.fsync();
        }
        self.check_still_linked(&active)?;
        let len = w.log().len;
        Self::note_synced(w, active.number, len);
        Ok(())
    }

    /// Seal the active segment (fsync, hint) and start the next one; MANIFEST swap last.
    /// Any failure poisons: the files on disk may no longer match what memory believes.
    pub(crate) fn rotate(&self, w: &mut Writer) -> Result<()> {
        let r = self.rotate_inner(w);
        r.map_err(|e| self.poison(e))
    }

    fn rotate_inner(&self, w: &mut Writer) -> Result<()> {
        let old = w.log().seg.clone();
        // A sealed segment is exactly its frames: the zeros written ahead go.
        cut_zeros_ahead(w.log())?;
        old.file().sync_data().map_err(|e| Error::io("fsync", &old.path, e))?;
        self.counters.fsync();
        self.check_still_linked(&old)?;
        // That fsync made any pending tail durable: publish it before sealing behind it.
        if let Some(v) = w.log().tail.clone() {
            self.publish_durable(w, v);
        }
        let seq = self.current.load().seq;
        let old_len = w.log().len;
        // Streamed from the key directory in key order, twice (the hint's directory, then its
        // pages): the segment's records are never gathered, nor the hint's bytes.
        // The hint pages the records borrow (the segment's own run, when open read its active
        // hint) are held by `pins` for the seal's own duration only, both passes: the cache may
        // let them go meanwhile without freeing what the writer still reads.
        let cur = self.current.load_full();
        let recs = &w.log().recs;
        let pins = crate::keydir::page_cache::Pins::default();
        crate::log::hint::write_streamed(
            &*self.vfs,
            &self.dir,
            (old.number, old_len),
            &mut || recs.records(&cur.keys, &pins, old.number),
            None,
            Some(&self.fsyncs()),
            self.crypt().map(|c| &**c),
        )?;
        drop(pins);
        drop(cur);
        // Read back as open would (a built directory needs none): what the next version's
        // directory stands on in place of the segment's keys in the delta. Before the MANIFEST
        // names the segment sealed, so a hint that does not read back fails the rotation
        // with nothing changed.
        let sealed = if self.current.load().keys.is_built() {
            None
        } else {
            let first_seq = w.manifest.segments.last().map_or(seq + 1, |s| s.first_seq);
            let run = crate::store::hint_source::sealed_run(
                (&self.vfs, self.crypt()),
                &self.dir,
                &old,
                (first_seq, seq, old_len),
            );
            let path = self.dir.join(crate::log::segment::hint_name(old.number));
            Some(run.ok_or_else(|| {
                Error::io("read", &path, std::io::Error::other("a hint just written does not read back"))
            })?)
        };
        let mut m = w.manifest.clone();
        let last = m.segments.last_mut().unwrap();
        last.sealed = true;
        last.len = old_len;
        last.last_seq = seq;
        let number = m.next_segment;
        m.next_segment += 1;
        let seg = create_log_segment(&self.vfs, &self.dir, number, seq + 1, &self.fsyncs(), self.crypt().cloned())?;
        m.segments.push(SegMeta { number, kind: KIND_LOG, sealed: false, first_seq: seq + 1, last_seq: 0, len: 0 });
        m.write(&*self.vfs, &self.dir, &self.fsyncs())?;
        w.manifest = m;
        let sealed_log = w.log.replace(ActiveLog::fresh(seg.clone()));
        self.counters.disk_bytes.fetch_add(SEG_HEADER as u64, Ordering::Relaxed);
        let cur = self.current.load_full();
        let mut segs = (*cur.segments).clone();
        segs.push(seg);
        // The sealed segment's hint becomes a run and the delta lets go of its keys, so the
        // delta never holds more than the active segment's (and what a shared-mode catch-up
        // applied of other processes' seals). A built map stays as it is.
        let keys = match (sealed, sealed_log) {
            (Some(run), Some(log)) => Arc::new(cur.keys.seal(run, log.recs.deleted())?),
            _ => cur.keys.clone(),
        };
        self.current.store(Arc::new(Version { keys, seq: cur.seq, segments: Arc::new(segs) }));
        Ok(())
    }

    /// Whether several processes may share this store (opened with `shared`).
    pub fn is_shared(&self) -> bool {
        self.shared.is_some()
    }

    /// Makes durable and publishes whatever was appended and not yet synced (a batch guard's
    /// drop). A failed fsync poisons, as everywhere.
    pub(crate) fn settle_pending(&self) -> Result<()> {
        let mut w = self.lock_writer()?;
        if w.log.as_ref().is_some_and(|l| l.tail.is_some()) {
            self.settle(&mut w)?;
        }
        Ok(())
    }

    /// The last commit published, as this process knows it: no catch-up on other processes
    /// (for bookkeeping under locks a catch-up must not wait behind).
    pub fn published_seq(&self) -> u64 {
        self.current.load().seq
    }

    /// A consistent read view that later commits do not change.
    pub fn snapshot(&self) -> Result<Snapshot> {
        if self.closed.load(Ordering::SeqCst) {
            return Err(Error::Closed);
        }
        self.check_poison()?;
        self.catch_up_for_read()?;
        Ok(Snapshot::new(self.current.load_full(), self.counters.clone()))
    }

    /// [`Store::snapshot`] when it needs no catch-up, `None` when it would: shared mode's
    /// catch-up takes the commit lock, which another process may hold through its fsync, and a
    /// caller on a latency-sensitive thread would rather read elsewhere than wait for it.
    pub fn snapshot_if_current(&self) -> Result<Option<Snapshot>> {
        if self.closed.load(Ordering::SeqCst) {
            return Err(Error::Closed);
        }
        self.check_poison()?;
        if self.needs_catch_up() {
            return Ok(None);
        }
        Ok(Some(Snapshot::new(self.current.load_full(), self.counters.clone())))
    }

    /// [`Store::snapshot`] that never waits for another process (for a caller that must pin a
    /// view now, on a thread that must not block): caught up under the commit lock when it is
    /// free, else from what is durable without it; `Busy` at once (`waited_ms` 0) when neither
    /// answers — another process holds the lock right after replacing the MANIFEST.
    pub fn snapshot_without_waiting(&self) -> Result<Snapshot> {
        if self.closed.load(Ordering::SeqCst) {
            return Err(Error::Closed);
        }
        self.check_poison()?;
        if !self.catch_up_without_waiting()? {
            let path = self.dir.join(crate::store::shared::WRITER);
            return Err(Error::Busy {
                dir: self.dir.clone(),
                holder: crate::store::busy::holder_of(&path),
                waited_ms: 0,
            });
        }
        Ok(Snapshot::new(self.current.load_full(), self.counters.clone()))
    }

    /// Read every record of every segment and every live value, checking every checksum.
    /// Runs on a poisoned store too (it reads what is on disk and changes nothing then).
    pub fn verify(&self) -> Result<VerifyReport> {
        let mut w = self.lock_writer_anyway();
        if self.closed.load(Ordering::SeqCst) || w.log.is_none() {
            return Err(Error::Closed);
        }
        if self.poisoned.get().is_none() {
            self.settle(&mut w)?;
        }
        let v = self.current.load_full();
        // Every live entry, merged from the runs as a listing is (no map of them all is built).
        // Its pages are held until the check ends (it reads every value besides).
        let pins = crate::keydir::page_cache::Pins::default();
        let live = v.keys.range(&pins, std::ops::Bound::Unbounded, std::ops::Bound::Unbounded)?;
        let mut report = VerifyReport { files: 0, records: 0, keys: 0 };
        let mut next = 1;
        let log_len = w.log().len;
        for sm in &w.manifest.segments {
            let seg = v.segment(sm.number).expect("the current version holds every listed segment");
            report.files += 1;
            // The active segment: every byte of its log must read back; zeros may follow.
            let mode = if sm.sealed {
                crate::log::segment::ScanMode::Sealed
            } else {
                crate::log::segment::ScanMode::Active { synced: log_len, trust_zeros: false }
            };
            let sc = crate::log::segment::scan(
                seg.file(),
                &seg.path,
                (sm.number, seg.version, sm.kind),
                sm.first_seq.max(next),
                mode,
                seg.crypt(),
            )?;
            // A compacted segment covers commits up to last_seq; its newest live entry may be older.
            let ends_ok = match sc.last_seq {
                None => true,
                Some(s) if sm.kind == crate::log::format::KIND_COMPACTED => s <= sm.last_seq,
                Some(s) => s == sm.last_seq,
            };
            if sm.sealed && !ends_ok {
                return Err(Error::Corruption {
                    file: seg.path.clone(),
                    offset: sc.valid_len,
                    reason: format!("sealed segment ends at seq {:?}, MANIFEST says {}", sc.last_seq, sm.last_seq),
                });
            }
            next = if sm.sealed { sm.last_seq + 1 } else { sc.last_seq.map_or(next, |s| s + 1) };
            report.records += sc.records;
        }
        for (_, val) in live {
            let Some(e) = val.entry() else { continue };
            report.keys += 1;
            let seg = v.segment(e.seg).ok_or_else(|| Error::Corruption {
                file: self.dir.join(seg_name(e.seg)),
                offset: e.off,
                reason: "entry points into a segment that is not open".into(),
            })?;
            seg.read_value(&e)?;
        }
        Ok(report)
    }

    pub fn stats(&self) -> Stats {
        let v = self.current.load_full();
        let poisoned = self.check_poison().is_err();
        let disk = self.counters.disk_bytes.load(Ordering::Relaxed);
        let c = &self.counters;
        let sealed = v.segments.len().saturating_sub(1) as u64;
        // Counters answer on a caller's latency-sensitive thread: never wait for the key directory.
        // Zeros only when a sealed hint's page and its segment are both damaged: the reads
        // report that (Corruption); counters have no error to return.
        let (keys, live_bytes) = v.keys.totals().unwrap_or_default();
        Stats {
            commits: c.commits.load(Ordering::Relaxed),
            fsyncs: c.fsyncs.load(Ordering::Relaxed),
            values_read: c.values_read.load(Ordering::Relaxed),
            bytes_written: c.bytes_written.load(Ordering::Relaxed),
            live_bytes,
            dead_bytes: disk.saturating_sub(live_bytes),
            files: v.segments.len() as u64 + sealed,
            keys,
            open_snapshots: c.open_snapshots.load(Ordering::Relaxed),
            compactions: c.compactions.load(Ordering::Relaxed),
            seq: v.seq,
            poisoned,
        }
    }

    /// Close the store: release the lock and every file handle this handle holds (open snapshots
    /// keep the segments they see). Buffered commits are synced first. Idempotent.
    pub fn close(&self) -> Result<()> {
        // Shared mode: the clean-close record is written under the commit lock, after catching
        // up, so it never names less than another process already recorded.
        let (_guard, busy) = if self.shared.is_some() && !self.is_closed() && self.poisoned.get().is_none() {
            match self.commit_guard() {
                Ok(g) => (Some(g), false),
                Err(e) => (None, matches!(e, Error::Busy { .. })),
            }
        } else {
            (None, false)
        };
        let mut w = self.lock_writer_anyway();
        if self.closed.swap(true, Ordering::SeqCst) {
            return Ok(());
        }
        let mut result = Ok(());
        if busy && let Some(log) = w.log.as_ref() {
            // Another process holds the commit lock and does not let go: no clean-close record
            // or hint may be written without it (the next open scans, as after a crash). An
            // fsync needs no lock: this handle's buffered commits are made durable anyway.
            if self.options.durability == Durability::Buffered {
                result = log.seg.file().sync_data().map_err(|e| Error::io("fsync", &log.seg.path, e));
            }
        } else if self.poisoned.get().is_none() && w.log.is_some() {
            result = self.settle(&mut w);
            // Shared: a Sync-mode handle may close behind another process's buffered commits;
            // the clean-close record must not name bytes that were never fsynced.
            let unsynced = w.log.as_ref().is_some_and(|l| self.unsynced_before(l));
            if result.is_ok() && (self.options.durability == Durability::Buffered || unsynced) {
                result = self.sync_active(&mut w);
            }
            // The clean-close hint names the file's length: the zeros written ahead go first.
            if result.is_ok() {
                result = cut_zeros_ahead(w.log()).and_then(|cut| {
                    if cut {
                        let seg = &w.log().seg;
                        seg.file().sync_data().map_err(|e| Error::io("fsync", &seg.path, e))?;
                        self.counters.fsync();
                    }
                    Ok(())
                });
            }
            if result.is_ok() {
                result = self.record_clean_close(&mut w);
            }
            // Shared: still under the commit lock taken above, so no process appends while the
            // hint is written; one that appends later makes the segment longer than the hint
            // names, and the next open then scans instead of using it.
            if result.is_ok() {
                self.write_active_hint(&mut w);
            }
        }
        w.log = None;
        w.synced = None;
        let seq = self.current.load().seq;
        self.current.store(Arc::new(Version::new(KeyMap::new(), 0, seq, Arc::new(Vec::new()))));
        w.lock = None;
        if let Some(sh) = &self.shared {
            sh.release();
        }
        result
    }

    /// Every byte of the active segment is durable now: record that durably, so recovery
    /// reads any later damage to the last commits as corruption, never as a torn tail.
    fn record_clean_close(&self, w: &mut Writer) -> Result<()> {
        let log = w.log();
        let (number, len) = (log.seg.number, log.len);
        Self::note_synced(w, number, len);
        if w.log().synced_len != len {
            // The record could not be written: the store is still whole, only less protected.
            return Ok(());
        }
        if let Some(f) = &w.synced {
            f.sync().map_err(|e| Error::io("fsync", &f.path, e))?;
        }
        self.counters.fsync();
        Ok(())
    }

    /// After a clean close: the active segment's hint, so the next open reads it instead of
    /// scanning the segment. Best effort: without it the next open scans, as after a crash.
    /// Only when the synced record names every byte, the condition under which open uses it.
    fn write_active_hint(&self, w: &mut Writer) {
        let first_seq = w.manifest.segments.last().map_or(u64::MAX, |s| s.first_seq);
        let log = w.log();
        if log.synced_len != log.len || log.len <= SEG_HEADER as u64 {
            return;
        }
        let cur = self.current.load();
        // Nothing applied since open read the segment's hint: that hint still describes it
        // (and rewriting it would build the key directory only to write the same bytes).
        if cur.keys.loaded_from_hints() {
            return;
        }
        let tail = crate::log::hint_rec::ActiveTail {
            last_seq: (cur.seq >= first_seq).then_some(cur.seq),
            // A frame exists; whether the last is a commit or a marker is not tracked. Saying
            // "commit" costs at most one spare marker before the next buffered commit (a marker
            // naming the last commit is valid after a marker or a header too); saying "marker"
            // wrongly would weaken damage detection.
            ends_with_commit: true,
        };
        // Best effort: a key directory that cannot be read (a damaged page whose segment does
        // not scan) leaves the next open to scan. Streamed, as a seal writes its hint.
        let pins = crate::keydir::page_cache::Pins::default();
        let _ = crate::log::hint::write_streamed(
            &*self.vfs,
            &self.dir,
            (log.seg.number, log.len),
            &mut || log.recs.records(&cur.keys, &pins, log.seg.number),
            Some(tail),
            None,
            log.seg.crypt(),
        );
    }

    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }
}

impl Drop for Store {
    fn drop(&mut self) {
        let _ = self.close();
    }
}

const PANICKED: &str = "a panic interrupted a commit; the in-memory state may be half-updated";

/// Counters that make work visible to tests and operators.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stats {
    pub commits: u64,
    pub fsyncs: u64,
    /// Values read from disk ("documents read"); metadata reads do not count.
    pub values_read: u64,
    pub bytes_written: u64,
    pub live_bytes: u64,
    pub dead_bytes: u64,
    pub files: u64,
    pub keys: u64,
    pub open_snapshots: u64,
    pub compactions: u64,
    /// The last commit published (durable, visible to reads).
    pub seq: u64,
    /// True after a failed write or fsync: writes are refused until reopen. A layer above that
    /// refuses calls after failures of its own reports those here too.
    pub poisoned: bool,
}

/// What a full integrity check found (problems are returned as `Error::Corruption`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VerifyReport {
    pub files: u64,
    pub records: u64,
    pub keys: u64,
}
