//! Read views: an `Arc` of one published version. Readers take no lock and never wait.

use crate::error::{Error, Result};
use crate::keydir::map::Version;
use crate::keydir::page_cache::Pins;
use crate::store::writer::Counters;
use std::ops::Bound;
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// A consistent read view at one sequence number. Cheap to clone; pins what it can see
/// (the key directory version and the segment files its values live in).
pub struct Snapshot {
    v: Arc<Version>,
    counters: Arc<Counters>,
    /// The hint pages this view's ranges borrow from, held until it drops (the process's page
    /// cache may let them go meanwhile). [`Snapshot::try_visit`] holds none past its call.
    pins: Pins,
}

impl Snapshot {
    pub(crate) fn new(v: Arc<Version>, counters: Arc<Counters>) -> Snapshot {
        counters.open_snapshots.fetch_add(1, Ordering::Relaxed);
        Snapshot { v, counters, pins: Pins::default() }
    }
}

impl Clone for Snapshot {
    fn clone(&self) -> Self {
        Snapshot::new(self.v.clone(), self.counters.clone())
    }
}

impl Drop for Snapshot {
    fn drop(&mut self) {
        self.counters.open_snapshots.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Snapshot {
    /// The sequence number of the last commit this view sees.
    #[must_use]
    pub fn seq(&self) -> u64 {
        self.v.seq
    }

    /// The value at `key` (reads it from disk, checks its checksum, counts one value read).
    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        let Some(e) = self.v.keys.get(key)? else { return Ok(None) };
        let seg = self.v.segment(e.seg).ok_or_else(|| Error::Corruption {
            file: crate::log::segment::seg_name(e.seg).into(),
            offset: e.off,
            reason: "entry points into a segment this view does not hold".into(),
        })?;
        let value = seg.read_value(&e)?;
        self.counters.values_read.fetch_add(1, Ordering::Relaxed);
        Ok(Some(value))
    }

    /// The metadata at `key`, from memory. An error only when an encrypted store's hint page
    /// and the segment it summarises are both damaged (Corruption).
    pub fn meta(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        Ok(self.v.keys.get(key)?.map(|e| e.meta.as_slice().to_vec()))
    }

    pub fn contains(&self, key: &[u8]) -> Result<bool> {
        Ok(self.v.keys.get(key)?.is_some())
    }

    /// Whether every live key sits in one map: false after an open that found a hint for every
    /// segment (FORMAT.md, "Hint file"), which then answers every read, ordered ones too, from
    /// those hints and what was committed since, never building the map.
    #[must_use]
    pub fn is_built(&self) -> bool {
        self.v.keys.is_built()
    }

    /// How many keys the key directory's delta (what was committed over the hints) holds;
    /// `None` for a built map. For tests of the memory a long-running writer keeps.
    #[doc(hidden)]
    #[must_use]
    pub fn delta_len(&self) -> Option<usize> {
        self.v.keys.delta_len()
    }

    /// How many live keys this view holds. Panics where [`Snapshot::try_len`] fails; code
    /// that serves callers uses that.
    #[must_use]
    pub fn len(&self) -> usize {
        self.try_len().unwrap_or_else(|e| panic!("{e}"))
    }

    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// [`Snapshot::len`], or Corruption when the hints cannot be counted (a sealed hint's page
    /// and the segment it summarises both damaged).
    pub fn try_len(&self) -> Result<usize> {
        Ok(self.v.keys.totals()?.0 as usize)
    }

    /// Entries with `from <= key < to` (`to = None`: to the end), in key order, metadata only;
    /// `.rev()` walks them from the top (history pages newest first from a cursor). Panics
    /// where [`Snapshot::try_range`] fails; code that serves callers uses that.
    #[must_use]
    pub fn range<'a>(
        &'a self,
        from: &[u8],
        to: Option<&[u8]>,
    ) -> impl DoubleEndedIterator<Item = (&'a [u8], &'a [u8])> + use<'a> {
        self.try_range(from, to).unwrap_or_else(|e| panic!("{e}"))
    }

    /// [`Snapshot::range`], or Corruption when a hint page the range reaches and the segment it
    /// summarises are both damaged.
    pub fn try_range<'a>(
        &'a self,
        from: &[u8],
        to: Option<&[u8]>,
    ) -> Result<impl DoubleEndedIterator<Item = (&'a [u8], &'a [u8])> + use<'a>> {
        let upper = to.map_or(Bound::Unbounded, Bound::Excluded);
        let merge = self.v.keys.range(&self.pins, Bound::Included(from), upper)?;
        Ok(merge.map(|(k, v)| (k, v.meta().unwrap_or_default())))
    }

    /// Entries with `from <= key < to` (`to = None`: to the end), metadata only, handed to
    /// `visit` in key order (`forward`) or from the top until it breaks. Unlike
    /// [`Snapshot::try_range`], whose items borrow the view (so every hint page the range
    /// reaches stays held while the view lives), this holds a few pages at a time: a scan of a
    /// large store keeps the page cache's budget, not every page it passed. Corruption as for
    /// [`Snapshot::try_range`].
    pub fn try_visit(&self, from: &[u8], to: Option<&[u8]>, forward: bool, visit: &mut Visit<'_>) -> Result<()> {
        let upper = to.map_or(Bound::Unbounded, Bound::Excluded);
        self.v.keys.visit(Bound::Included(from), upper, forward, &mut |k, v| visit(k, v.meta().unwrap_or_default()))
    }

    /// Entries whose key starts with `prefix`, in key order, metadata only. Panics where
    /// [`Snapshot::try_scan_prefix`] fails.
    pub fn scan_prefix<'a>(&'a self, prefix: &[u8]) -> impl Iterator<Item = (&'a [u8], &'a [u8])> + use<'a> {
        self.try_scan_prefix(prefix).unwrap_or_else(|e| panic!("{e}"))
    }

    /// [`Snapshot::scan_prefix`], or Corruption when the key directory cannot be built.
    pub fn try_scan_prefix<'a>(
        &'a self,
        prefix: &[u8],
    ) -> Result<impl DoubleEndedIterator<Item = (&'a [u8], &'a [u8])> + use<'a>> {
        let end = prefix_successor(prefix);
        self.try_range(prefix, end.as_deref())
    }
}

/// What [`Snapshot::try_visit`] hands each entry to: its key and metadata; `Break` stops.
pub type Visit<'v> = dyn FnMut(&[u8], &[u8]) -> std::ops::ControlFlow<()> + 'v;

/// The smallest key greater than every key that starts with `prefix` (None: no such key).
#[must_use]
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
