//! The key directory before it is built: every segment's hint, kept as read at open and indexed
//! in place, answers a point read by binary search, newest segment first. Open then costs the
//! hints' bytes, not one ordered-map insert and one key allocation per key (docs/open-profile.md).

use crate::format::Reader;
use crate::hint::{RawRec, read_rec};
use crate::keydir::{Entry, Key};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// One segment's hint, checked whole at open ([`crate::hint::index`]): records in strictly
/// ascending key order, each inside its segment.
pub(crate) struct Run {
    pub number: u64,
    version: u32,
    buf: Vec<u8>,
    offs: Vec<u32>,
}

impl Run {
    pub fn new(number: u64, version: u32, buf: Vec<u8>, offs: Vec<u32>) -> Run {
        Run { number, version, buf, offs }
    }

    pub fn len(&self) -> usize {
        self.offs.len()
    }

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

    /// This segment's last operation on `key`: `Some(None)` a delete, `None` no record.
    pub fn get(&self, key: &[u8]) -> Option<Option<Entry>> {
        let i = self.search(key).ok()?;
        Some(self.rec(i).entry(self.number))
    }

    fn search(&self, key: &[u8]) -> Result<usize, usize> {
        let (mut lo, mut hi) = (0, self.offs.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match self.key(mid).cmp(key) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Ok(mid),
            }
        }
        Err(lo)
    }

    /// Every record, decoded (one key allocation each), in key order.
    pub fn records(&self) -> impl Iterator<Item = (Key, Option<Entry>)> + '_ {
        (0..self.len()).map(|i| {
            let rec = self.rec(i);
            (Key::from(rec.key), rec.entry(self.number))
        })
    }
}

/// A merge's next record of one run: (key, newest run first, index in the run), smallest first.
type Head<'a> = Reverse<(&'a [u8], Reverse<usize>, usize)>;

/// Every segment's run, in segment order (seq order: a later segment's records are newer).
pub(crate) struct Runs(pub Vec<Run>);

impl Runs {
    /// The newest record of `key`: a later segment's delete hides an earlier one's put.
    pub fn get(&self, key: &[u8]) -> Option<Entry> {
        self.0.iter().rev().find_map(|run| run.get(key)).flatten()
    }

    /// The live keys and the bytes their entries keep on disk, as the built map would count
    /// them: a merge of the sorted runs (newest record of each key), no allocation per key —
    /// for counters that must not wait for the map.
    pub fn totals(&self) -> (u64, u64) {
        let mut heads: BinaryHeap<Head<'_>> = BinaryHeap::new();
        for (r, run) in self.0.iter().enumerate() {
            if run.len() > 0 {
                heads.push(Reverse((run.key(0), Reverse(r), 0)));
            }
        }
        let (mut keys, mut live) = (0u64, 0u64);
        let mut last: Option<&[u8]> = None;
        while let Some(Reverse((key, Reverse(r), i))) = heads.pop() {
            if i + 1 < self.0[r].len() {
                heads.push(Reverse((self.0[r].key(i + 1), Reverse(r), i + 1)));
            }
            if last == Some(key) {
                continue;
            }
            last = Some(key);
            if let Some(e) = self.0[r].rec(i).entry(self.0[r].number) {
                keys += 1;
                live += e.disk_bytes(key.len());
            }
        }
        (keys, live)
    }

    /// Every segment's records in segment order, what [`crate::keydir::build_map`] takes.
    pub fn records(&self) -> Vec<(Key, Option<Entry>)> {
        let mut out = Vec::with_capacity(self.0.iter().map(Run::len).sum());
        for run in &self.0 {
            out.extend(run.records());
        }
        out
    }
}
