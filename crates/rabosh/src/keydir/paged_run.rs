//! One segment's paged hint (sealed or checksummed) as a run ([`crate::keydir::runs`]): a point read opens only the page
//! its key falls in (kept while the process's page cache has room, [`crate::keydir::page_cache`]). A page that does not open or parse is damage found late: the
//! hint is derived data, so the run then answers from a scan of its segment, exactly as open
//! would have built it, and only a segment that does not scan either is an error (Corruption).

use crate::crypto::crypt::Crypt;
use crate::error::{Error, Result};
use crate::io::vfs::{VFile, Vfs};
use crate::keydir::merge::{Source, Val, index_range, within};
use crate::keydir::page_cache::{self, Pins};
use crate::log::hint_pages::{Page, Pages, page_rec};
use crate::log::hint_rec::ActiveTail;
use crate::log::record::{Entry, Key};
use crate::log::segment::{ScanMode, scan};
use std::ops::Bound;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

/// Bytes of a mapped hint read between two releases of its pages: a release costs a walk of
/// the mapping's page tables (tens of microseconds for a 16 MB hint, most of it not in place).
const RELEASE_EVERY: usize = 1 << 20;

/// What a scan of the run's segment needs, captured at open: the file, and how open would have
/// scanned it (up to the length open found, which a later append does not move).
pub(crate) struct Rescan {
    pub file: Arc<dyn VFile>,
    pub path: PathBuf,
    /// Segment number, header version, kind.
    pub id: (u64, u32, u8),
    pub next_seq: u64,
    pub len: u64,
    /// The active segment (scanned as open scans it) rather than a sealed one.
    pub active: bool,
    /// The seq its last commit must carry (`next_seq - 1` when it holds none); `None`: no check
    /// (a compacted segment).
    pub last_seq: Option<u64>,
    /// Where the hint is rewritten from the scan (best effort, as open does).
    pub vfs: Arc<dyn Vfs>,
    pub dir: PathBuf,
}

/// A segment's records in key order, from its scan, or why it did not scan.
type Rescanned = std::result::Result<Vec<(Key, Option<Entry>)>, String>;

pub(crate) struct PagedRun {
    /// The store's cipher; `None`: a plain store (pages checksummed).
    crypt: Option<Arc<Crypt>>,
    pages: Pages,
    /// This run's key in the page cache. Open builds nothing per page (a million keys make
    /// some 47,000 pages): an opened page lives in the cache, or in the pins of the read
    /// borrowing it.
    id: u64,
    /// Bytes of the hint file opened since its mapped pages were last let go.
    read_since_release: AtomicUsize,
    rescan: Rescan,
    /// Set once a page failed: the segment's records in key order, or why it did not scan.
    fallback: OnceLock<Rescanned>,
    /// The run's last key, from its last page (once opened): a key past it is in no page, so
    /// a read of a new key (an import's, in ascending order) costs no search of this run.
    last: OnceLock<Option<Key>>,
    /// Where the last point read that found nothing landed: (pages starting at or below its key)
    /// << 32 | (records of that page below it); 0: none yet. One slot a class of keys (by the
    /// first byte: the layer above keeps each kind of row under a prefix of its own), so reads
    /// in key order of a few interleaved kinds (an import's new keys, which fall in one gap of
    /// every run a kind) are answered from two neighbours, not a search of the run.
    near: [AtomicU64; NEAR_SLOTS],
}

const NEAR_SLOTS: usize = 4;

impl PagedRun {
    pub fn new(crypt: Option<Arc<Crypt>>, pages: Pages, rescan: Rescan) -> PagedRun {
        let id = page_cache::run_id();
        let read_since_release = AtomicUsize::new(0);
        let (fallback, last, near) = (OnceLock::new(), OnceLock::new(), Default::default());
        PagedRun { crypt, pages, id, read_since_release, rescan, fallback, last, near }
    }

    /// Page `i`'s first key.
    fn first(&self, i: usize) -> &[u8] {
        self.pages.first(i)
    }

