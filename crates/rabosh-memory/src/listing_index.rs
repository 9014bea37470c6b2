//! The listing index: one aggregated directory tree per scope, kept current by every commit, so a
//! directory view costs the entries it shows (depth 1 and 2) and never the content below them.

use crate::Result;
use crate::backend::{ReadView, WriteOp};
use crate::keys::{hidden, parse, segments};
use crate::listing::try_scan;
use crate::meta::MemMeta;
use crate::tree::{Entry, Name};

/// One scope's tree, valid for the backend state at `seq`.
#[derive(Debug, Clone)]
pub(crate) struct ScopeIndex {
    pub seq: u64,
    pub root: Entry,
}

/// What one commit did to one key: Some(size) for a put, None for a delete.
pub(crate) type Change = (Vec<u8>, Option<u64>);

/// What each staged op does to a listing.
pub(crate) fn changes(ops: &[WriteOp]) -> Result<Vec<Change>> {
    // Only memory keys carry a MemMeta; history records (`h:` keys) are not listed.
    let memory_key = |op: &&WriteOp| match op {
        WriteOp::Put { key, .. } | WriteOp::Delete { key } => key.starts_with(b"m:"),
    };
    ops.iter()
        .filter(memory_key)
        .map(|op| match op {
            WriteOp::Put { key, meta, .. } => Ok((key.clone(), Some(MemMeta::decode(key, meta)?.size))),
            WriteOp::Delete { key } => Ok((key.clone(), None)),
        })
        .collect()
}

impl ScopeIndex {
    /// Built from a metadata scan of `view` (at `seq`), so enabling the index on an existing
    /// store needs no migration.
    pub fn build(view: &dyn ReadView, seq: u64, scope: &str) -> Result<ScopeIndex> {
        let mut index = ScopeIndex { seq, root: Entry::default() };
        let prefix = crate::keys::subtree_prefix(scope, crate::ROOT);
        try_scan(view, &prefix, &mut |key, meta| {
            if let Some((_, path)) = parse(key) {
                index.put(path, MemMeta::decode(key, meta)?.size);
            }
            Ok(())
        })?;
        repack(&mut index.root);
        Ok(index)
    }

    /// Applies the changes of one commit that belong to `scope` and moves the index to `seq`.
    pub fn apply(&mut self, scope: &str, changes: &[Change], seq: u64) {
        for (key, size) in changes {
            let Some((s, path)) = parse(key) else {
                continue;
            };
            if s != scope || !path.starts_with("/memories/") {
                continue;
            }
            match size {
                Some(size) => self.put(path, *size),
                None => {
                    self.remove(path);
                }
            }
        }
        self.seq = seq;
    }

    /// The node of the directory at `path`, counting the nodes walked.
    pub fn find(&self, path: &str, visited: &mut u64) -> Option<&Entry> {
        let mut node = &self.root;
        for seg in segments(path) {
            *visited += 1;
            node = node.children.get(&Name(seg.to_string()))?;
        }
        Some(node)
    }

    fn put(&mut self, path: &str, size: u64) {
        self.remove(path);
        let segs = segments(path);
        let visible_below = visible_below(&segs);
        let mut node = &mut self.root;
        for (j, seg) in segs.iter().enumerate() {
            node.count_below(size, visible_below[j]);
            node = node.children.entry(Name(seg.to_string())).or_default();
        }
        node.memory = Some(size);
    }

    /// Removes the memory at `path`, pruning names nothing is left under; returns its size.
    fn remove(&mut self, path: &str) -> Option<u64> {
        let segs = segments(path);
        let visible_below = visible_below(&segs);
        remove_at(&mut self.root, &segs, &visible_below, 0)
    }
}

/// Rebuilds every directory's map in bulk. Built by inserts in key order, a B-tree leaves each
/// node it splits half empty; collected from sorted entries it fills them, about half the
/// memory of an index whose directories are large. The old nodes are freed before the new ones
/// are allocated (same size), so the rebuild reuses them.
fn repack(node: &mut Entry) {
    let children: Vec<(Name, Entry)> = std::mem::take(&mut node.children).into_iter().collect();
    node.children = children
        .into_iter()
        .map(|(name, mut child)| {
            repack(&mut child);
            (name, child)
        })
        .collect();
}

/// visible_below[j]: the memory's path below node j (segments j..) has no hidden segment.
/// `v[j]`: no hidden segment among `segs[j..]`, i.e. the memory is visible from the node at depth j.
pub(crate) fn visible_below(segs: &[&str]) -> Vec<bool> {
    let mut v = vec![true; segs.len() + 1];
    for j in (0..segs.len()).rev() {
        v[j] = v[j + 1] && !hidden(segs[j]);
    }
    v
}

fn remove_at(node: &mut Entry, segs: &[&str], visible_below: &[bool], j: usize) -> Option<u64> {
    if j == segs.len() {
        return node.memory.take();
    }
    let name = Name(segs[j].to_string());
    let child = node.children.get_mut(&name)?;
    let size = remove_at(child, segs, visible_below, j + 1)?;
    if child.memory.is_none() && child.all_count == 0 {
        node.children.remove(&name);
    }
    node.all_count -= 1;
    node.all_bytes -= size;
    if visible_below[j] {
        node.vis_count -= 1;
        node.vis_bytes -= size;
    }
    Some(size)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bulk rebuild changes how the maps are laid out, never what they hold, and the index
    /// keeps updating the same way afterwards.
    #[test]
    fn repack_keeps_every_count_and_later_updates_agree() {
        let path = |i: u32| match i % 4 {
            0 => format!("/memories/d{}/n{i}.md", i % 7),
            1 => format!("/memories/d{}/.h{}/n{i}.md", i % 5, i % 3),
            2 => format!("/memories/n{i}.md"),
            _ => format!("/memories/d{}/e{}/f{}/n{i}.md", i % 3, i % 11, i % 2),
        };
        let mut plain = ScopeIndex { seq: 0, root: Entry::default() };
        for i in 0..3000 {
            plain.put(&path(i), i as u64 * 7 % 1000);
        }
        let mut packed = plain.clone();
        repack(&mut packed.root);
        assert_eq!(packed.root, plain.root);
        for i in (0..3000).step_by(3) {
            assert_eq!(packed.remove(&path(i)), plain.remove(&path(i)));
        }
        for i in 3000..3500 {
            packed.put(&path(i), 5);
            plain.put(&path(i), 5);
        }
        assert_eq!(packed.root, plain.root);
    }
}
