//! Host edits: the application (not the model) reads and writes a memory by path, with HTTP-style
//! preconditions on the content's SHA-256, decided inside the same transaction as the write, so a
//! stale base can never clobber what the model (or another host call) just wrote. They go through
//! the same transaction hook as the commands, so they are versioned like them and seen by the
//! model's next view at once.

use crate::commands::read;
use crate::keys::check_normalised;
use crate::meta::MemMeta;
use crate::{Memories, ROOT, Result};

use super::record::{hex, sha256};

/// A memory as the host reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Current {
    pub path: String,
    pub content: String,
    pub sha256: [u8; 32],
    /// The version holding this content; None when it was written with history off.
    pub version_id: Option<u128>,
}

/// `if_match`: the hex SHA-256 the host last saw; `if_none_match_any`: only if no memory exists.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Precondition {
    pub if_match: Option<String>,
    pub if_none_match_any: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostWrite {
    Written {
        sha256: [u8; 32],
        version_id: Option<u128>,
    },
    /// The memory already held this content: nothing written, whatever the precondition said
    /// (the request's result holds, as the hosted API answers).
    Unchanged {
        sha256: [u8; 32],
        version_id: Option<u128>,
    },
    /// `current`: the memory's hash now (None: there is no memory).
    PreconditionFailed {
        current: Option<[u8; 32]>,
    },
    TooLarge {
        limit: u64,
    },
    IsRoot,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostRemove {
    Removed {
        version_id: Option<u128>,
    },
    /// Nothing there: the result already holds.
    Absent,
    PreconditionFailed {
        current: [u8; 32],
    },
    IsRoot,
}

impl Memories {
    pub fn host_get(&self, path: &str) -> Result<Option<Current>> {
        check_normalised(path)?;
        if path == ROOT {
            return Ok(None);
        }
        let key = self.key(path);
        let view = self.backend.read()?;
        let Some(meta) = MemMeta::stored(&*view, &key)? else { return Ok(None) };
        let content = read(&*view, &key)?;
        Ok(Some(Current {
            path: path.to_string(),
            sha256: sha256(content.as_bytes()),
            content,
            version_id: meta.version_id,
        }))
    }

    pub fn host_put(&self, path: &str, content: &str, pre: &Precondition) -> Result<HostWrite> {
        check_normalised(path)?;
        if path == ROOT {
            return Ok(HostWrite::IsRoot);
        }
        let limit = self.options.max_memory_bytes;
        if content.len() as u64 > limit {
            return Ok(HostWrite::TooLarge { limit });
        }
        let key = self.key(path);
        let wanted = sha256(content.as_bytes());
        let if_match = pre.if_match.as_deref().map(str::to_ascii_lowercase);
        let (outcome, ids) = self.transact_recorded(|view, ws| {
            let old = MemMeta::stored(view, &key)?;
            let now = self.clock.now_ms();
            let meta = match old {
                Some(old) => {
                    let current = sha256(read(view, &key)?.as_bytes());
                    if current == wanted {
                        return Ok(HostWrite::Unchanged { sha256: current, version_id: old.version_id });
                    }
                    if pre.if_none_match_any || if_match.as_ref().is_some_and(|m| *m != hex(&current)) {
                        return Ok(HostWrite::PreconditionFailed { current: Some(current) });
                    }
                    MemMeta::rewritten(content, old, now)
                }
                None if if_match.is_some() => return Ok(HostWrite::PreconditionFailed { current: None }),
                None => MemMeta::for_content(content, now, now, 0),
            };
            ws.write(key.clone(), content.as_bytes().to_vec(), meta, old.as_ref());
            Ok(HostWrite::Written { sha256: wanted, version_id: None })
        })?;
        Ok(match outcome {
            HostWrite::Written { sha256, .. } => HostWrite::Written { sha256, version_id: ids.first().copied() },
            other => other,
        })
    }

    /// Removes the memory at `path` only (never a directory's contents).
    pub fn host_remove(&self, path: &str, if_match: Option<&str>) -> Result<HostRemove> {
        check_normalised(path)?;
        if path == ROOT {
            return Ok(HostRemove::IsRoot);
        }
        let key = self.key(path);
        let if_match = if_match.map(str::to_ascii_lowercase);
        let (outcome, ids) = self.transact_recorded(|view, ws| {
            let Some(old) = MemMeta::stored(view, &key)? else {
                return Ok(HostRemove::Absent);
            };
            if let Some(m) = &if_match {
                let current = sha256(read(view, &key)?.as_bytes());
                if *m != hex(&current) {
                    return Ok(HostRemove::PreconditionFailed { current });
                }
            }
            ws.remove(key.clone(), &old);
            Ok(HostRemove::Removed { version_id: None })
        })?;
        Ok(match outcome {
            HostRemove::Removed { .. } => HostRemove::Removed { version_id: ids.first().copied() },
            other => other,
        })
    }
}
