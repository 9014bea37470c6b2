//! The in-memory key directory: a persistent ordered map whose clone is O(1), so every
//! published version is an immutable value that snapshots share.

use crate::error::Result;
use crate::keydir::merge::{Merge, Source, Val};
use crate::keydir::page_cache::Pins;
use crate::keydir::runs::{Run, Runs};
use crate::keydir::union::union;
use crate::keydir::walk::{Visit, walk};
use crate::log::hint_rec::RawRec;
use crate::log::hint_writer::Recs;
use crate::log::record::{Entry, Key, Rec, SegRecs};
use crate::log::segment::Segment;
use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::{Arc, OnceLock};

pub type KeyMap = imbl::OrdMap<Key, Entry>;

/// What the writer remembers of the active segment to write its hint later. The puts are in
/// the key directory already (every entry whose `seg` is this segment, since later segments
/// carry later commits), so only the deletes are kept: a full copy of the segment's summary
/// would double the resident memory of a store whose keys all live in the active segment.
#[derive(Debug, Default)]
pub struct ActiveRecs {
    /// Keys whose last operation in this segment is a delete, with that delete's seq.
    deleted: BTreeMap<Key, u64>,
}

impl ActiveRecs {
    pub fn new() -> ActiveRecs {
        ActiveRecs::default()
    }

    pub fn insert(&mut self, key: Key, rec: &Rec) {
        match rec.entry {
            Some(_) => {
                self.deleted.remove(&key);
            }
            None => {
                self.deleted.insert(key, rec.seq);
            }
        }
    }

    pub fn extend(&mut self, recs: impl IntoIterator<Item = (Key, Rec)>) {
        for (k, r) in recs {
            self.insert(k, &r);
        }
    }

    /// The segment's records in key order, streamed (what its hint is written from): its
    /// puts as `keys` holds them (a directory that reflects every commit of segment `number`),
    /// its deletes as remembered. The hint pages they borrow from (the segment's own run, where
    /// open read one) are held by `pins`: the caller that writes the hint owns them, so they go
    /// when the hint is written, not before the records borrowing them.
    pub(crate) fn records<'a>(&'a self, keys: &'a Keys, pins: &'a Pins, number: u64) -> Result<Recs<'a>> {
        let dels = self.deleted.iter().map(|(k, seq)| RawRec { seq: *seq, key: k, put: None });
        Ok(union(keys.segment_puts(pins, number)?, Box::new(dels)))
    }

    /// Keys whose last operation in the segment is a delete.
    pub fn deleted(&self) -> &BTreeMap<Key, u64> {
        &self.deleted
    }
}

/// One published state: the key directory, the seq it reflects, and the segments its entries
/// point into.
pub struct Version {
    pub keys: Arc<Keys>,
    pub seq: u64,
    /// Sorted by segment number.
    pub segments: Arc<Vec<Arc<Segment>>>,
}

impl Version {
    pub fn new(map: KeyMap, live_bytes: u64, seq: u64, segments: Arc<Vec<Arc<Segment>>>) -> Version {
        Version { keys: Arc::new(Keys::built(map, live_bytes)), seq, segments }
    }

    pub fn segment(&self, number: u64) -> Option<&Arc<Segment>> {
        self.segments.binary_search_by_key(&number, |s| s.number).ok().map(|i| &self.segments[i])
    }
}

/// What was committed over a lazily opened directory's hints: `None` is a delete.
pub type Delta = imbl::OrdMap<Key, Option<Entry>>;

/// The key directory of one version: a map of every live key (built at open when a segment
/// had to be scanned, or by compaction), or — after an open that found a hint for every
/// segment — those hints as read ([`Runs`], shared by every later version) under a small
/// persistent delta of what was committed since. The second is never built whole: point reads
/// look in the delta, then the runs; ordered reads merge them ([`crate::keydir::merge`]).
/// Cloning is O(1) either way, so every commit publishes a new value and snapshots share it.
#[derive(Clone)]
pub struct Keys(Dir);

#[derive(Clone)]
enum Dir {
    Map { map: KeyMap, live: u64 },
    Lazy(Lazy),
}

#[derive(Clone)]
struct Lazy {
    base: Arc<Base>,
    delta: Delta,
    /// Live keys and bytes the delta adds to the runs' (negative: takes away).
    adj: (i64, i64),
    /// Nothing applied since open (or a reload) read the hints.
    from_hints: bool,
}

