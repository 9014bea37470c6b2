//! The aggregated directory node both listings answer from: the scan builds one fresh (two levels
//! deep) for each view, the listing index keeps a whole tree current across commits.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use crate::DirEntry;
use crate::keys::hidden;

/// A path segment ordered by UTF-16 code units (JavaScript's string order), which differs from
/// UTF-8 byte order for characters above U+FFFF (U+1F600 sorts before U+FF5E here).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Name(pub String);

impl Ord for Name {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.encode_utf16().cmp(other.0.encode_utf16())
    }
}

impl PartialOrd for Name {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// One name under a directory. "Visible" counts are relative to this node: memories below it whose
/// path below it has no hidden segment. A hidden name of its own is the parent's business.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Entry {
    /// Size of the memory at exactly this path.
    pub memory: Option<u64>,
    pub vis_bytes: u64,
    pub vis_count: u64,
    /// Every memory strictly below, hidden ones included.
    pub all_bytes: u64,
    pub all_count: u64,
    pub children: BTreeMap<Name, Entry>,
}

impl Entry {
    /// Counts a memory of `size` strictly below this node; `visible`: its path below this node
    /// has no hidden segment.
    /// Whether a listing of this directory may print more than `max` lines (each name at depth 1
    /// and 2 prints at most two: its memory and its directory), looking at no more names than it
    /// needs to.
    pub(crate) fn listing_lines_exceed(&self, max: u64) -> bool {
        let mut lines = 0u64;
        for child in self.children.values() {
            lines += 2 + 2 * child.children.len() as u64;
            if lines > max {
                return true;
            }
        }
        false
    }

    pub(crate) fn count_below(&mut self, size: u64, visible: bool) {
        self.all_count += 1;
        self.all_bytes += size;
        if visible {
            self.vis_count += 1;
            self.vis_bytes += size;
        }
    }
}

/// The depth-1 and depth-2 entries of a directory view, depth first, in UTF-16 name order.
/// Adds the nodes it looks at to `visited`, so tests can bound the work.
pub(crate) fn emit(dir: &Entry, visited: &mut u64) -> Vec<DirEntry> {
    let mut out = Vec::new();
    for (Name(name), child) in &dir.children {
        *visited += 1;
        if hidden(name) {
            continue;
        }
        if let Some(size) = child.memory {
            out.push(DirEntry { rel: name.clone(), size, is_dir: false });
        }
        if child.vis_count == 0 {
            continue;
        }
        out.push(DirEntry { rel: name.clone(), size: child.vis_bytes, is_dir: true });
        for (Name(name2), grandchild) in &child.children {
            *visited += 1;
            if hidden(name2) {
                continue;
            }
            let rel = format!("{name}/{name2}");
            if let Some(size) = grandchild.memory {
                out.push(DirEntry { rel: rel.clone(), size, is_dir: false });
            }
            if grandchild.vis_count > 0 {
                out.push(DirEntry { rel, size: grandchild.vis_bytes, is_dir: true });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf16_order_differs_from_utf8() {
        let astral = Name("\u{1F600}".into());
        let bmp = Name("\u{FF5E}".into());
        assert!(astral < bmp);
        assert!(astral.0.as_bytes() > bmp.0.as_bytes());
        assert!(Name("a".into()) < Name("a.md".into()));
        assert!(Name("B".into()) < Name("a".into()));
    }
}
