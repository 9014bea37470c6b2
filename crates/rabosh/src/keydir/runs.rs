//! The key directory as open leaves it: every segment's hint, kept as read and indexed in place,
//! answers a point read by binary search, newest segment first, and a range from each run's
//! binary-searched sub-range ([`crate::keydir::merge`]). Open then costs the hints' bytes, not
//! one ordered-map insert and one key allocation per key (docs/investigations/open-profile.md).

use crate::error::Result;
use crate::io::os::FileBytes;
use crate::keydir::merge::{Source, Val};
use crate::keydir::page_cache::Pins;
use crate::keydir::paged_run::PagedRun;
use crate::log::format::Reader;
use crate::log::hint_rec::{RawRec, read_rec};
use crate::log::record::{Entry, Key};
use std::ops::Bound;

/// One segment's hint, checked whole at open ([`crate::log::hint::index`]): records in strictly
/// ascending key order, each inside its segment; or an encrypted store's paged hint, whose
/// pages are opened (and checked) as reads reach them ([`PagedRun`]).
pub(crate) enum Run {
    Whole(WholeRun),
    Paged(Box<PagedRun>),
}

pub(crate) struct WholeRun {
    pub number: u64,
    version: u32,
    buf: FileBytes,
    offs: Vec<u32>,
    /// The key of every [`FENCE`]th record, in the heap: a search narrows to one window of
    /// records with these, then reads the hint only there. A mapped hint's pages are let go
    /// after open's check, and each page a read touches is mapped back with its neighbours (the
    /// kernel's fault-around): a binary search over the whole run touched about log₂(n) far
    /// apart places, and the run's resident memory grew by a few hundred KiB a read.
    fences: Vec<Box<[u8]>>,
}

/// Records per fence: a window of them is a few pages of hint.
const FENCE: usize = 64;

impl Run {
    /// A checked hint's run. Its fences are read now, while open's check has the hint's pages
    /// in place; then a mapped hint's pages go ([`FileBytes::release_pages`]).
    pub fn new(number: u64, version: u32, buf: FileBytes, offs: Vec<u32>) -> Run {
        let mut w = WholeRun { number, version, buf, offs, fences: Vec::new() };
        w.fences = (0..w.offs.len()).step_by(FENCE).map(|i| Box::from(w.key(i))).collect();
        w.buf.release_pages();
        Run::Whole(w)
    }

    /// This segment's last operation on `key`: `Some(None)` a delete, `None` no record.
    #[allow(clippy::option_option)] // `Some(None)` is a delete, as the line above says
    pub fn get(&self, key: &[u8]) -> Result<Option<Option<Entry>>> {
        match self {
            Run::Whole(w) => Ok(w.get(key)),
            Run::Paged(p) => p.get(key),
        }
    }

    /// Every record, decoded (one key allocation each), in key order; each parsed once (the
    /// map build's path: no per-record page lookup).
    pub fn records(&self) -> Result<Vec<(Key, Option<Entry>)>> {
        let mut out = Vec::with_capacity(self.len());
        self.records_into(&mut out)?;
        Ok(out)
    }

    /// [`Run::records`] appended to `out`: the build gathers every run's into one vector
    /// without a copy of each run's.
    fn records_into(&self, out: &mut Vec<(Key, Option<Entry>)>) -> Result<()> {
        match self {
            Run::Whole(w) => {
                out.extend((0..w.offs.len()).map(|i| w.rec(i)).map(|r| (Key::from(r.key), r.entry(w.number))));
            }
            Run::Paged(p) => p.records_into(out)?,
        }
        Ok(())
    }

    /// The segment this run summarises.
    pub fn number(&self) -> u64 {
        match self {
            Run::Whole(w) => w.number,
            Run::Paged(p) => p.number(),
        }
    }