/// The hints a lazy directory stands on, and their totals once counted.
struct Base {
    runs: Runs,
    totals: OnceLock<(u64, u64)>,
}

impl Keys {
    pub fn built(map: KeyMap, live: u64) -> Keys {
        Keys(Dir::Map { map, live })
    }

    pub(crate) fn lazy(runs: Runs) -> Keys {
        let base = Arc::new(Base { runs, totals: OnceLock::new() });
        Keys(Dir::Lazy(Lazy { base, delta: Delta::new(), adj: (0, 0), from_hints: true }))
    }

    /// Whether every live key sits in one map (a scan at open, a compaction); false while the
    /// directory stands on the hints open read — which it then does for good: nothing builds it.
    pub fn is_built(&self) -> bool {
        matches!(self.0, Dir::Map { .. })
    }

    pub fn loaded_from_hints(&self) -> bool {
        matches!(&self.0, Dir::Lazy(l) if l.from_hints)
    }

    /// The entry at `key`. An error only when a sealed hint's page turned out damaged and its
    /// segment does not scan either (Corruption).
    pub fn get(&self, key: &[u8]) -> Result<Option<Entry>> {
        match &self.0 {
            Dir::Map { map, .. } => Ok(map.get(key).cloned()),
            Dir::Lazy(l) => match l.delta.get(key) {
                Some(e) => Ok(e.clone()),
                None => l.base.runs.get(key),
            },
        }
    }

    /// How many live keys and the bytes they keep on disk. A lazy directory counts its runs once
    /// (a merge, no allocation per key) and keeps the delta's difference up to date at commit.
    pub fn totals(&self) -> Result<(u64, u64)> {
        match &self.0 {
            Dir::Map { map, live } => Ok((map.len() as u64, *live)),
            Dir::Lazy(l) => {
                let (keys, live) = if let Some(t) = l.base.totals.get() {
                    *t
                } else {
                    let t = l.base.runs.totals()?;
                    *l.base.totals.get_or_init(|| t)
                };
                Ok((keys.saturating_add_signed(l.adj.0), live.saturating_add_signed(l.adj.1)))
            }
        }
    }

    /// Records `key`'s new state (`None`: deleted). Over the runs it goes into the delta, the
    /// totals adjusted from the entry it replaces (a point read, answered as it was when the
    /// commit checked it before writing: a page the cache let go opens to the same records, and
    /// one that no longer opens is answered by its segment's scan, as open would have).
    pub fn apply(&mut self, key: Key, entry: Option<Entry>) -> Result<()> {
        self.apply_read(key, entry, None)
    }

    /// [`Keys::apply`], given `read`: what this directory answered for `key` before the commit
    /// began applying (`None`: not read), so the runs are not searched for it again. The delta
    /// still answers first (an earlier op of the same commit on the same key is there).
    #[allow(clippy::option_option)] // `Some(None)`: read, and absent
    pub fn apply_read(&mut self, key: Key, entry: Option<Entry>, read: Option<Option<Entry>>) -> Result<()> {
        match &mut self.0 {
            Dir::Map { map, live } => apply_one(map, live, key, entry),
            Dir::Lazy(l) => {
                let old = match (l.delta.get(&key), read) {
                    (Some(e), _) => e.clone(),
                    (None, Some(read)) => read,
                    (None, None) => l.base.runs.get(&key)?,
                };
                l.from_hints = false;
                if old.is_none() && entry.is_none() {
                    return Ok(());
                }
                l.adj.0 += i64::from(entry.is_some()) - i64::from(old.is_some());
                l.adj.1 += signed_bytes(&key, entry.as_ref()) - signed_bytes(&key, old.as_ref());
                l.delta.insert(key, entry);
            }
        }
        Ok(())
    }

    /// Applies one segment's records (records of later segments always carry higher seqs).
    pub fn apply_recs(&mut self, recs: &SegRecs) -> Result<()> {
        for (k, r) in recs {
            self.apply(k.clone(), r.entry.clone())?;
        }
        Ok(())
    }

    /// How many keys the delta holds (`None`: a built map): what a seal keeps bounded.
    pub fn delta_len(&self) -> Option<usize> {
        match &self.0 {
            Dir::Map { .. } => None,
            Dir::Lazy(l) => Some(l.delta.len()),
        }
    }

