//! Ordered reads of a key directory that is never built whole: a k-way merge of each run's
//! binary-searched sub-range and the delta of what was committed since open. The newest source
//! holding a key wins; a delete hides the key. Both ends walk (`.rev()` pages history newest
//! first), each source's items borrowed from the run or map that holds them.

use crate::log::hint_rec::RawRec;
use crate::log::metabuf::MetaBuf;
use crate::log::record::Entry;
use std::ops::Bound;

/// One source's record of a key: a put (borrowed from a hint's bytes or a map) or a delete.
#[derive(Clone, Copy)]
pub(crate) enum Val<'a> {
    /// A hint record's put in segment `number`: (seq, meta, offset, length, crc).
    Raw(u64, u64, (&'a [u8], u64, u32, u32)),
    Entry(&'a Entry),
    Del,
}

impl<'a> Val<'a> {
    pub fn raw(rec: &RawRec<'a>, number: u64) -> Val<'a> {
        rec.put.map_or(Val::Del, |p| Val::Raw(number, rec.seq, p))
    }

    pub fn of(e: Option<&'a Entry>) -> Val<'a> {
        e.map_or(Val::Del, Val::Entry)
    }

    /// A put's metadata; `None`: a delete.
    pub fn meta(&self) -> Option<&'a [u8]> {
        match *self {
            Val::Raw(_, _, (meta, ..)) => Some(meta),
            Val::Entry(e) => Some(e.meta.as_slice()),
            Val::Del => None,
        }
    }

    /// The disk bytes a put keeps for a key of `key_len` bytes (as [`Entry::disk_bytes`]); 0 for
    /// a delete. No allocation: what a count of every key adds up.
    pub fn disk_bytes(&self, key_len: usize) -> u64 {
        match *self {
            Val::Raw(_, _, (meta, _, len, _)) => u64::from(len) + key_len as u64 + meta.len() as u64 + 17,
            Val::Entry(e) => e.disk_bytes(key_len),
            Val::Del => 0,
        }
    }

    /// A put's entry, owned; `None`: a delete.
    pub fn entry(&self) -> Option<Entry> {
        match *self {
            Val::Raw(seg, seq, (meta, off, len, crc)) => {
                Some(Entry { seq, meta: MetaBuf::new(meta), seg, off, len, crc })
            }
            Val::Entry(e) => Some(e.clone()),
            Val::Del => None,
        }
    }
}

pub(crate) type Item<'a> = (&'a [u8], Val<'a>);
pub(crate) type Source<'a> = Box<dyn DoubleEndedIterator<Item = Item<'a>> + Send + 'a>;

/// A source with its next item at each end looked at but not taken. An item is held at one end
/// only: the last one left moves to whichever end asks.
struct Ends<'a> {
    it: Source<'a>,
    front: Option<Item<'a>>,
    back: Option<Item<'a>>,
}

impl<'a> Ends<'a> {
    fn front_key(&mut self) -> Option<&'a [u8]> {
        if self.front.is_none() {
            self.front = self.it.next().or_else(|| self.back.take());
        }
        self.front.map(|(k, _)| k)
    }

    fn back_key(&mut self) -> Option<&'a [u8]> {
        if self.back.is_none() {
            self.back = self.it.next_back().or_else(|| self.front.take());
        }
        self.back.map(|(k, _)| k)
    }
}

/// The live puts of every source in key order, oldest source first in `sources`.
pub(crate) struct Merge<'a> {
    sources: Vec<Ends<'a>>,
}

impl<'a> Merge<'a> {
    pub fn new(sources: Vec<Source<'a>>) -> Merge<'a> {
        Merge { sources: sources.into_iter().map(|it| Ends { it, front: None, back: None }).collect() }
    }

    /// The next key at one end (the smallest from the front, the largest from the back), the
    /// newest source's record of it, every source's record of it taken.
    fn step(&mut self, front: bool) -> Option<Item<'a>> {
        let mut best: Option<&'a [u8]> = None;
        for s in &mut self.sources {
            let k = if front { s.front_key() } else { s.back_key() };
            if let Some(k) = k {
                let better = best.is_none_or(|b| if front { k < b } else { k > b });
                if better {
                    best = Some(k);
                }
            }
        }
        let key = best?;
        let mut newest = None;
        for s in &mut self.sources {
            let end = if front { &mut s.front } else { &mut s.back };
            if end.is_some_and(|(k, _)| k == key) {
                newest = end.take();
            }
        }
        newest
    }
}

impl<'a> Iterator for Merge<'a> {
    type Item = Item<'a>;

    fn next(&mut self) -> Option<Item<'a>> {
        loop {
            let (k, v) = self.step(true)?;
            if !matches!(v, Val::Del) {
                return Some((k, v));
            }
        }
    }
}

impl DoubleEndedIterator for Merge<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        loop {
            let (k, v) = self.step(false)?;
            if !matches!(v, Val::Del) {
                return Some((k, v));
            }
        }
    }
}

/// `[lo, hi)`: the indexes of a sorted sequence of `len` keys inside the bounds.
pub(crate) fn index_range<'k>(
    len: usize,
    key: impl Fn(usize) -> &'k [u8],
    lower: Bound<&[u8]>,
    upper: Bound<&[u8]>,
) -> (usize, usize) {
    // The first index whose key is not below the bound (`strict`: not at or below).
    let first_past = |bound: &[u8], strict: bool| {
        let (mut lo, mut hi) = (0, len);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let k = key(mid);
            if k < bound || (strict && k == bound) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    };
    let lo = match lower {
        Bound::Unbounded => 0,
        Bound::Included(b) => first_past(b, false),
        Bound::Excluded(b) => first_past(b, true),
    };
    let hi = match upper {
        Bound::Unbounded => len,
        Bound::Included(b) => first_past(b, true),
        Bound::Excluded(b) => first_past(b, false),
    };
    (lo, hi.max(lo))
}

/// Whether `k` lies inside the bounds.
pub(crate) fn within(k: &[u8], lower: Bound<&[u8]>, upper: Bound<&[u8]>) -> bool {
    let above = match lower {
        Bound::Unbounded => true,
        Bound::Included(b) => k >= b,
        Bound::Excluded(b) => k > b,
    };
    let below = match upper {
        Bound::Unbounded => true,
        Bound::Included(b) => k <= b,
        Bound::Excluded(b) => k < b,
    };
    above && below
}
