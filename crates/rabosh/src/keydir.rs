//! The in-memory key directory: a persistent ordered map whose clone is O(1), so every
//! published version is an immutable value that snapshots share.

use crate::metabuf::MetaBuf;
use crate::segment::Segment;
use std::collections::BTreeMap;
use std::sync::Arc;

pub type Key = Arc<[u8]>;

/// Where a live value sits and what the layer above keeps beside it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub seq: u64,
    pub meta: MetaBuf,
    pub seg: u64,
    pub off: u64,
    pub len: u32,
    pub crc: u32,
}

impl Entry {
    /// Bytes this entry keeps alive on disk (value plus its record overhead, v3 layout).
    pub fn disk_bytes(&self, key_len: usize) -> u64 {
        self.len as u64 + key_len as u64 + self.meta.len() as u64 + 17
    }
}

pub type KeyMap = imbl::OrdMap<Key, Entry>;

/// The last operation on a key within one segment: what a hint file stores.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rec {
    pub seq: u64,
    /// `None` is a tombstone.
    pub entry: Option<Entry>,
}

/// Per-segment summary, in key order.
pub type SegRecs = BTreeMap<Key, Rec>;

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

    pub fn insert(&mut self, key: Key, rec: Rec) {
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
            self.insert(k, r);
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

/// One published state: the map, the seq it reflects, and the segments its entries point into.
pub struct Version {
    pub map: KeyMap,
    pub seq: u64,
    /// Sorted by segment number.
    pub segments: Arc<Vec<Arc<Segment>>>,
    pub live_bytes: u64,
}

impl Version {
    pub fn segment(&self, number: u64) -> Option<&Arc<Segment>> {
        self.segments.binary_search_by_key(&number, |s| s.number).ok().map(|i| &self.segments[i])
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
