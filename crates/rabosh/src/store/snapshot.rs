//! Read views: an `Arc` of one published version. Readers take no lock and never wait.

use crate::error::{Error, Result};
use crate::keydir::map::Version;
use crate::log::record::Key;
use crate::store::writer::Counters;
use std::ops::Bound;
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// A consistent read view at one sequence number. Cheap to clone; pins what it can see
/// (the key directory version and the segment files its values live in).
pub struct Snapshot {
    v: Arc<Version>,
    counters: Arc<Counters>,
}

impl Snapshot {
    pub(crate) fn new(v: Arc<Version>, counters: Arc<Counters>) -> Snapshot {
        counters.open_snapshots.fetch_add(1, Ordering::Relaxed);
        Snapshot { v, counters }
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

    /// Point reads ([`Snapshot::get`], [`Snapshot::meta`], [`Snapshot::contains`]) never wait
    /// for the key directory; everything else needs it built, and waits while another thread
    /// builds it. False only for a while after an open that left it to build (FORMAT.md, "Hint
    /// file"): a caller that must not wait may decline then.
    #[must_use]
    pub fn is_built(&self) -> bool {
        self.v.keys.is_built()
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

    /// [`Snapshot::len`], or Corruption when the key directory cannot be built (a sealed hint's
    /// page and the segment it summarises both damaged).
    pub fn try_len(&self) -> Result<usize> {
        Ok(self.v.map()?.len())
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

    /// [`Snapshot::range`], or Corruption when the key directory cannot be built (a sealed
    /// hint's page and the segment it summarises both damaged).
    pub fn try_range<'a>(
        &'a self,
        from: &[u8],
        to: Option<&[u8]>,
    ) -> Result<impl DoubleEndedIterator<Item = (&'a [u8], &'a [u8])> + use<'a>> {
        let map = self.v.map()?;
        let lower: Key = from.into();
        let upper = to.map(Key::from);
        let empty = upper.as_ref().is_some_and(|u| *u <= lower);
        let bounds = if empty {
            (Bound::Excluded(lower.clone()), Bound::Excluded(lower))
        } else {
            (Bound::Included(lower), upper.map_or(Bound::Unbounded, Bound::Excluded))
        };
        let it = if empty { None } else { Some(map.range(bounds)) };
        Ok(it.into_iter().flatten().map(|(k, e)| (&k[..], e.meta.as_slice())))
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
