//! Directory listing by a metadata scan of the viewed directory's key range: reads no values.
//! This is the default every backend gets; the engine backend's listing index gives the same.

use std::ops::ControlFlow;

use crate::backend::{DirSummary, ReadView};
use crate::keys::subtree_prefix;
use crate::meta::MemMeta;
use crate::tree::{Dir, emit};
use crate::{Error, ROOT, Result, Usage};

/// Called with each `(key, meta)` of a fallible scan.
pub(crate) type TryVisit<'a> = dyn FnMut(&[u8], &[u8]) -> Result<()> + 'a;

/// `visit(key, meta)` for every key under `prefix`, stopping at the first error it returns.
pub(crate) fn try_scan<V: ReadView + ?Sized>(view: &V, prefix: &[u8], visit: &mut TryVisit<'_>) -> Result<()> {
    let mut failed: Option<Error> = None;
    view.scan_prefix(prefix, &mut |key, meta| match visit(key, meta) {
        Ok(()) => ControlFlow::Continue(()),
        Err(e) => {
            failed = Some(e);
            ControlFlow::Break(())
        }
    })?;
    failed.map_or(Ok(()), Err)
}

/// The default [`ReadView::usage`]: every memory of `scope`, hidden ones included, by a scan.
pub(crate) fn scan_usage<V: ReadView + ?Sized>(view: &V, scope: &str) -> Result<Usage> {
    let mut usage = Usage::default();
    try_scan(view, &subtree_prefix(scope, ROOT), &mut |key, meta| {
        usage.memories += 1;
        usage.bytes += MemMeta::decode(key, meta)?.size;
        Ok(())
    })?;
    Ok(usage)
}

/// The viewed directory as a node two levels deep: deeper content only feeds the aggregates.
pub(crate) fn scan_dir<V: ReadView + ?Sized>(view: &V, scope: &str, dir: &str) -> Result<Dir> {
    let prefix = subtree_prefix(scope, dir);
    let mut root = Dir::default();
    try_scan(view, &prefix, &mut |key, meta| {
        let size = MemMeta::decode(key, meta)?.size;
        let Ok(rel) = std::str::from_utf8(&key[prefix.len()..]) else {
            return Ok(());
        };
        let segs: Vec<&str> = rel.split('/').collect();
        root.add(&segs, size, 2);
        Ok(())
    })?;
    Ok(root)
}

/// A directory's summary from a node of either listing; adds the nodes looked at to `visited`.
pub(crate) fn summarise(node: Option<&Dir>, visited: &mut u64) -> DirSummary {
    match node {
        Some(node) if node.vis_count > 0 => {
            DirSummary { memories: node.vis_count, bytes: node.vis_bytes, entries: emit(node, visited) }
        }
        _ => DirSummary::default(),
    }
}

/// The default [`ReadView::dir_summary`]: a scan of the directory's key range.
pub(crate) fn scan_summary<V: ReadView + ?Sized>(view: &V, scope: &str, dir: &str) -> Result<DirSummary> {
    Ok(summarise(Some(&scan_dir(view, scope, dir)?), &mut 0))
}
