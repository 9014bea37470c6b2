//! What the log records about a key: where its value sits ([`Entry`]) and a segment's last
//! operation on it ([`Rec`]). The segments, hints and the key directory above all speak these.

use crate::log::metabuf::MetaBuf;
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
        u64::from(self.len) + key_len as u64 + self.meta.len() as u64 + 17
    }
}

/// The last operation on a key within one segment: what a hint file stores.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rec {
    pub seq: u64,
    /// `None` is a tombstone.
    pub entry: Option<Entry>,
}

/// Per-segment summary, in key order.
pub type SegRecs = BTreeMap<Key, Rec>;
