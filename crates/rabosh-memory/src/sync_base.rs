//! The seam the hosted-store sync (issue 22, TypeScript `src/sync/`) needs from the memory crate:
//! a commit that applies several host edits, each with its content-hash precondition, together
//! with the sync's durable base records, so a kill mid-sync never leaves the pulled data and the
//! base that describes it apart; a listing of the scope's memories with their hashes and ids;
//! and a read of the base records.
//!
//! Base records live under `s:{scope}:{tag}` (tag chosen by the caller; the sync uses the
//! memory-store id, the mapped prefix and the remote memory id). Their bytes are opaque here and
//! kept as the key's metadata with an empty value, so reading them all is a metadata scan. They
//! are not memories: no listing, usage, export or history sees them.

use std::ops::ControlFlow;

use crate::commands::read;
use crate::history::{Actor, hex, sha256};
use crate::keys::{check_normalised, parse, segments, subtree_prefix};
use crate::listing::try_scan;
use crate::meta::MemMeta;
use crate::{Memories, ROOT, ReadView, Result};

/// One local change of a sync commit. `if_match`: the hex SHA-256 the memory must hold now
/// (None: must be absent, for `Put`; anything, for `Remove`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SyncOp {
    Put {
        path: String,
        content: String,
        if_match: Option<String>,
    },
    Remove {
        path: String,
        if_match: String,
    },
    /// Moves the memory at `from` (holding `if_match`) to `to`, which must be free.
    Move {
        from: String,
        to: String,
        if_match: String,
    },
}

/// A base record to write (`value` Some) or delete (None), if the record now holds `expect`
/// (None: absent).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BaseWrite {
    pub tag: String,
    pub value: Option<Vec<u8>>,
    pub expect: Option<Vec<u8>>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SyncApply {
    /// Everything was committed in one commit (or nothing needed writing).
    Applied { version_ids: Vec<u128> },
    /// Nothing was written: op `index` found the memory at `current` (hex; None: absent).
    OpRefused { index: usize, current: Option<String> },
    /// Nothing was written: op `index` would put a memory above or below another one.
    PathConflict { index: usize, path: String },
    /// Nothing was written: op `index` is larger than the handler's `max_memory_bytes`.
    TooLarge { index: usize, limit: u64 },
    /// Nothing was written: base record `index` did not hold what the caller expected.
    BaseChanged { index: usize },
}

/// A memory of the scope as the sync compares it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncEntry {
    pub path: String,
    pub sha256: [u8; 32],
    pub size: u64,
    pub memory_id: Option<u128>,
    pub version_id: Option<u128>,
}

fn base_prefix(scope: &str) -> String {
    format!("s:{scope}:")
}

impl Memories {
    /// Every memory at or below `dir` (hidden ones included) with its hash, at one snapshot.
    pub fn sync_entries(&self, dir: &str) -> Result<Vec<SyncEntry>> {
        check_normalised(dir)?;
        let view = self.backend.read()?;
        let mut out = Vec::new();
        let mut visit = |key: &[u8], meta: &[u8]| -> Result<()> {
            let Some((_, path)) = parse(key) else { return Ok(()) };
            let m = MemMeta::decode(key, meta)?;
            out.push(SyncEntry {
                path: path.to_string(),
                sha256: sha256(read(&*view, key)?.as_bytes()),
                size: m.size,
                memory_id: m.memory_id,
                version_id: m.version_id,
            });
            Ok(())
        };
        if dir != ROOT {
            let key = self.key(dir);
            if let Some(meta) = view.meta(&key)? {
                visit(&key, &meta)?;
            }
        }
        try_scan(&*view, &subtree_prefix(&self.options.scope, dir), &mut visit)?;
        Ok(out)
    }

    /// Every base record whose tag starts with `tag_prefix`: `(tag, bytes)` in tag order.
    pub fn sync_bases(&self, tag_prefix: &str) -> Result<Vec<(String, Vec<u8>)>> {
        let view = self.backend.read()?;
        let head = base_prefix(&self.options.scope);
        let mut out = Vec::new();
        view.scan_prefix(format!("{head}{tag_prefix}").as_bytes(), &mut |key, meta| {
            let tag = String::from_utf8_lossy(&key[head.len()..]).into_owned();
            out.push((tag, meta.to_vec()));
            ControlFlow::Continue(())
        })?;
        Ok(out)
    }

