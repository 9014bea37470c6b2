//! Whole-scope export and import, for moving memories to and from plain files. Unlike a view,
//! an export sees hidden memories too; an import is one commit however many files it carries.

use std::collections::BTreeSet;

use crate::commands::read;
use crate::keys::{check_normalised, parse, subtree_prefix};
use crate::listing::try_scan;
use crate::meta::MemMeta;
use crate::{Memories, ROOT, Result};

/// One memory as it leaves the store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryRecord {
    pub path: String,
    pub content: String,
    pub created_ms: i64,
    pub updated_ms: i64,
}

/// What an import did. Refusals name the first offending path; nothing is written then.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Import {
    Imported {
        memories: u64,
        bytes: u64,
    },
    /// The path is the root, or a memory exists there and overwriting is off.
    Exists {
        path: String,
    },
    /// Two inputs name the same memory.
    Duplicate {
        path: String,
    },
    TooLarge {
        path: String,
        limit: u64,
    },
}

impl Memories {
    /// Every memory of the scope, hidden ones included, at one snapshot, in key order.
    pub fn export_all(&self) -> Result<Vec<MemoryRecord>> {
        let view = self.backend.read()?;
        let prefix = subtree_prefix(&self.options.scope, ROOT);
        let mut out = Vec::new();
        try_scan(&*view, &prefix, &mut |key, meta| {
            let Some((_, path)) = parse(key) else { return Ok(()) };
            let meta = MemMeta::decode(key, meta)?;
            out.push(MemoryRecord {
                path: path.to_string(),
                content: read(&*view, key)?,
                created_ms: meta.created_ms,
                updated_ms: meta.updated_ms,
            });
            Ok(())
        })?;
        Ok(out)
    }

    /// Writes every `(path, content)` in ONE commit, or nothing. Paths must be normalised.
    pub fn import_all(&self, files: &[(String, String)], overwrite: bool) -> Result<Import> {
        let limit = self.options.max_memory_bytes;
        let mut seen = BTreeSet::new();
        for (path, content) in files {
            check_normalised(path)?;
            if path == ROOT {
                return Ok(Import::Exists { path: path.clone() });
            }
            if !seen.insert(path.as_str()) {
                return Ok(Import::Duplicate { path: path.clone() });
            }
            if content.len() as u64 > limit {
                return Ok(Import::TooLarge { path: path.clone(), limit });
            }
        }
        let now = self.clock.now_ms();
        self.transact(|view, ws| {
            let mut bytes = 0;
            for (path, content) in files {
                let key = self.key(path);
                let old = MemMeta::stored(view, &key)?;
                if old.is_some() && !overwrite {
                    ws.clear();
                    return Ok(Import::Exists { path: path.clone() });
                }
                let meta = match old {
                    Some(m) => MemMeta::rewritten(content, m, now),
                    None => MemMeta::for_content(content, now, now, 0),
                };
                ws.write(key, content.as_bytes().to_vec(), meta, old.as_ref());
                bytes += content.len() as u64;
            }
            Ok(Import::Imported { memories: files.len() as u64, bytes })
        })
    }
}
