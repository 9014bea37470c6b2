//! What only the writer touches: the MANIFEST as written, the active log, the directory lock and
//! the synced record; the store's counters; and how a new segment file is created.

use crate::crypto::crypt::Crypt;
use crate::error::{Error, Result};
use crate::io::lock::DirLock;
use crate::io::vfs::{OpenMode, VFile, Vfs, write_all_at};
use crate::keydir::map::{ActiveRecs, Version};
use crate::log::format::{FORMAT_VERSION, KIND_LOG, SEG_HEADER, encode_seg_header};
use crate::log::manifest::Manifest;
use crate::log::segment::{Segment, seg_name};
use crate::log::synced::SyncedFile;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub commits: AtomicU64,
    pub fsyncs: AtomicU64,
    pub values_read: AtomicU64,
    pub bytes_written: AtomicU64,
    pub open_snapshots: AtomicU64,
    pub compactions: AtomicU64,
    /// Bytes of every listed segment file.
    pub disk_bytes: AtomicU64,
}

impl Counters {
    pub fn fsync(&self) {
        self.fsyncs.fetch_add(1, Ordering::Relaxed);
    }
}

/// Everything only the writer touches.
pub(crate) struct Writer {
    pub manifest: Manifest,
    /// The log being appended to; `None` once closed. Replaced whole on rotation.
    pub log: Option<ActiveLog>,
    pub lock: Option<DirLock>,
    /// Where the durable length of the active segment is recorded (FORMAT.md, `SYNCED`);
    /// `None` once closed (close releases every file handle).
    pub synced: Option<SyncedFile>,
}

/// The active segment and what the writer knows about it. One value, so rotation and close
/// replace it as a whole and no field can be left over from the previous segment.
pub(crate) struct ActiveLog {
    pub seg: Arc<Segment>,
    pub len: u64,
    /// What the segment's hint needs beyond the key directory, kept as commits land.
    pub recs: ActiveRecs,
    /// Format version of the segment's header: frames are written only into a segment of the
    /// current version (an older one is sealed first), so each file has one layout.
    pub version: u32,
    /// Buffered commits written since the segment was last fsynced: the next sync or close
    /// appends a synced marker behind them.
    pub unsynced: bool,
    /// The segment ends with a durable commit and no marker (as open found it): the first
    /// buffered commit is preceded by a marker, so damage to that commit stays detectable.
    pub mark_first: bool,
    /// Sync mode: commits appended but not yet fsynced, as the version they build. Published
    /// only once durable (by a `wait_durable` leader or by `settle`), so readers never see them.
    pub tail: Option<Arc<Version>>,
    /// The length last written to the synced record (bytes known durable).
    pub synced_len: u64,
    /// The file's length as last seen: bytes from `len` up to it are zeros written ahead
    /// (FORMAT.md, "Zeros ahead"), so a commit's fdatasync need not journal a new file size.
    pub alloc: u64,
}

impl ActiveLog {
    /// A freshly created segment: only its (durable) header.
    pub fn fresh(seg: Arc<Segment>) -> ActiveLog {
        ActiveLog {
            seg,
            len: SEG_HEADER as u64,
            recs: ActiveRecs::new(),
            version: FORMAT_VERSION,
            unsynced: false,
            mark_first: false,
            tail: None,
            synced_len: 0,
            alloc: SEG_HEADER as u64,
        }
    }
}

impl Writer {
    /// The active log of a store known open (checked by `writable`).
    pub fn log(&mut self) -> &mut ActiveLog {
        self.log.as_mut().expect("an open store has an active log")
    }
}

/// Creates a segment the MANIFEST does not list yet. Called with the writer held (and, shared,
/// the commit lock, after catching up), so a file already there under that number is a dead
/// process's leftover — created before its MANIFEST swap, never read by anyone — and goes.
pub(crate) fn create_unlisted(vfs: &dyn Vfs, path: &Path) -> Result<Arc<dyn VFile>> {
    match vfs.open(path, OpenMode::CreateNew) {
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            vfs.remove(path).map_err(|e| Error::io("remove", path, e))?;
            vfs.open(path, OpenMode::CreateNew)
        }
        other => other,
    }
    .map_err(|e| Error::io("create", path, e))
}

/// A new, empty log segment whose header is durable. Its name becomes durable with the next
/// MANIFEST write (which fsyncs the directory) — and nothing relies on it before that.
pub(crate) fn create_log_segment(
    vfs: &Arc<dyn Vfs>,
    dir: &Path,
    number: u64,
    first_seq: u64,
    fsyncs: &dyn Fn(),
    crypt: Option<Arc<Crypt>>,
) -> Result<Arc<Segment>> {
    let path = dir.join(seg_name(number));
    let f = create_unlisted(&**vfs, &path)?;
    write_all_at(&*f, &encode_seg_header(KIND_LOG, number, first_seq, crypt.is_some()), 0)
        .map_err(|e| Error::io("write", &path, e))?;
    f.sync_data().map_err(|e| Error::io("fsync", &path, e))?;
    fsyncs();
    Ok(Arc::new(Segment::new(number, FORMAT_VERSION, dir, f, vfs.clone(), crypt)))
}