    /// Applies `ops` and `bases` in ONE commit, each precondition decided inside it, or nothing.
    /// Versions are recorded with `actor` (else the handler's own). An op whose result already
    /// holds (the content is there, the memory is gone, the move is done) is not refused: the
    /// sync may retry a commit another process already made.
    pub fn sync_apply(&self, ops: &[SyncOp], bases: &[BaseWrite], actor: Option<Actor>) -> Result<SyncApply> {
        let limit = self.options.max_memory_bytes;
        for (index, op) in ops.iter().enumerate() {
            match op {
                SyncOp::Put { path, content, .. } => {
                    check_normalised(path)?;
                    if content.len() as u64 > limit {
                        return Ok(SyncApply::TooLarge { index, limit });
                    }
                }
                SyncOp::Remove { path, .. } => check_normalised(path)?,
                SyncOp::Move { from, to, .. } => {
                    check_normalised(from)?;
                    check_normalised(to)?;
                }
            }
            if matches!(op, SyncOp::Put { path, .. } | SyncOp::Remove { path, .. } if path == ROOT) {
                return Ok(SyncApply::PathConflict { index, path: ROOT.into() });
            }
        }
        let recorder;
        let me = match actor {
            Some(a) => {
                a.check()?;
                recorder = Memories {
                    backend: self.backend.clone(),
                    options: self.options.clone(),
                    clock: self.clock.clone(),
                    history: self.history,
                    history_seen_on: std::sync::atomic::AtomicBool::new(
                        self.history_seen_on.load(std::sync::atomic::Ordering::Relaxed),
                    ),
                    actor: Some(a),
                };
                &recorder
            }
            None => self,
        };
        let head = base_prefix(&self.options.scope);
        let (outcome, ids) = me.transact_recorded(|view, ws| {
            let refused = me.stage_sync(view, ws, ops);
            if !matches!(refused, Ok(None)) {
                ws.clear();
                return refused.map(|r| r.expect("a refusal"));
            }
            for (index, b) in bases.iter().enumerate() {
                let key = format!("{head}{}", b.tag).into_bytes();
                if view.meta(&key)? != b.expect {
                    ws.clear();
                    return Ok(SyncApply::BaseChanged { index });
                }
                match &b.value {
                    Some(v) => ws.put(key, Vec::new(), v.clone()),
                    None => ws.delete(key),
                }
            }
            Ok(SyncApply::Applied { version_ids: Vec::new() })
        })?;
        Ok(match outcome {
            SyncApply::Applied { .. } => SyncApply::Applied { version_ids: ids },
            other => other,
        })
    }

    /// Stages `ops` on `view`; Some(refusal) when one cannot apply.
    fn stage_sync(&self, view: &dyn ReadView, ws: &mut crate::WriteSet, ops: &[SyncOp]) -> Result<Option<SyncApply>> {
        let now = self.clock.now_ms();
        for (index, op) in ops.iter().enumerate() {
            match op {
                SyncOp::Put { path, content, if_match } => {
                    let key = self.key(path);
                    let old = MemMeta::stored(view, &key)?;
                    let meta = match old {
                        Some(old) => {
                            let current = hex(&sha256(read(view, &key)?.as_bytes()));
                            if current == hex(&sha256(content.as_bytes())) {
                                continue;
                            }
                            if if_match.as_deref() != Some(current.as_str()) {
                                return Ok(Some(SyncApply::OpRefused { index, current: Some(current) }));
                            }
                            MemMeta::rewritten(content, old, now)
                        }
                        None if if_match.is_some() => return Ok(Some(SyncApply::OpRefused { index, current: None })),
                        None => {
                            if let Some(p) = self.overlap(view, path)? {
                                return Ok(Some(SyncApply::PathConflict { index, path: p }));
                            }
                            MemMeta::for_content(content, now, now, 0)
                        }
                    };
                    ws.write(key, content.as_bytes().to_vec(), meta, old.as_ref());
                }
                SyncOp::Remove { path, if_match } => {
                    let key = self.key(path);
                    let Some(old) = MemMeta::stored(view, &key)? else {
                        continue;
                    };
                    let current = hex(&sha256(read(view, &key)?.as_bytes()));
                    if current != *if_match {
                        return Ok(Some(SyncApply::OpRefused { index, current: Some(current) }));
                    }
                    ws.remove(key, &old);
                }
                SyncOp::Move { from, to, if_match } => {
                    let (src, dst) = (self.key(from), self.key(to));
                    let Some(meta) = view.meta(&src)? else {
                        // Done already (by another process) when the destination holds the content.
                        let there = match view.meta(&dst)? {
                            Some(_) => Some(hex(&sha256(read(view, &dst)?.as_bytes()))),
                            None => None,
                        };
                        if there.as_deref() == Some(if_match.as_str()) {
                            continue;
                        }
                        return Ok(Some(SyncApply::OpRefused { index, current: None }));
                    };
                    let content = read(view, &src)?;
                    let current = hex(&sha256(content.as_bytes()));
                    if current != *if_match {
                        return Ok(Some(SyncApply::OpRefused { index, current: Some(current) }));
                    }
                    if view.meta(&dst)?.is_some() {
                        return Ok(Some(SyncApply::PathConflict { index, path: to.clone() }));
                    }
                    if let Some(p) = self.overlap(view, to)?.filter(|p| p != from) {
                        return Ok(Some(SyncApply::PathConflict { index, path: p }));
                    }
                    let moved = MemMeta { updated_ms: now, ..MemMeta::decode(&src, &meta)? };
                    ws.moved(src, dst, content.into_bytes(), moved);
                }
            }
        }
        Ok(None)
    }

    /// A memory that is an ancestor of `path`, or the first one below it (a path may not be both
    /// a memory and a directory).
    fn overlap(&self, view: &dyn ReadView, path: &str) -> Result<Option<String>> {
        let segs = segments(path);
        let mut ancestor = String::from(ROOT);
        for s in &segs[..segs.len().saturating_sub(1)] {
            ancestor.push('/');
            ancestor.push_str(s);
            if view.meta(&self.key(&ancestor))?.is_some() {
                return Ok(Some(ancestor));
            }
        }
        let mut below = None;
        view.scan_prefix(&subtree_prefix(&self.options.scope, path), &mut |key, _| {
            below = parse(key).map(|(_, p)| p.to_string());
            ControlFlow::Break(())
        })?;
        Ok(below)
    }
}
