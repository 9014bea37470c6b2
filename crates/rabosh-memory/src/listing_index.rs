//! The listing index: one aggregated directory tree per scope, kept current by every commit, so a
//! directory view costs the entries it shows (depth 1 and 2) and never the content below them.

use crate::Result;
use crate::backend::ReadView;
use crate::keys::{parse, scope_prefix, segments};
use crate::listing::try_scan;
use crate::listing_delta::SizeChange;
use crate::meta::MemMeta;
use crate::tree::{Dir, utf16_cmp};

/// One scope's tree, valid for the backend state at `seq`.
#[derive(Debug, Clone)]
pub(crate) struct ScopeIndex {
    pub seq: u64,
    pub root: Dir,
}

impl ScopeIndex {
    /// Built from a metadata scan of `view` (at `seq`), so enabling the index on an existing
    /// store needs no migration.
    pub fn build(view: &dyn ReadView, seq: u64, scope: &str) -> Result<ScopeIndex> {
        let mut root = Dir::default();
        let prefix = crate::keys::subtree_prefix(scope, crate::ROOT);
        try_scan(view, &prefix, &mut |key, meta| {
            if let Some((_, path)) = parse(key) {
                root.add(&segments(path), MemMeta::decode(key, meta)?.size, usize::MAX);
            }
            Ok(())
        })?;
        // Tables grown by doubling keep up to half their room unused: a built index is mostly
        // read, so it gives that back once.
        root.shrink();
        Ok(ScopeIndex { seq, root })
    }

    /// Applies the changes of one commit (in key order) that belong to `scope` and moves the
    /// index to `seq`.
    pub fn apply(&mut self, scope: &str, changes: &[SizeChange], seq: u64) {
        // The scope is matched as bytes; only the path needs decoding.
        let head = scope_prefix(scope);
        let mut mine = changes.iter().filter_map(|c| {
            let path = std::str::from_utf8(c.key.strip_prefix(head.as_slice())?).ok()?;
            path.starts_with("/memories/").then_some((path, c.after))
        });
        let mut next = mine.next();
        while let Some((path, size)) = next {
            next = mine.next();
            let segs = segments(path);
            if let Some(size) = size {
                self.root.remove(&segs);
                self.root.add(&segs, size, usize::MAX);
                continue;
            }
            // A run of deletes in one directory (a deleted subtree's keys are in key order, so a
            // directory's are together) is removed in one walk and one pass over its files.
            let (dir, name) = path.rsplit_once('/').expect("a path below /memories/ has a slash");
            let mut names = vec![name];
            while let Some((p, None)) = next {
                match p.strip_prefix(dir).and_then(|rest| rest.strip_prefix('/')) {
                    Some(n) if !n.contains('/') => names.push(n),
                    _ => break,
                }
                next = mine.next();
            }
            names.sort_by(|a, b| utf16_cmp(a, b));
            names.dedup();
            self.root.remove_many(&segs[..segs.len() - 1], &mut names);
        }
        self.seq = seq;
    }

    /// The node of the directory at `path`, counting the nodes walked.
    pub fn find(&self, path: &str, visited: &mut u64) -> Option<&Dir> {
        self.root.find(&segments(path), visited)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use proptest::prelude::*;

    use super::*;
    use crate::tree::emit;

    /// Paths where one name is a memory and a directory at once, hidden names, and enough
    /// names in one directory for its arena to be repacked.
    fn path() -> impl Strategy<Value = String> {
        let seg = prop_oneof![
            Just("a".to_string()),
            Just("b.md".to_string()),
            Just(".h".to_string()),
            Just("node_modules".to_string()),
            Just("\u{1F600}".to_string()),
            Just("\u{FF5E}".to_string()),
            (0..40u32).prop_map(|i| format!("n{i}.md")),
        ];
        prop::collection::vec(seg, 1..4).prop_map(|segs| format!("/memories/{}", segs.join("/")))
    }

    fn from_scratch(model: &BTreeMap<String, u64>) -> Dir {
        let mut root = Dir::default();
        for (path, size) in model {
            root.add(&segments(path), *size, usize::MAX);
        }
        root.shrink();
        root
    }

    fn change(path: &str, before: Option<u64>, after: Option<u64>) -> SizeChange {
        SizeChange { key: format!("m:s:{path}").into_bytes(), before, after }
    }

    proptest! {
        /// Kept current commit by commit (names becoming directories and files again, arenas
        /// repacked), the index is the tree a build from scratch makes, and every directory
        /// lists as a fresh two-level scan of it would.
        #[test]
        fn updates_agree_with_a_build_from_scratch(
            commits in prop::collection::vec(prop::collection::vec(
                (path(), prop::option::of(0..1000u64), any::<bool>()), 1..20), 1..12)
        ) {
            let mut model = BTreeMap::new();
            let mut index = ScopeIndex { seq: 0, root: Dir::default() };
            for (n, commit) in commits.iter().enumerate() {
                let mut changes = Vec::new();
                for (path, size, subtree) in commit {
                    if *subtree && size.is_none() {
                        // A recursive delete: the memory and everything under it, in key order.
                        let under = format!("{path}/");
                        let doomed: Vec<String> = model
                            .keys()
                            .filter(|p: &&String| *p == path || p.starts_with(&under))
                            .cloned()
                            .collect();
                        for p in doomed {
                            let before = model.remove(&p);
                            changes.push(change(&p, before, None));
                        }
                        continue;
                    }
                    let before = match size {
                        Some(size) => model.insert(path.clone(), *size),
                        None => model.remove(path),
                    };
                    changes.push(change(path, before, *size));
                }
                // Another scope's change in the same commit leaves this scope's index alone.
                changes.push(SizeChange { key: b"m:t:/memories/a".to_vec(), before: None, after: Some(3) });
                index.apply("s", &changes, n as u64 + 1);
                prop_assert_eq!(&index.root, &from_scratch(&model));
            }
            let dirs: Vec<String> = model
                .keys()
                .flat_map(|p| {
                    let segs = segments(p);
                    (0..segs.len()).map(move |d| segs[..d].join("/"))
                })
                .collect();
            for dir in dirs {
                let path = if dir.is_empty() { "/memories".to_string() } else { format!("/memories/{dir}") };
                let mut scanned = Dir::default();
                for (p, size) in model.range(format!("{path}/")..) {
                    let Some(rel) = p.strip_prefix(&format!("{path}/")) else { break };
                    scanned.add(&rel.split('/').collect::<Vec<_>>(), *size, 2);
                }
                let node = index.find(&path, &mut 0).expect("a directory with memories below");
                prop_assert_eq!((node.vis_count, node.vis_bytes), (scanned.vis_count, scanned.vis_bytes));
                prop_assert_eq!(emit(node, &mut 0), emit(&scanned, &mut 0));
            }
        }
    }
}