    /// This run's records inside the bounds, in key order from either end: binary-searched in a
    /// whole hint; in a paged one, only the pages the bounds reach are opened (held by `pins`).
    pub fn source<'a>(&'a self, pins: &'a Pins, lower: Bound<&[u8]>, upper: Bound<&[u8]>) -> Result<Source<'a>> {
        match self {
            Run::Whole(w) => {
                let lo = match lower {
                    Bound::Unbounded => 0,
                    Bound::Included(k) => w.lower_bound(k, false),
                    Bound::Excluded(k) => w.lower_bound(k, true),
                };
                let hi = match upper {
                    Bound::Unbounded => w.offs.len(),
                    Bound::Included(k) => w.lower_bound(k, true),
                    Bound::Excluded(k) => w.lower_bound(k, false),
                };
                let hi = hi.max(lo);
                Ok(Box::new((lo..hi).map(move |i| {
                    let r = w.rec(i);
                    (r.key, Val::raw(&r, w.number))
                })))
            }
            Run::Paged(p) => p.source(pins, lower, upper),
        }
    }

    /// A paged run's mapped pages out of resident memory if reads opened any since they went
    /// ([`PagedRun::release_read`]).
    pub fn release_read(&self) {
        if let Run::Paged(p) = self {
            p.release_read();
        }
    }

    /// Where a walk in windows cuts for this run ([`PagedRun::cut`]); a whole run borrows from
    /// its own hint and needs no cut.
    pub fn cut(&self, from: Bound<&[u8]>, to: Bound<&[u8]>, forward: bool, n: usize) -> Option<&[u8]> {
        match self {
            Run::Whole(_) => None,
            Run::Paged(p) => p.cut(from, to, forward, n),
        }
    }

    /// A whole hint's records, in key order (borrowed from the hint); `None` for a paged run.
    pub fn whole_recs(&self) -> Option<Vec<RawRec<'_>>> {
        match self {
            Run::Whole(w) => Some((0..w.offs.len()).map(|i| w.rec(i)).collect()),
            Run::Paged(_) => None,
        }
    }

    /// A mapped whole hint's pages out of resident memory (a full walk mapped them back).
    pub fn release_pages(&self) {
        if let Run::Whole(w) = self {
            w.buf.release_pages();
        }
    }

    /// How many records it holds (as its hint says).
    fn len(&self) -> usize {
        match self {
            Run::Whole(w) => w.offs.len(),
            Run::Paged(p) => p.len(),
        }
    }
}

impl WholeRun {
    fn rec(&self, i: usize) -> RawRec<'_> {
        let mut r = Reader { buf: &self.buf, pos: self.offs[i] as usize };
        read_rec(&mut r, self.version).expect("a run's records were checked when it was indexed")
    }

    fn key(&self, i: usize) -> &[u8] {
        // seq (8), tag (1), key length (4), key.
        let at = self.offs[i] as usize + 9;
        let klen = u32::from_le_bytes(self.buf[at..at + 4].try_into().unwrap()) as usize;
        &self.buf[at + 4..at + 4 + klen]
    }

    #[allow(clippy::option_option)] // `Some(None)` is a delete, as [`Run::get`] says
    fn get(&self, key: &[u8]) -> Option<Option<Entry>> {
        let i = self.search(key).ok()?;
        Some(self.rec(i).entry(self.number))
    }

    fn search(&self, key: &[u8]) -> std::result::Result<usize, usize> {
        let i = self.lower_bound(key, false);
        if i < self.offs.len() && self.key(i) == key { Ok(i) } else { Err(i) }
    }

    /// The first record whose key is not below `key` (`strict`: not at or below it). The
    /// fences bound it first: the first fence not below `key` from above, the one before it
    /// from below; then a binary search inside that window of at most [`FENCE`] records.
    fn lower_bound(&self, key: &[u8], strict: bool) -> usize {
        let below = |k: &[u8]| k < key || (strict && k == key);
        let f = self.fences.partition_point(|k| below(k));
        let (mut lo, mut hi) = (f.saturating_sub(1) * FENCE, (f * FENCE).min(self.offs.len()));
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if below(self.key(mid)) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }
}

/// Every segment's run, in segment order (seq order: a later segment's records are newer).
/// Each run is shared: a seal publishes the runs it stood on plus its own.
pub(crate) struct Runs(pub Vec<std::sync::Arc<Run>>);

impl Runs {
    /// The newest record of `key`: a later segment's delete hides an earlier one's put.
    pub fn get(&self, key: &[u8]) -> Result<Option<Entry>> {
        for run in self.0.iter().rev() {
            if let Some(e) = run.get(key)? {
                return Ok(e);
            }
        }
        Ok(None)
    }
}
