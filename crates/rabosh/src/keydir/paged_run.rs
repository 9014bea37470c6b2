//! One segment's paged hint (sealed or checksummed) as a run ([`crate::keydir::runs`]): a point read opens only the page
//! its key falls in (once; kept). A page that does not open or parse is damage found late: the
//! hint is derived data, so the run then answers from a scan of its segment, exactly as open
//! would have built it, and only a segment that does not scan either is an error (Corruption).

use crate::crypto::crypt::Crypt;
use crate::error::{Error, Result};
use crate::io::vfs::{VFile, Vfs};
use crate::keydir::merge::{Source, Val, index_range, within};
use crate::log::hint_pages::{Page, Pages, page_rec};
use crate::log::hint_rec::ActiveTail;
use crate::log::record::{Entry, Key};
use crate::log::segment::{ScanMode, scan};
use std::ops::Bound;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

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
    /// Record index of each page's first record, then the total.
    starts: Vec<usize>,
    opened: Vec<OnceLock<Option<Page>>>,
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

/// A point's state: opened pages, or the fallback records.
pub(crate) enum Ready<'a> {
    Pages(Vec<&'a Page>),
    Scanned(&'a [(Key, Option<Entry>)]),
}

impl PagedRun {
    pub fn new(crypt: Option<Arc<Crypt>>, pages: Pages, rescan: Rescan) -> PagedRun {
        let mut starts = Vec::with_capacity(pages.refs.len() + 1);
        let mut at = 0usize;
        for p in &pages.refs {
            starts.push(at);
            at += p.count as usize;
        }
        starts.push(at);
        let opened = (0..pages.refs.len()).map(|_| OnceLock::new()).collect();
        let (fallback, last, near) = (OnceLock::new(), OnceLock::new(), Default::default());
        PagedRun { crypt, pages, starts, opened, rescan, fallback, last, near }
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
            let page = self.page(self.opened.len().checked_sub(1)?)?;
            let j = page.offs.len().checked_sub(1)?;
            Some(Key::from(page_rec(page, self.version(), j).key))
        });
        last.as_deref()
    }

    fn page(&self, i: usize) -> Option<&Page> {
        self.opened[i].get_or_init(|| self.pages.open(self.crypt.as_deref(), i)).as_ref()
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
                return Ok(match search(page, key) {
                    Ok(j) => Some(page_rec(page, self.pages.version(), j).entry(self.rescan.id.0)),
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
    /// between (`near`, see [`PagedRun::near`]) in a page still open: then no record holds it.
    fn in_gap(&self, near: u64, key: &[u8]) -> bool {
        let (i, j) = ((near >> 32) as usize, (near & 0xffff_ffff) as usize);
        // A page's first key is always found: a gap starts after a record of the page.
        let Some(Some(page)) = (i > 0 && j > 0).then(|| self.opened[i - 1].get()).flatten() else { return false };
        let above = match page.offs.get(j) {
            Some(_) => key < page_key(page, j),
            None => i == self.opened.len() || key < self.first(i),
        };
        above && page_key(page, j - 1) < key
    }

    /// The records inside the bounds, in key order from either end: only the pages the bounds
    /// reach are opened (and kept); the edge pages' records outside the bounds are skipped. A
    /// page that does not open: the segment's scan answers, as for a point read.
    pub fn source<'a>(&'a self, lower: Bound<&[u8]>, upper: Bound<&[u8]>) -> Result<Source<'a>> {
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
            let pages: Option<Vec<&Page>> = (first..end.max(first)).map(|i| self.page(i)).collect();
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

    /// Every page opened (or the fallback): what [`crate::keydir::runs::Runs::totals`] and the map
    /// build walk, off the first read's path.
    pub fn ready(&self) -> Result<Ready<'_>> {
        if self.fallback.get().is_none() {
            let pages: Option<Vec<&Page>> = (0..self.opened.len()).map(|i| self.page(i)).collect();
            if let Some(pages) = pages {
                return Ok(Ready::Pages(pages));
            }
        }
        Ok(Ready::Scanned(self.scanned()?))
    }

    /// Every record in key order appended to `out`, each page's parsed once (checked and
    /// decoded together): the key directory's build. Pages a point read opened are used as
    /// they are; the rest are opened into one reused buffer and not kept (the runs go once the
    /// map is built). One thread: the pages split between two measured slower on a busy
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
        for i in 0..self.opened.len() {
            match self.opened[i].get() {
                Some(Some(page)) => self.decode_opened(page, out),
                Some(None) => return None,
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

    /// The global index `i` as (page, record in it).
    pub fn locate(&self, i: usize) -> (usize, usize) {
        let p = self.starts.partition_point(|s| *s <= i) - 1;
        (p, i - self.starts[p])
    }

    pub fn len_pages(&self) -> usize {
        *self.starts.last().unwrap_or(&0)
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
