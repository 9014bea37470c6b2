//! The reports the facade hands to its callers unchanged, generated into `binding.d.cts` under
//! their public names (the facade re-exports them; `index.ts`): each is defined here once, with
//! the documentation a host reads. Counts and sizes cross as JS numbers, exact up to 2^53, far
//! beyond any store this serves.

use napi_derive::napi;

/// `From<$from> for $to` where every field of `$to` is the count of the same name in `$from`,
/// crossing as a JS number: one conversion for every report of counts below.
macro_rules! counts_from {
    ($from:path => $to:ident { $($field:ident),+ $(,)? }) => {
        impl From<$from> for $to {
            fn from(c: $from) -> Self {
                $to { $($field: c.$field as f64),+ }
            }
        }
    };
}

/// Counters that make the store's work visible, read from memory without touching the disk.
/// The `commits` … `compactions` counters count work done through this open handle (they start at
/// zero on every open); the byte, file and key figures describe the store as it is now.
#[napi(object)]
pub struct StoreCounters {
    /// Non-empty commits acknowledged since open (one per successful write command or import).
    pub commits: f64,
    /// fsync/fdatasync calls made since open: one per commit under `'sync'`, one per
    /// `db.sync()`, plus those sealing segments and replacing the MANIFEST and hint files.
    pub fsyncs: f64,
    /// Values read from disk ("documents read") since open; metadata reads do not count.
    pub values_read: f64,
    /// Bytes of commit records appended to the log since open (compaction output not included).
    pub bytes_written: f64,
    /// On-disk bytes of the current version of every live key (value, key and record overhead).
    pub live_bytes: f64,
    /// On-disk bytes of the segment files not held by live data (overwritten and deleted records,
    /// framing); what `db.compact()` can reclaim, at most.
    pub dead_bytes: f64,
    /// Data files the store consists of: log segments plus the hint file of each sealed one.
    pub files: f64,
    /// Live keys in the store, every scope together (one per memory).
    pub keys: f64,
    /// Snapshots currently pinned and not yet released, including any a command holds while it runs.
    pub open_snapshots: f64,
    /// Compactions completed since open.
    pub compactions: f64,
    /// Sequence number of the last commit (persisted: it does not restart at zero on open).
    pub seq: f64,
}

counts_from!(rabosh_memory::Stats => StoreCounters {
    commits, fsyncs, values_read, bytes_written, live_bytes, dead_bytes, files, keys, open_snapshots, compactions, seq,
});

/// What `db.checkpoint(dir)` wrote.
#[napi(object)]
pub struct CheckpointInfo {
    /// The sequence number of the last commit the checkpoint holds.
    pub seq: f64,
    /// Every data file was hard-linked rather than copied.
    pub hard_linked: bool,
}

impl From<rabosh_memory::CheckpointInfo> for CheckpointInfo {
    fn from(c: rabosh_memory::CheckpointInfo) -> Self {
        CheckpointInfo { seq: c.seq as f64, hard_linked: c.hard_linked }
    }
}

/// What `db.compact()` did, in on-disk bytes of the segment files.
#[napi(object)]
pub struct CompactInfo {
    /// Segment bytes before compaction.
    pub bytes_before: f64,
    /// Segment bytes after compaction. Space a pinned snapshot still reads is only freed when the
    /// snapshot is released, so the disk may hold more than this until then.
    pub bytes_after: f64,
}

counts_from!(rabosh_memory::CompactInfo => CompactInfo { bytes_before, bytes_after });

/// What a successful `db.verify()` checked; any problem rejects instead.
#[napi(object)]
pub struct VerifyReport {
    /// Segment files scanned.
    pub files: f64,
    /// Commit records read and checksummed across those files.
    pub records: f64,
    /// Live keys whose current value was read back and checksummed.
    pub keys: f64,
}

counts_from!(rabosh_memory::VerifyReport => VerifyReport { files, records, keys });

/// How many memories a scope holds and their total content.
#[napi(object)]
pub struct ScopeUsage {
    /// Memories stored in the scope, including hidden ones a directory view leaves out.
    pub memories: f64,
    /// Total content of those memories in UTF-8 bytes (keys and metadata not counted).
    pub bytes: f64,
}

counts_from!(rabosh_memory::Usage => ScopeUsage { memories, bytes });

/// The history's own size, apart from `usage()`.
#[napi(object)]
pub struct HistoryUsage {
    /// Versions kept, redacted ones included.
    pub versions: f64,
    /// Content bytes the versions hold.
    pub bytes: f64,
}

counts_from!(rabosh_memory::HistoryUsage => HistoryUsage { versions, bytes });
