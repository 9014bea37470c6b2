//! The hook every mutation goes through: [`Memories::transact`] calls it after the command's
//! body, on the same view and write set, so each change to a memory and its version record are
//! one commit — never one without the other, on every backend.
//!
//! The versions are read off what the body staged, compared with the state it decided on:
//! - a put at a key that had a memory: `modified`, unless the content is the same and only
//!   accessedAt changed (a view that records access is not a version; the old content is read
//!   only when the metadata cannot tell);
//! - a put that the command staged as a move ([`WriteSet::moved`], what `rename` does for each
//!   memory): `renamed`, carrying the moved memory's id; the move's delete records nothing;
//! - any other put at an empty key: `created`; the delete of a memory: `deleted`.
//!
//! A memory's id is the id of the first version recorded for it; every put carries it (and the
//! version id) in the memory's metadata.

use std::collections::HashSet;
use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;
use std::sync::atomic::Ordering;

use crate::backend::{ReadView, WriteOp, WriteSet};
use crate::keys::parse;
use crate::meta::MemMeta;
use crate::{Memories, Result};

use super::record::{Operation, Version, sha256, version_key};
use super::settings::{read_settings, stage_on};
use super::tally::Tally;

impl Memories {
    /// Stages a version record for each change `ws` makes to this scope's memories, and stamps
    /// the memories' metadata; returns the new versions' ids. Does nothing with history off.
    pub(crate) fn stage_versions(&self, view: &dyn ReadView, ws: &mut WriteSet) -> Result<Vec<u128>> {
        if ws.is_empty() || !self.records(view, ws)? {
            return Ok(Vec::new());
        }
        if let Some(actor) = &self.actor {
            // Built only through `with_actor`, which checks; checked again here because the
            // record's length fields would otherwise truncate silently.
            actor.check()?;
        }
        let scope = &self.options.scope;
        let mine = format!("m:{scope}:").into_bytes();
        let moves = ws.take_moves();
        let ops = std::mem::take(ws).into_ops();
        let now = self.clock.now_ms();
        let mut tally = Tally::read(view, scope)?;
        let mut ids = IdGen { last: tally.last, now_ms: now };
        let mut recorded = Vec::new();
        let mut moved_away = HashSet::new();
        for op in ops {
            match op {
                WriteOp::Put { key, value, meta } if key.starts_with(&mine) => {
                    let new = MemMeta::decode(&key, &meta)?;
                    let old = MemMeta::stored(view, &key)?;
                    let (operation, prior) = match old {
                        Some(o) if same_but_access(o, new) && view.get(&key)?.as_deref() == Some(&value[..]) => {
                            ws.put(key, value, meta);
                            continue;
                        }
                        Some(o) => (Operation::Modified, o.memory_id),
                        None => match moves.get(&key) {
                            Some(from) => {
                                let source = MemMeta::stored(view, from)?;
                                moved_away.insert(from.clone());
                                (Operation::Renamed, source.and_then(|o| o.memory_id))
                            }
                            None => (Operation::Created, None),
                        },
                    };
                    let id = ids.next();
                    let memory_id = prior.unwrap_or(id);
                    let stamped = MemMeta { memory_id: Some(memory_id), version_id: Some(id), ..new };
                    let version = Version {
                        id,
                        memory_id,
                        path: parse(&key).map(|(_, p)| p.to_string()),
                        operation,
                        actor: self.actor.clone(),
                        created_ms: now,
                        content_sha256: Some(sha256(&value)),
                        size: value.len() as u64,
                        redacted_ms: None,
                    };
                    tally.add(version.size);
                    ws.put(version_key(scope, id), value.clone(), version.encode());
                    ws.put(key, value, stamped.encode());
                    recorded.push(id);
                }
                // A move's delete is its other half, not a deletion.
                WriteOp::Delete { key } if key.starts_with(&mine) && !moved_away.contains(&key) => {
                    if let Some(old) = MemMeta::stored(view, &key)? {
                        let id = ids.next();
                        let version = Version {
                            id,
                            memory_id: old.memory_id.unwrap_or(id),
                            path: parse(&key).map(|(_, p)| p.to_string()),
                            operation: Operation::Deleted,
                            actor: self.actor.clone(),
                            created_ms: now,
                            content_sha256: None,
                            size: 0,
                            redacted_ms: None,
                        };
                        tally.add(0);
                        ws.put(version_key(scope, id), Vec::new(), version.encode());
                        recorded.push(id);
                    }
                    ws.delete(key);
                }
                WriteOp::Put { key, value, meta } => ws.put(key, value, meta),
                WriteOp::Delete { key } => ws.delete(key),
            }
        }
        if !recorded.is_empty() {
            Tally { last: ids.last, ..tally }.stage(ws, scope);
        }
        Ok(recorded)
    }
}

impl Memories {
    /// Whether this commit records versions: the store says so (`c:history`, read in the
    /// transaction, so a store another process just turned on records from its next commit), or
    /// this handler was built [`Memories::with_history`] and turns it on in this commit. Once
    /// seen on it stays on (history is never turned off), so the read is skipped after that.
    fn records(&self, view: &dyn ReadView, ws: &mut WriteSet) -> Result<bool> {
        if self.history_seen_on.load(Ordering::Relaxed) {
            return Ok(true);
        }
        if read_settings(view)?.is_some() {
            self.history_seen_on.store(true, Ordering::Relaxed);
            return Ok(true);
        }
        match self.history {
            Some(options) => {
                stage_on(ws, options, self.clock.now_ms());
                Ok(true)
            }
            None => Ok(false),
        }
    }
}

fn same_but_access(old: MemMeta, new: MemMeta) -> bool {
    MemMeta { accessed_ms: 0, memory_id: None, version_id: None, ..old }
        == MemMeta { accessed_ms: 0, memory_id: None, version_id: None, ..new }
}

/// Version ids: 48 bits of milliseconds, 80 random bits, and never below the scope's last id + 1,
/// so they order as the commits did even when the clock steps back.
struct IdGen {
    last: u128,
    now_ms: i64,
}

impl IdGen {
    fn next(&mut self) -> u128 {
        let state = RandomState::new();
        let random =
            ((state.hash_one(self.last) as u128) << 16 | state.hash_one(1u8) as u128 & 0xffff) & ((1 << 80) - 1);
        let ms = (self.now_ms.max(0) as u128) & ((1 << 48) - 1);
        self.last = ((ms << 80) | random).max(self.last + 1);
        self.last
    }
}
