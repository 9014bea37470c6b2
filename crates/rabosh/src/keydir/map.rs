//! The in-memory key directory: a persistent ordered map whose clone is O(1), so every
//! published version is an immutable value that snapshots share.

use crate::error::Result;
use crate::keydir::runs::Runs;
use crate::log::record::{Entry, Key, Rec, SegRecs};
use crate::log::segment::Segment;
use arc_swap::ArcSwapOption;
use std::collections::BTreeMap;
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

    /// The segment's summary: its puts as `map` holds them (a map that reflects every commit of
    /// segment `number`), its deletes as remembered.
    pub fn summary(&self, map: &KeyMap, number: u64) -> SegRecs {
        let puts = map
            .iter()
            .filter(|(_, e)| e.seg == number)
            .map(|(k, e)| (k.clone(), Rec { seq: e.seq, entry: Some(e.clone()) }));
        let dels = self.deleted.iter().map(|(k, seq)| (k.clone(), Rec { seq: *seq, entry: None }));
        puts.chain(dels).collect()
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

    /// The whole map: builds it first if open left it to build ([`Keys`]). An error only
    /// when a sealed hint's page and the segment it summarises are both damaged (Corruption).
    pub fn map(&self) -> Result<&KeyMap> {
        Ok(&self.keys.try_force()?.0)
    }

    /// Bytes the live entries keep on disk (builds the map, as [`Version::map`]).
    pub fn live_bytes(&self) -> Result<u64> {
        Ok(self.keys.try_force()?.1)
    }
}

/// The key directory of one version: the map and its live bytes, or — after an open that found
/// a hint for every segment — the hints themselves, which answer point reads until something
/// needs order or the whole map and builds it (once; a thread started at open usually has).
pub struct Keys {
    built: OnceLock<(KeyMap, u64)>,
    /// Until built: the runs the map is built from. Dropped once built (their bytes would
    /// otherwise stay resident beside the map); a point read that loaded them first keeps its
    /// own reference.
    runs: ArcSwapOption<Runs>,
    /// Made by open (or a shared catch-up's reload) from hints: nothing was applied since, so
    /// the active segment's hint still describes it.
    from_hints: bool,
    /// Hand the build's freed pages back to the OS once built (open's build). Off for a shared
    /// catch-up's reload: that build runs while the process serves, and glibc's trim holds each
    /// malloc arena's lock while it walks it, so a JS thread's allocation in a cheap view waited
    /// for it (issue 19: 145 ms).
    trim: std::sync::atomic::AtomicBool,
    building: std::sync::Mutex<()>,
}

impl Keys {
    pub fn built(map: KeyMap, live: u64) -> Keys {
        Keys {
            built: OnceLock::from((map, live)),
            runs: ArcSwapOption::empty(),
            from_hints: false,
            trim: true.into(),
            building: std::sync::Mutex::default(),
        }
    }

    pub(crate) fn lazy(runs: Runs) -> Keys {
        Keys {
            built: OnceLock::new(),
            runs: ArcSwapOption::from_pointee(runs),
            from_hints: true,
            trim: true.into(),
            building: std::sync::Mutex::default(),
        }
    }

    pub fn is_built(&self) -> bool {
        self.built.get().is_some()
    }

    /// Leaves the heap as it is after the build (see `trim`).
    pub(crate) fn without_trim(&self) {
        self.trim.store(false, std::sync::atomic::Ordering::Relaxed);
    }

    pub fn loaded_from_hints(&self) -> bool {
        self.from_hints
    }

    /// The entry at `key`; never builds the map. An error only when a sealed hint's page
    /// turned out damaged and its segment does not scan either (Corruption).
    pub fn get(&self, key: &[u8]) -> Result<Option<Entry>> {
        if let Some((map, _)) = self.built.get() {
            return Ok(map.get(key).cloned());
        }
        match self.runs.load_full() {
            Some(runs) => runs.get(key),
            // Built since the check above (the runs go only after the map is in place).
            None => Ok(self.try_force()?.0.get(key).cloned()),
        }
    }

    /// How many live keys and the bytes they keep on disk; never waits for the map (counts
    /// the runs when it is not built yet).
    pub fn totals(&self) -> Result<(u64, u64)> {
        if let Some((map, live)) = self.built.get() {
            return Ok((map.len() as u64, *live));
        }
        if let Some(runs) = self.runs.load_full() {
            runs.totals()
        } else {
            let (map, live) = self.try_force()?;
            Ok((map.len() as u64, *live))
        }
    }

    /// The map and live bytes, built now if not yet (another thread building it: waits for it).
    /// A sealed hint's page that does not open is answered from its segment's scan; only a
    /// segment that does not scan either fails (Corruption, naming it), and every caller
    /// returns that: a panic here would be caught in a binding's worker and leave its promise
    /// unsettled.
    pub fn try_force(&self) -> Result<&(KeyMap, u64)> {
        if let Some(b) = self.built.get() {
            return Ok(b);
        }
        // One build at a time (a second caller waits for it, as `get_or_init` would make it).
        let held = self.building.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let b = if let Some(b) = self.built.get() {
            b
        } else {
            let runs = self.runs.load_full().expect("an unbuilt key directory keeps its runs");
            let recs = runs.records()?;
            self.built.get_or_init(|| build_map(recs))
        };
        drop(held);
        if self.runs.swap(None).is_some() && self.trim.load(std::sync::atomic::Ordering::Relaxed) {
            crate::io::os::release_freed_memory();
        }
        Ok(b)
    }
}

/// Applies one segment's records to a map (records of later segments always carry higher seqs).
pub fn apply_recs(map: &mut KeyMap, live: &mut u64, recs: &SegRecs) {
    for (k, r) in recs {
        apply_one(map, live, k.clone(), r.entry.clone());
    }
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
