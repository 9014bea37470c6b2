//! One page of a scope's memories in path order, from their metadata alone (no content is read):
//! for a host that lists a scope too large to list at once, such as an MCP server's
//! `resources/list`, or searches it by path, such as the inspector's filter. A page resumes after
//! the last path of the one before it, so a memory written or removed between two pages moves no
//! other memory to another page.

use std::ops::ControlFlow;

use crate::keys::{check_normalised, parse, subtree_prefix};
use crate::meta::MemMeta;
use crate::{Error, Memories, ROOT, Result};

/// A memory as a listing shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedMemory {
    pub path: String,
    /// Its content in UTF-8 bytes.
    pub size: u64,
    pub updated_ms: i64,
}

/// Up to `limit` memories, and whether any follow the last of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryPage {
    pub memories: Vec<ListedMemory>,
    pub more: bool,
}

impl Memories {
    /// The first `limit` memories of the scope (hidden ones included) whose path sorts after
    /// `after` (None: from the first) and contains `contains` compared in lower case (empty: every
    /// path), in byte order of the path, at one snapshot. `after` need not name a memory that
    /// still exists. The keys are read in order either way, so a search that matches little reads
    /// the scope's keys (never content) up to its last match; a backend may leave out keys that
    /// cannot match before they reach this process (`ReadView::scan_prefix_after_containing`).
    pub fn list_page(&self, after: Option<&str>, limit: usize, contains: &str) -> Result<MemoryPage> {
        if let Some(a) = after {
            check_normalised(a)?;
        }
        let needle = contains.to_lowercase();
        let view = self.backend.read_deferred()?;
        let after = after.map(|a| self.key(a));
        let mut memories = Vec::new();
        let mut more = false;
        let mut failed: Option<Error> = None;
        let prefix = subtree_prefix(&self.options.scope, ROOT);
        let mut visit = |key: &[u8], meta: &[u8]| {
            let Some((_, path)) = parse(key) else { return ControlFlow::Continue(()) };
            if !needle.is_empty() && !path.to_lowercase().contains(&needle) {
                return ControlFlow::Continue(());
            }
            if memories.len() == limit {
                more = true;
                return ControlFlow::Break(());
            }
            match MemMeta::decode(key, meta) {
                Ok(m) => {
                    memories.push(ListedMemory { path: path.to_string(), size: m.size, updated_ms: m.updated_ms });
                    ControlFlow::Continue(())
                }
                Err(e) => {
                    failed = Some(e);
                    ControlFlow::Break(())
                }
            }
        };
        if needle.is_empty() {
            view.scan_prefix_after(&prefix, after.as_deref(), &mut visit)?;
        } else {
            view.scan_prefix_after_containing(&prefix, after.as_deref(), &needle, &mut visit)?;
        }
        failed.map_or(Ok(MemoryPage { memories, more }), Err)
    }
}