    /// The directory once segment `run.number()` is sealed (its hint, read back as `run`,
    /// written from this directory's puts of that segment and its `deleted` keys): the run joins
    /// as the newest (replacing one open read for that segment, which the new hint covers), and
    /// the delta lets go of every entry the hint records as it is (a put or a delete of that
    /// segment that nothing overwrote since); so the delta holds only what was committed after
    /// the last seal. A built map stays as it is.
    pub(crate) fn seal(&self, run: Run, deleted: &BTreeMap<Key, u64>) -> Result<Keys> {
        let Dir::Lazy(l) = &self.0 else { return Ok(self.clone()) };
        let number = run.number();
        let mut runs: Vec<Arc<Run>> = l.base.runs.0.iter().filter(|r| r.number() != number).cloned().collect();
        runs.push(Arc::new(run));
        let runs = Runs(runs);
        let mut delta = Delta::new();
        let mut adj = (0i64, 0i64);
        for (k, v) in &l.delta {
            // What the hint records for `k`: its delete, else this delta's put of the segment.
            let recorded = match v {
                None => deleted.contains_key(k),
                Some(e) => e.seg == number && !deleted.contains_key(k),
            };
            if recorded {
                continue;
            }
            // Kept (another process's commits a catch-up applied): its difference to the runs.
            let old = runs.get(k)?;
            adj.0 += i64::from(v.is_some()) - i64::from(old.is_some());
            adj.1 += signed_bytes(k, v.as_ref()) - signed_bytes(k, old.as_ref());
            delta.insert(k.clone(), v.clone());
        }
        let totals = OnceLock::new();
        if let Some(&(keys, live)) = l.base.totals.get() {
            let keys = keys.saturating_add_signed(l.adj.0 - adj.0);
            let live = live.saturating_add_signed(l.adj.1 - adj.1);
            let _ = totals.set((keys, live));
        }
        let base = Arc::new(Base { runs, totals });
        Ok(Keys(Dir::Lazy(Lazy { base, delta, adj, from_hints: false })))
    }

    /// The live keys inside the bounds, in key order from either end, each with its record;
    /// the hint pages it reaches are held by `pins` (every one of them, for as long as the
    /// pins live: a long range is cheaper through [`Keys::visit`]).
    pub(crate) fn range<'a>(&'a self, pins: &'a Pins, lower: Bound<&[u8]>, upper: Bound<&[u8]>) -> Result<Merge<'a>> {
        let empty = match (lower, upper) {
            (Bound::Included(l), Bound::Included(u)) => u < l,
            (Bound::Included(l) | Bound::Excluded(l), Bound::Included(u) | Bound::Excluded(u)) => u <= l,
            _ => false,
        };
        if empty {
            return Ok(Merge::new(Vec::new()));
        }
        let mut sources: Vec<Source<'a>> = Vec::new();
        match &self.0 {
            Dir::Map { map, .. } => {
                sources.push(Box::new(map.range::<_, [u8]>((lower, upper)).map(|(k, e)| (&k[..], Val::Entry(e)))));
            }
            Dir::Lazy(l) => {
                for run in &l.base.runs.0 {
                    sources.push(run.source(pins, lower, upper)?);
                }
                if !l.delta.is_empty() {
                    let d = l.delta.range::<_, [u8]>((lower, upper));
                    sources.push(Box::new(d.map(|(k, e)| (&k[..], Val::of(e.as_ref())))));
                }
            }
        }
        Ok(Merge::new(sources))
    }

    /// The live keys inside the bounds, each with its record, handed to `f` in key order
    /// (`forward`) or from the top until it breaks: a paged run's pages are held a window at a
    /// time ([`crate::keydir::walk`]), so a scan of everything keeps a few of them.
    pub(crate) fn visit(
        &self,
        lower: Bound<&[u8]>,
        upper: Bound<&[u8]>,
        forward: bool,
        f: &mut Visit<'_>,
    ) -> Result<()> {
        match &self.0 {
            Dir::Map { .. } => {
                let pins = Pins::default();
                let mut merge = self.range(&pins, lower, upper)?;
                while let Some((k, v)) = if forward { merge.next() } else { merge.next_back() } {
                    if f(k, v).is_break() {
                        break;
                    }
                }
                Ok(())
            }
            Dir::Lazy(l) => walk(&l.base.runs.0, Some(&l.delta), (lower, upper), forward, f),
        }
    }

