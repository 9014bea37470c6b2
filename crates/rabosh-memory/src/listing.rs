//! Directory listing by a metadata scan of the viewed directory's key range: reads no values.

use rabosh::Snapshot;

use crate::keys::subtree_prefix;
use crate::listing_index::visible_below;
use crate::meta::MemMeta;
use crate::tree::{Entry, Name};

/// The viewed directory as a node two levels deep: deeper content only feeds the aggregates.
pub(crate) fn scan_dir(snap: &Snapshot, scope: &str, dir: &str) -> Entry {
    let prefix = subtree_prefix(scope, dir);
    let mut root = Entry::default();
    for (key, meta) in snap.scan_prefix(&prefix) {
        let size = MemMeta::decode(meta).size;
        let Ok(rel) = std::str::from_utf8(&key[prefix.len()..]) else {
            continue;
        };
        let segs: Vec<&str> = rel.split('/').collect();
        let visible_below = visible_below(&segs);
        let mut node = &mut root;
        for (j, seg) in segs.iter().enumerate().take(2) {
            node.count_below(size, visible_below[j]);
            node = node.children.entry(Name(seg.to_string())).or_default();
        }
        if segs.len() <= 2 {
            node.memory = Some(size);
        } else {
            node.count_below(size, visible_below[2]);
        }
    }
    root
}
