//! A scope read a page at a time, for tools that look into it (the inspector) or copy it out (a
//! streaming export): one directory's children with their sizes, and the memories with their
//! content from a cursor on. Unlike a view, each sees hidden memories too. Children read metadata
//! only, never a memory's content. (A search over paths is a filtered listing: `page.rs`.)

use std::collections::BTreeMap;
use std::ops::ControlFlow;

use crate::backend::ReadView;
use crate::bulk::MemoryRecord;
use crate::commands::read;
use crate::keys::{check_normalised, key, parse, subtree_prefix};
use crate::listing::try_scan;
use crate::meta::MemMeta;
use crate::{Error, Memories, ROOT, Result};

/// One name directly under a directory.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Child {
    pub name: String,
    /// The size of the memory at exactly this name, if one is there.
    pub memory: Option<u64>,
    /// Memories strictly below this name (hidden ones included): more than zero for a directory.
    pub memories: u64,
    /// Their content in UTF-8 bytes.
    pub bytes: u64,
}

/// A page of a directory's children, in byte order of their names.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Children {
    /// Memories strictly below the directory, hidden ones included, and their bytes.
    pub memories: u64,
    pub bytes: u64,
    /// How many names the directory holds in all pages.
    pub total: u64,
    pub entries: Vec<Child>,
    /// The name to pass as `after` for the next page; None on the last.
    pub next: Option<String>,
}

/// A page of memories with their content, in byte order of their paths.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExportPage {
    pub memories: Vec<MemoryRecord>,
    /// The path to pass as `after` for the next page; None on the last.
    pub next: Option<String>,
}

/// The page of `all` (every name of a directory, in byte order) after the name `after`.
fn page_of(all: Children, after: Option<&str>, limit: usize) -> Children {
    let mut rest = all.entries.into_iter().filter(|c| after.is_none_or(|a| c.name.as_str() > a));
    let entries: Vec<Child> = rest.by_ref().take(limit).collect();
    let next = match rest.next() {
        Some(_) => entries.last().map(|c| c.name.clone()),
        None => None,
    };
    Children { entries, next, ..all }
}

/// A cursor must name a path of the scope (what an earlier page answered).
fn check_cursor(after: Option<&str>) -> Result<()> {
    match after {
        Some(path) if path != ROOT => check_normalised(path),
        Some(path) => Err(Error::NotNormalised(path.to_string())),
        None => Ok(()),
    }
}

/// Every name directly under `dir` of `scope`, from a scan of its key range (metadata only).
pub(crate) fn scan_children(view: &dyn ReadView, scope: &str, dir: &str) -> Result<Children> {
    let prefix = subtree_prefix(scope, dir);
    // Names sort apart from their keys ("a.b" falls between "a" and "a/x"): gather all, then page.
    let mut names: BTreeMap<String, Child> = BTreeMap::new();
    let (mut memories, mut bytes) = (0, 0);
    try_scan(view, &prefix, &mut |k, meta| {
        let size = MemMeta::decode(k, meta)?.size;
        let Ok(rel) = std::str::from_utf8(&k[prefix.len()..]) else { return Ok(()) };
        memories += 1;
        bytes += size;
        let (name, below) = match rel.split_once('/') {
            Some((name, _)) => (name, true),
            None => (rel, false),
        };
        if !names.contains_key(name) {
            names.insert(name.to_string(), Child { name: name.to_string(), ..Child::default() });
        }
        let child = names.get_mut(name).expect("inserted above");
        if below {
            child.memories += 1;
            child.bytes += size;
        } else {
            child.memory = Some(size);
        }
        Ok(())
    })?;
    let entries: Vec<Child> = names.into_values().collect();
    Ok(Children { memories, bytes, total: entries.len() as u64, entries, next: None })
}

impl Memories {
    /// The names directly under `dir`, after the name `after`, at most `limit` (at least one),
    /// each with the size of its memory and what lies below it. Reads the directory's key range
    /// (metadata only, no content); a directory with nothing below it is empty, not an error.
    pub fn children(&self, dir: &str, after: Option<&str>, limit: usize) -> Result<Children> {
        check_normalised(dir)?;
        let view = self.backend.read()?;
        let scope = &self.options.scope;
        // The store's per-directory totals, when current, answer without reading below `dir`.
        let all = match view.dir_children(scope, dir)? {
            Some(all) => all,
            None => scan_children(&*view, scope, dir)?,
        };
        Ok(page_of(all, after, limit.max(1)))
    }

    /// The scope's memories with their content, after the path `after`, at most `limit` (at
    /// least one), read from `view` (a pinned snapshot, so that every page sees one state) or,
    /// without one, each page from the newest state.
    pub fn export_page(&self, view: Option<&dyn ReadView>, after: Option<&str>, limit: usize) -> Result<ExportPage> {
        check_cursor(after)?;
        let fresh;
        let view = if let Some(v) = view {
            v
        } else {
            fresh = self.backend.read()?;
            &*fresh
        };
        let scope = &self.options.scope;
        let prefix = subtree_prefix(scope, ROOT);
        let after = after.map(|a| key(scope, a));
        let limit = limit.max(1);
        let mut page = ExportPage::default();
        let mut failed = None;
        view.scan_prefix_after(&prefix, after.as_deref(), &mut |k, meta| {
            let Some((_, path)) = parse(k) else { return ControlFlow::Continue(()) };
            if page.memories.len() == limit {
                page.next = page.memories.last().map(|m| m.path.clone());
                return ControlFlow::Break(());
            }
            let record = MemMeta::decode(k, meta).and_then(|m| {
                Ok(MemoryRecord {
                    path: path.to_string(),
                    content: read(view, k)?,
                    created_ms: m.created_ms,
                    updated_ms: m.updated_ms,
                })
            });
            match record {
                Ok(r) => page.memories.push(r),
                Err(e) => {
                    failed = Some(e);
                    return ControlFlow::Break(());
                }
            }
            ControlFlow::Continue(())
        })?;
        failed.map_or(Ok(page), Err)
    }
}