    /// Every live key in one map, built now from the runs and the delta (compaction and
    /// re-encryption, which rewrite every entry, then publish a built directory).
    pub fn to_map(&self) -> Result<(KeyMap, u64)> {
        if let Dir::Map { map, live } = &self.0 {
            return Ok((map.clone(), *live));
        }
        let mut all: Vec<(Key, Option<Entry>)> = Vec::new();
        self.visit(Bound::Unbounded, Bound::Unbounded, true, &mut |k, v| {
            all.push((Key::from(k), v.entry()));
            std::ops::ControlFlow::Continue(())
        })?;
        Ok(build_map(all))
    }

    /// Every live entry of segment `number`, as puts in key order (what its hint is written
    /// from, borrowed: nothing gathered). Over the runs: the delta's, and the segment's own
    /// hint's where open read one and the delta does not hold the key since (its pages held by
    /// `pins`, which must outlive the records: they borrow keys and metadata from the pages).
    fn segment_puts<'a>(&'a self, pins: &'a Pins, number: u64) -> Result<Recs<'a>> {
        fn put<'a>(k: &'a [u8], e: &'a Entry) -> RawRec<'a> {
            RawRec { seq: e.seq, key: k, put: Some((e.meta.as_slice(), e.off, e.len, e.crc)) }
        }
        match &self.0 {
            Dir::Map { map, .. } => {
                Ok(Box::new(map.iter().filter(move |(_, e)| e.seg == number).map(|(k, e)| put(k, e))))
            }
            Dir::Lazy(l) => {
                let mut out: Recs<'_> = Box::new(std::iter::empty());
                for run in l.base.runs.0.iter().filter(|r| r.number() == number) {
                    let delta = &l.delta;
                    let own = run.source(pins, Bound::Unbounded, Bound::Unbounded)?.filter_map(move |(k, v)| match v {
                        _ if delta.contains_key(k) => None,
                        Val::Raw(_, seq, p) => Some(RawRec { seq, key: k, put: Some(p) }),
                        Val::Entry(e) => Some(put(k, e)),
                        Val::Del => None,
                    });
                    out = union(out, Box::new(own));
                }
                let delta =
                    l.delta.iter().filter_map(move |(k, e)| e.as_ref().filter(|e| e.seg == number).map(|e| put(k, e)));
                Ok(union(out, Box::new(delta)))
            }
        }
    }
}

/// The disk bytes `entry` keeps for `key` (0 for a delete), signed for the delta's adjustments.
fn signed_bytes(key: &[u8], entry: Option<&Entry>) -> i64 {
    entry.map_or(0, |e| e.disk_bytes(key.len()).cast_signed())
}

pub fn apply_one(map: &mut KeyMap, live: &mut u64, key: Key, entry: Option<Entry>) {
    let klen = key.len();
    let old = match entry {
        Some(e) => {
            *live += e.disk_bytes(klen);
            map.insert(key, e)
        }
        None => map.remove(&key),
    };
    if let Some(o) = old {
        *live = live.saturating_sub(o.disk_bytes(klen));
    }
}

/// The key directory of every segment's records (in segment order, each segment's in any
/// order): the last record of each key wins, a delete removes it.
///
/// Built in two passes of every other key: inserted in key order, a B-tree splits each full
/// leaf in half and never refills it, leaving every leaf half empty; the second pass fills
/// each of those halves exactly, so the leaves end up full (half the memory per key).
pub(crate) fn build_map(mut recs: Vec<(Key, Option<Entry>)>) -> (KeyMap, u64) {
    // Stable: for one key, records keep their segment order.
    recs.sort_by(|a, b| a.0.cmp(&b.0));
    let mut last: Vec<(Key, Entry)> = Vec::with_capacity(recs.len());
    let mut it = recs.into_iter().peekable();
    while let Some((k, e)) = it.next() {
        if it.peek().is_some_and(|(next, _)| *next == k) {
            continue;
        }
        if let Some(e) = e {
            last.push((k, e));
        }
    }
    let live = last.iter().map(|(k, e)| e.disk_bytes(k.len())).sum();
    let mut map = KeyMap::new();
    let mut odd = Vec::with_capacity(last.len() / 2);
    for (i, (k, e)) in last.into_iter().enumerate() {
        if i % 2 == 0 {
            map.insert(k, e);
        } else {
            odd.push((k, e));
        }
    }
    for (k, e) in odd {
        map.insert(k, e);
    }
    (map, live)
}
