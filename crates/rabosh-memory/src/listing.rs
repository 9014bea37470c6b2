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
        root.all_count += 1;
        root.all_bytes += size;
        let visible_below = visible_below(&segs);
        let mut node = &mut root;
        for (j, seg) in segs.iter().enumerate().take(2) {
            if j > 0 {
                node.all_count += 1;
                node.all_bytes += size;
            }
            if visible_below[j] {
                node.vis_count += 1;
                node.vis_bytes += size;
            }
            node = node.children.entry(Name(seg.to_string())).or_default();
        }
        if segs.len() <= 2 {
            node.memory = Some(size);
        } else {
            node.all_count += 1;
            node.all_bytes += size;
            if visible_below[2] {
                node.vis_count += 1;
                node.vis_bytes += size;
            }
        }
    }
    root
}
