//! rabosh: an embedded, crash-safe MVCC key/value store.
//!
//! INTERIM: this file fixes the public API with a naive in-memory implementation so the layers
//! above can be built against it; the log-structured engine replaces the internals.

mod error;

pub use error::{Error, LockHolder, Result};

use std::collections::BTreeMap;
use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// Bytes of fixed metadata each entry carries in memory (listings never read values).
pub const META_LEN: usize = 40;
/// The fixed metadata record of an entry; its meaning belongs to the layer above.
pub type Meta = [u8; META_LEN];

/// When a commit is durable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Durability {
    /// Every commit is fdatasync'd before `write` returns.
    #[default]
    Sync,
    /// Commits reach the OS page cache only; call [`Store::sync`] to make them durable.
    Buffered,
}

/// How to open a store.
#[derive(Debug, Clone)]
pub struct Options {
    pub durability: Durability,
    /// Roll the active log over to a new segment past this many bytes.
    pub segment_bytes: u64,
    /// Refuse to open when the log has a torn tail instead of dropping it.
    pub strict: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options { durability: Durability::Sync, segment_bytes: 64 << 20, strict: false }
    }
}

/// One operation of a batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    Put { key: Vec<u8>, value: Vec<u8>, meta: Meta },
    Delete { key: Vec<u8> },
}

/// An atomic group of puts and deletes: one commit, all or nothing.
#[derive(Debug, Clone, Default)]
pub struct Batch {
    ops: Vec<Op>,
}

impl Batch {
    pub fn new() -> Self {
        Batch::default()
    }
    pub fn put(&mut self, key: impl Into<Vec<u8>>, value: impl Into<Vec<u8>>, meta: Meta) {
        self.ops.push(Op::Put { key: key.into(), value: value.into(), meta });
    }
    pub fn delete(&mut self, key: impl Into<Vec<u8>>) {
        self.ops.push(Op::Delete { key: key.into() });
    }
    pub fn len(&self) -> usize {
        self.ops.len()
    }
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }
    pub fn ops(&self) -> &[Op] {
        &self.ops
    }
}

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
    pub seq: u64,
}

/// What a checkpoint produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckpointInfo {
    /// The sequence number of the last commit the checkpoint holds.
    pub seq: u64,
    /// True when every data file was hard-linked rather than copied.
    pub hard_linked: bool,
}

/// What a compaction did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CompactInfo {
    pub bytes_before: u64,
    pub bytes_after: u64,
}

/// What a full integrity check found (problems are returned as `Error::Corruption`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VerifyReport {
    pub files: u64,
    pub records: u64,
    pub keys: u64,
}

type Map = BTreeMap<Vec<u8>, (Arc<Vec<u8>>, Meta)>;

#[derive(Default)]
struct Counters {
    commits: AtomicU64,
    values_read: AtomicU64,
    open_snapshots: AtomicU64,
}

struct State {
    map: Arc<Map>,
    seq: u64,
    closed: bool,
}

/// An open store. Share it between threads with `Arc<Store>`; one writer at a time inside.
pub struct Store {
    dir: PathBuf,
    state: Mutex<State>,
    counters: Arc<Counters>,
    options: Options,
}