    /// How many pages' first keys `below` holds for (they are in order: a prefix of them).
    fn pages_while(&self, below: impl Fn(&[u8]) -> bool) -> usize {
        let (mut lo, mut hi) = (0, self.pages.refs.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if below(self.first(mid)) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// The last key of the last page; `None` when that page does not open (reads then search).
    fn last_key(&self) -> Option<&[u8]> {
        let last = self.last.get_or_init(|| {
            let page = self.page(self.pages.refs.len().checked_sub(1)?)?;
            let j = page.offs.len().checked_sub(1)?;
            Some(Key::from(page_rec(&page, self.version(), j).key))
        });
        last.as_deref()
    }

    /// Page `i`, from the cache or opened (and checked) now. `None`: damage (not remembered:
    /// a read that finds it again falls back to the scan, which is kept).
    fn page(&self, i: usize) -> Option<Arc<Page>> {
        let at = u32::try_from(i).expect("a hint's page count fits its u32 field");
        if let Some(p) = page_cache::get(self.id, at) {
            return Some(p);
        }
        let p = Arc::new(self.pages.open(self.crypt.as_deref(), i)?);
        // A scan maps the hint back as it reads it (the kernel maps 64 KiB around each fault),
        // which the process then counts as resident although every page read is a copy by now:
        // a walk over a million keys' hints left 108 MB of them in place. Let them go every
        // few MB read.
        let read = self.read_since_release.fetch_add(self.pages.blob_len(i), Ordering::Relaxed);
        if read >= RELEASE_EVERY {
            self.read_since_release.store(0, Ordering::Relaxed);
            self.pages.release_pages();
        }
        Some(page_cache::insert(self.id, at, p))
    }

    fn scanned(&self) -> Result<&[(Key, Option<Entry>)]> {
        let r = self.fallback.get_or_init(|| self.scan().map_err(|e| e.to_string()));
        match r {
            Ok(v) => Ok(v),
            Err(why) => Err(Error::Corruption {
                file: self.rescan.path.clone(),
                offset: 0,
                reason: format!("its hint is damaged and the segment does not scan: {why}"),
            }),
        }
    }

    fn scan(&self) -> Result<Vec<(Key, Option<Entry>)>> {
        let s = &self.rescan;
        // Seen only up to the length open found: the scan reads exactly what open would have,
        // whatever was appended since.
        let f = crate::io::vfs::Bounded { inner: &*s.file, len: s.len };
        let mode = if s.active { ScanMode::Active { synced: s.len, trust_zeros: false } } else { ScanMode::Sealed };
        let sc = scan(&f, &s.path, s.id, s.next_seq, mode, self.crypt.as_deref())?;
        let found = sc.last_seq.unwrap_or(s.next_seq - 1);
        if sc.torn.is_some() || sc.valid_len != s.len || s.last_seq.is_some_and(|want| want != found) {
            return Err(Error::Corruption {
                file: s.path.clone(),
                offset: sc.valid_len,
                reason: format!("segment no longer holds what open found (ends at commit {found})"),
            });
        }
        // Best effort, as open does for a hint that does not open: the next open then has a
        // whole hint again. A write that fails or races another leaves a hint that fails its
        // checks, never one believed wrongly. (Not counted in the store's fsync counter.)
        let id = (s.id.0, s.len);
        let _ = if s.active {
            let tail = ActiveTail { last_seq: sc.last_seq, ends_with_commit: sc.ends_with_commit };
            crate::log::hint::write_active(&*s.vfs, &s.dir, id, &sc.recs, tail, self.crypt.as_deref())
        } else {
            crate::log::hint::write(&*s.vfs, &s.dir, id, &sc.recs, &|| {}, self.crypt.as_deref())
        };
        Ok(sc.recs.into_iter().map(|(k, r)| (k, r.entry)).collect())
    }

    /// This segment's last operation on `key`: `Some(None)` a delete, `None` no record.
    /// Pages still answer after the segment failed to scan (only the scan's records replace
    /// them): a key whose page opens is answered however damaged the rest is.
    #[allow(clippy::option_option)] // `Some(None)` is a delete, as the line above says
    pub fn get(&self, key: &[u8]) -> Result<Option<Option<Entry>>> {
        if !matches!(self.fallback.get(), Some(Ok(_))) {
            let n = self.pages.refs.len();
            let near = &self.near[usize::from(key.first().map_or(0, |b| b & 3))];
            if self.in_gap(near.load(Ordering::Relaxed), key) {
                return Ok(None);
            }
            // The last page whose first key is at or below `key`: at once for a key at or past
            // the last page's first (an import's new keys, ascending), whose page is then opened
            // anyway and gives the run's last key, past which no page holds anything.
            let i = if n > 0 && self.first(n - 1) <= key {
                if self.last_key().is_some_and(|last| key > last) {
                    return Ok(None);
                }
                n
            } else {
                self.pages_while(|f| f <= key)
            };
            if i == 0 {
                return Ok(None);
            }
            if let Some(page) = self.page(i - 1) {
                // A fault on the mapped hint maps a whole folio of the page cache (hundreds of
                // KiB on current kernels) for a page of a few KiB, now copied: let it go.
                self.release_read();
                return Ok(match search(&page, key) {
                    Ok(j) => Some(page_rec(&page, self.pages.version(), j).entry(self.rescan.id.0)),
                    Err(j) => {
                        near.store(((i as u64) << 32) | j as u64, Ordering::Relaxed);
                        None
                    }
                });
            }
        }
        let recs = self.scanned()?;
        Ok(recs.binary_search_by(|(k, _)| (**k).cmp(key)).ok().map(|i| recs[i].1.clone()))
    }

    /// Whether `key` lies strictly between the two records a read that found nothing landed
    /// between (`near`, see [`PagedRun::near`]) in a page the cache still keeps: then no record
    /// holds it. The memo is a place (page, record), never a page: it is checked against the
    /// records of whatever copy of that page the cache holds now (the one the miss read, or one
    /// opened again since the cache let that go: the hint does not change, so the same records),
    /// the key compared with both neighbours there, and a place outside the page is no answer.
    /// A page the cache let go is not opened for this: the read searches as usual.
    fn in_gap(&self, near: u64, key: &[u8]) -> bool {
        let (i, j) = ((near >> 32) as usize, (near & 0xffff_ffff) as usize);
        // A page's first key is always found: a gap starts after a record of the page.
        if i == 0 || j == 0 {
            return false;
        }
        let Some(page) = u32::try_from(i - 1).ok().and_then(|at| page_cache::get(self.id, at)) else { return false };
        if j > page.offs.len() {
            return false;
        }
        let above = match page.offs.get(j) {
            Some(_) => key < page_key(&page, j),
            None => i == self.pages.refs.len() || key < self.first(i),
        };
        above && page_key(&page, j - 1) < key
    }

    /// The records inside the bounds, in key order from either end: only the pages the bounds
    /// reach are opened, each held by `pins` while the source borrows it; the edge pages'
    /// records outside the bounds are skipped. A page that does not open: the segment's scan
    /// answers, as for a point read.
    pub fn source<'a>(&'a self, pins: &'a Pins, lower: Bound<&[u8]>, upper: Bound<&[u8]>) -> Result<Source<'a>> {
        if self.fallback.get().is_none() {
            let refs = &self.pages.refs;
            // The page holding the lower bound's key (the last starting at or below it), up to
            // the last page starting inside the bounds.
            let first = match lower {
                Bound::Unbounded => 0,
                Bound::Included(k) | Bound::Excluded(k) => self.pages_while(|f| f <= k).saturating_sub(1),
            };
            let end = match upper {
                Bound::Unbounded => refs.len(),
                Bound::Included(k) => self.pages_while(|f| f <= k),
                Bound::Excluded(k) => self.pages_while(|f| f < k),
            };
            let pages: Option<Vec<&Page>> =
                (first..end.max(first)).map(|i| self.page(i).map(|p| pins.hold(p))).collect();
            if let Some(pages) = pages {
                let (version, number) = (self.version(), self.number());
                let (lower, upper) = (owned(lower), owned(upper));
                let recs =
                    pages.into_iter().flat_map(move |pg| (0..pg.offs.len()).map(move |j| page_rec(pg, version, j)));
                return Ok(Box::new(
                    recs.filter(move |r| within(r.key, borrowed(&lower), borrowed(&upper)))
                        .map(move |r| (r.key, Val::raw(&r, number))),
                ));
            }
        }
        let recs = self.scanned()?;
        let (lo, hi) = index_range(recs.len(), |i| &recs[i].0, lower, upper);
        Ok(Box::new(recs[lo..hi].iter().map(|(k, e)| (&k[..], Val::of(e.as_ref())))))
    }

    /// Every record in key order appended to `out`, each page's parsed once (checked and
    /// decoded together): the key directory's build. Pages the cache keeps are used as they
    /// are; the rest are opened into one reused buffer and not kept (the runs go once the map
    /// is built). One thread: the pages split between two measured slower on a busy
    /// 2-core machine (docs/investigations/encryption-cost.md).
    pub fn records_into(&self, out: &mut Vec<(Key, Option<Entry>)>) -> Result<()> {
        if self.fallback.get().is_none() {
            let at = out.len();
            if self.decode(out).is_some() {
                return Ok(());
            }
            out.truncate(at);
        }
        out.extend_from_slice(self.scanned()?);
        Ok(())
    }

    /// An opened page's records onto `out`.
    fn decode_opened(&self, page: &Page, out: &mut Vec<(Key, Option<Entry>)>) {
        let number = self.number();
        let recs = (0..page.offs.len()).map(|j| page_rec(page, self.version(), j));
        out.extend(recs.map(|r| (Key::from(r.key), r.entry(number))));
    }

    /// Every page's records, in order, onto `out`; `None` when one does not open or check.
    fn decode(&self, out: &mut Vec<(Key, Option<Entry>)>) -> Option<()> {
        let mut scratch = (Vec::new(), Vec::new());
        for i in 0..self.pages.refs.len() {
            match u32::try_from(i).ok().and_then(|at| page_cache::get(self.id, at)) {
                Some(page) => self.decode_opened(&page, out),
                None => self.pages.decode(self.crypt.as_deref(), i, &mut scratch, out)?,
            }
        }
        Some(())
    }

    pub fn number(&self) -> u64 {
        self.rescan.id.0
    }

    pub fn version(&self) -> u32 {
        self.pages.version()
    }

    /// Lets the mapped hint's pages go if a read opened any since they last went: a walk ends
    /// with this, so a listing that read pages from the file leaves none of it in place (a warm
    /// one, answered from the cache, pays nothing).
    pub fn release_read(&self) {
        if self.read_since_release.swap(0, Ordering::Relaxed) > 0 {
            self.pages.release_pages();
        }
    }

    /// How many records its pages hold (as the directory says).
    pub fn len(&self) -> usize {
        self.pages.refs.iter().map(|p| p.count as usize).sum()
    }

    /// Where a walk in windows may cut so that this run opens at most `n` pages for the window
    /// that starts at `from` (forward: the first key of the `n`th page past the one holding
    /// `from`) or ends at `to` (backward: the first key of the `n`th page below `to`). `None`:
    /// the rest of the run is within `n` pages, or it answers from its scan (no pages).
    pub fn cut(&self, from: Bound<&[u8]>, to: Bound<&[u8]>, forward: bool, n: usize) -> Option<&[u8]> {
        if self.fallback.get().is_some() {
            return None;
        }
        let count = self.pages.refs.len();
        let i = if forward {
            let holding = match from {
                Bound::Unbounded => 0,
                Bound::Included(k) | Bound::Excluded(k) => self.pages_while(|f| f <= k).saturating_sub(1),
            };
            holding + n
        } else {
            let below = match to {
                Bound::Unbounded => count,
                Bound::Included(k) => self.pages_while(|f| f <= k),
                Bound::Excluded(k) => self.pages_while(|f| f < k),
            };
            below.checked_sub(n).filter(|&i| i > 0)?
        };
        (i < count).then(|| self.first(i))
    }
}

impl Drop for PagedRun {
    fn drop(&mut self) {
        page_cache::forget(self.id);
    }
}

/// Where `key` is in an opened page (compared by key alone): `Ok` its record's place, `Err`
/// how many records of the page lie below it.
fn search(page: &Page, key: &[u8]) -> std::result::Result<usize, usize> {
    let (mut lo, mut hi) = (0, page.offs.len());
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        match page_key(page, mid).cmp(key) {
            std::cmp::Ordering::Less => lo = mid + 1,
            std::cmp::Ordering::Greater => hi = mid,
            std::cmp::Ordering::Equal => return Ok(mid),
        }
    }
    Err(lo)
}

/// The key of an opened page's record `j`: every layout starts a record with seq (8), tag (1),
/// key length (4), key; the page was checked when opened.
fn page_key(page: &Page, j: usize) -> &[u8] {
    let at = page.offs[j] as usize + 9;
    let klen = u32::from_le_bytes(page.buf[at..at + 4].try_into().expect("four bytes")) as usize;
    &page.buf[at + 4..at + 4 + klen]
}

fn owned(b: Bound<&[u8]>) -> Bound<Vec<u8>> {
    b.map(<[u8]>::to_vec)
}

fn borrowed(b: &Bound<Vec<u8>>) -> Bound<&[u8]> {
    b.as_ref().map(Vec::as_slice)
}
