//! What one commit does to listings, computed once from what its commands staged: every
//! backend's listing aggregate (the embedded engine's index, PostgreSQL's summary table) is kept
//! from this, so none decodes the rows it is given or reads old sizes back. The old sizes are
//! the ones each command read in its own transaction (it read them to decide between create and
//! modify, or to find what it deletes or moves), so under PostgreSQL's SERIALIZABLE they are
//! the transaction's own read and a concurrent change to them conflicts like any other.
//!
//! A memory row (an `m:` key) staged without an intent (`WriteSet::put`/`delete`) would leave
//! the aggregates behind the rows; it is refused, and the transaction commits nothing.

use std::collections::BTreeMap;

use crate::backend::{Sizes, WriteOp, WriteSet};
use crate::keys::is_memory_key;
use crate::{Error, Result};

/// One memory key a commit changes: its size before and after (None: no memory).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SizeChange {
    pub key: Vec<u8>,
    pub before: Option<u64>,
    pub after: Option<u64>,
}

/// The memory keys `ws` changes, in key order, each once: the size the commit found (the first
/// row's, read on the transaction's state like every other) and the one it leaves (the last
/// row's). Keys whose size stays the same (an access stamp, an edit of the same length) change
/// no listing and are left out.
pub fn size_changes(ws: &WriteSet) -> Result<Vec<SizeChange>> {
    let mut net: BTreeMap<&[u8], Sizes> = BTreeMap::new();
    for (op, mark) in ws.rows() {
        let key = match op {
            WriteOp::Put { key, .. } | WriteOp::Delete { key } => key.as_slice(),
        };
        if !is_memory_key(key) {
            continue;
        }
        let Some(mark) = mark else {
            return Err(Error::InvalidArgument(format!(
                "a memory row was staged without what the command did (key {}): memory rows are written \
                 with WriteSet::write, touch, remove or moved, so listings stay current",
                String::from_utf8_lossy(key)
            )));
        };
        net.entry(key).and_modify(|s| s.after = mark.sizes.after).or_insert(mark.sizes);
    }
    Ok(net
        .into_iter()
        .filter(|(_, s)| s.before != s.after)
        .map(|(key, s)| SizeChange { key: key.to_vec(), before: s.before, after: s.after })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::meta::MemMeta;

    fn meta(size: u64) -> MemMeta {
        MemMeta { size, ..MemMeta::for_content("", 1, 1, 0) }
    }

    fn change(key: &str, before: Option<u64>, after: Option<u64>) -> SizeChange {
        SizeChange { key: key.as_bytes().to_vec(), before, after }
    }

    #[test]
    fn each_key_once_from_the_first_size_to_the_last_in_key_order() {
        let mut ws = WriteSet::default();
        ws.write(b"m:s:/memories/b".to_vec(), vec![], meta(3), None);
        ws.moved(b"m:s:/memories/a".to_vec(), b"m:s:/memories/c".to_vec(), vec![], meta(2));
        ws.touch(b"m:s:/memories/t".to_vec(), vec![], meta(9));
        ws.write(b"m:s:/memories/same".to_vec(), vec![], meta(4), Some(&meta(4)));
        ws.remove(b"m:s:/memories/d".to_vec(), &meta(5));
        ws.put(b"h:s:v".to_vec(), vec![], vec![]);
        ws.write(b"m:s:/memories/b".to_vec(), vec![], meta(7), None);
        assert_eq!(
            size_changes(&ws).unwrap(),
            vec![
                change("m:s:/memories/a", Some(2), None),
                change("m:s:/memories/b", None, Some(7)),
                change("m:s:/memories/c", None, Some(2)),
                change("m:s:/memories/d", Some(5), None),
            ]
        );
    }

    #[test]
    fn a_memory_row_without_an_intent_is_refused() {
        for raw in [true, false] {
            let mut ws = WriteSet::default();
            if raw {
                ws.put(b"m:s:/memories/a".to_vec(), vec![], meta(1).encode());
            } else {
                ws.delete(b"m:s:/memories/a".to_vec());
            }
            assert!(matches!(size_changes(&ws), Err(Error::InvalidArgument(_))));
        }
    }
}