impl Store {
    /// Create or open the store in `dir`.
    pub fn open(dir: impl AsRef<Path>, options: Options) -> Result<Store> {
        let dir = dir.as_ref().to_path_buf();
        std::fs::create_dir_all(&dir).map_err(|e| Error::io("create_dir_all", &dir, e))?;
        Ok(Store {
            dir,
            state: Mutex::new(State { map: Arc::new(Map::new()), seq: 0, closed: false }),
            counters: Arc::new(Counters::default()),
            options,
        })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn options(&self) -> &Options {
        &self.options
    }

    /// Apply a batch as one commit; returns its sequence number once durable (per durability).
    pub fn write(&self, batch: Batch) -> Result<u64> {
        let mut st = self.state.lock().unwrap();
        if st.closed {
            return Err(Error::Closed);
        }
        let mut map = (*st.map).clone();
        for op in batch.ops {
            match op {
                Op::Put { key, value, meta } => {
                    map.insert(key, (Arc::new(value), meta));
                }
                Op::Delete { key } => {
                    map.remove(&key);
                }
            }
        }
        st.seq += 1;
        st.map = Arc::new(map);
        self.counters.commits.fetch_add(1, Ordering::Relaxed);
        Ok(st.seq)
    }

    /// Make every commit so far durable (for `Durability::Buffered`).
    pub fn sync(&self) -> Result<()> {
        self.check_open()
    }

    /// A consistent read view that later commits do not change.
    pub fn snapshot(&self) -> Result<Snapshot> {
        let st = self.state.lock().unwrap();
        if st.closed {
            return Err(Error::Closed);
        }
        self.counters.open_snapshots.fetch_add(1, Ordering::Relaxed);
        Ok(Snapshot { map: st.map.clone(), seq: st.seq, counters: self.counters.clone() })
    }

    /// Reclaim space held by overwritten and deleted data.
    pub fn compact(&self) -> Result<CompactInfo> {
        self.check_open()?;
        Ok(CompactInfo::default())
    }

    /// Write a durable, openable copy of the current state into `target` (empty or absent).
    pub fn checkpoint(&self, target: impl AsRef<Path>) -> Result<CheckpointInfo> {
        let _ = target;
        Err(Error::InvalidArgument("checkpoint not implemented in the interim engine".into()))
    }

    /// Read every record and check every checksum.
    pub fn verify(&self) -> Result<VerifyReport> {
        let st = self.state.lock().unwrap();
        Ok(VerifyReport { files: 0, records: st.seq, keys: st.map.len() as u64 })
    }

    pub fn stats(&self) -> Stats {
        let st = self.state.lock().unwrap();
        Stats {
            commits: self.counters.commits.load(Ordering::Relaxed),
            values_read: self.counters.values_read.load(Ordering::Relaxed),
            open_snapshots: self.counters.open_snapshots.load(Ordering::Relaxed),
            keys: st.map.len() as u64,
            seq: st.seq,
            ..Stats::default()
        }
    }

    /// Close the store: release the lock and every file handle. Idempotent.
    pub fn close(&self) -> Result<()> {
        self.state.lock().unwrap().closed = true;
        Ok(())
    }

    pub fn is_closed(&self) -> bool {
        self.state.lock().unwrap().closed
    }

    fn check_open(&self) -> Result<()> {
        if self.state.lock().unwrap().closed { Err(Error::Closed) } else { Ok(()) }
    }
}

/// A consistent read view at one sequence number. Cheap to clone; pins what it can see.
pub struct Snapshot {
    map: Arc<Map>,
    seq: u64,
    counters: Arc<Counters>,
}

impl Clone for Snapshot {
    fn clone(&self) -> Self {
        self.counters.open_snapshots.fetch_add(1, Ordering::Relaxed);
        Snapshot { map: self.map.clone(), seq: self.seq, counters: self.counters.clone() }
    }
}

impl Drop for Snapshot {
    fn drop(&mut self) {
        self.counters.open_snapshots.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Snapshot {
    /// The sequence number of the last commit this view sees.
    pub fn seq(&self) -> u64 {
        self.seq
    }

    /// The value at `key` (reads it from disk and counts one value read).
    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        Ok(self.map.get(key).map(|(v, _)| {
            self.counters.values_read.fetch_add(1, Ordering::Relaxed);
            v.as_ref().clone()
        }))
    }

    /// The metadata at `key`, from memory.
    pub fn meta(&self, key: &[u8]) -> Option<Meta> {
        self.map.get(key).map(|(_, m)| *m)
    }

    pub fn contains(&self, key: &[u8]) -> bool {
        self.map.contains_key(key)
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Entries with `from <= key < to` (`to = None`: to the end), in key order, metadata only.
    pub fn range<'a>(
        &'a self,
        from: &[u8],
        to: Option<&[u8]>,
    ) -> impl Iterator<Item = (&'a [u8], &'a Meta)> + use<'a> {
        let upper = match to {
            Some(t) => Bound::Excluded(t.to_vec()),
            None => Bound::Unbounded,
        };
        self.map
            .range((Bound::Included(from.to_vec()), upper))
            .map(|(k, (_, m))| (k.as_slice(), m))
    }

    /// Entries whose key starts with `prefix`, in key order, metadata only.
    pub fn scan_prefix<'a>(&'a self, prefix: &[u8]) -> impl Iterator<Item = (&'a [u8], &'a Meta)> + use<'a> {
        let end = prefix_successor(prefix);
        self.range(prefix, end.as_deref())
    }
}

/// The smallest key greater than every key that starts with `prefix` (None: no such key).
pub fn prefix_successor(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xff {
            end.push(last + 1);
            return Some(end);
        }
    }
    None
}
