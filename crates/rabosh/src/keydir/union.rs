//! Two streams of one segment's records, each in strictly ascending key order, as one: what a
//! seal writes its hint from (the segment's puts from the key directory, its deletes from the
//! writer's memory) without gathering them in a map first.

use crate::log::hint_rec::RawRec;
use crate::log::hint_writer::Recs;
use std::cmp::Ordering;
use std::iter::Peekable;

/// Every key of either, in order; where both hold a key, `newer`'s record.
pub(crate) fn union<'a>(older: Recs<'a>, newer: Recs<'a>) -> Recs<'a> {
    Box::new(Union { older: older.peekable(), newer: newer.peekable() })
}

struct Union<'a> {
    older: Peekable<Recs<'a>>,
    newer: Peekable<Recs<'a>>,
}

impl<'a> Iterator for Union<'a> {
    type Item = RawRec<'a>;

    fn next(&mut self) -> Option<RawRec<'a>> {
        let order = match (self.older.peek(), self.newer.peek()) {
            (Some(a), Some(b)) => a.key.cmp(b.key),
            (Some(_), None) => Ordering::Less,
            (None, _) => Ordering::Greater,
        };
        match order {
            Ordering::Less => self.older.next(),
            Ordering::Greater => self.newer.next(),
            Ordering::Equal => {
                self.older.next();
                self.newer.next()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recs(keys: &'static [(&'static [u8], u64)]) -> Recs<'static> {
        Box::new(keys.iter().map(|&(key, seq)| RawRec { seq, key, put: None }))
    }

    #[test]
    fn newer_wins_and_order_holds() {
        let got: Vec<_> = union(recs(&[(b"a", 1), (b"c", 1), (b"d", 1)]), recs(&[(b"b", 2), (b"c", 2), (b"e", 2)]))
            .map(|r| (r.key, r.seq))
            .collect();
        let want: Vec<(&[u8], u64)> = vec![(b"a", 1), (b"b", 2), (b"c", 2), (b"d", 1), (b"e", 2)];
        assert_eq!(got, want);
        assert_eq!(union(recs(&[]), recs(&[])).count(), 0);
    }
}
