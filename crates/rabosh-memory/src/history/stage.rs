//! The hook every mutation goes through: [`Memories::transact`] calls it after the command's
//! body, on the same view and write set, so each change to a memory and its version record are
//! one commit — never one without the other, on every backend.
//!
//! The versions are what each command said it did ([`Intent`], staged with each memory row):
//! `Create`, `Modify` and `Delete` record `created`, `modified` and `deleted`; a `Move` (what
//! `rename` does for each memory) records one `renamed` version carrying the moved memory's id
//! (its delete half records nothing); a `Touch` (a view that records access) is not a version.
//! The state before is read only for the memory ids a version carries on.
//!
//! A memory's id is the id of the first version recorded for it; every put carries it (and the
//! version id) in the memory's metadata.

use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;
use std::sync::atomic::Ordering;

use crate::backend::{Intent, ReadView, WriteOp, WriteSet};
use crate::keys::{parse, scope_prefix};
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
        let mine = scope_prefix(scope);
        let staged: Vec<_> = ws.take_staged().collect();
        let now = self.clock.now_ms();
        let mut tally = Tally::read(view, scope)?;
        let mut ids = IdGen { last: tally.last, now_ms: now };
        let mut recorded = Vec::new();
        for (op, mark) in staged {
            let in_scope = match &op {
                WriteOp::Put { key, .. } | WriteOp::Delete { key } => key.starts_with(&mine),
            };
            let intent = mark.as_ref().map(|m| &m.intent);
            match (op, intent) {
                // An access stamp is a commit, not a version; a row with no intent is not a
                // memory (one would be refused at commit); neither is recorded, nor is another
                // scope's row.
                (op, None | Some(Intent::Touch)) => ws.restage(op, mark),
                (op, _) if !in_scope => ws.restage(op, mark),
                (WriteOp::Put { key, value, meta }, Some(intent)) => {
                    let new = MemMeta::decode(&key, &meta)?;
                    let (operation, prior) = match intent {
                        Intent::Move { from } => {
                            (Operation::Renamed, MemMeta::stored(view, from)?.and_then(|o| o.memory_id))
                        }
                        Intent::Modify => (Operation::Modified, MemMeta::stored(view, &key)?.and_then(|o| o.memory_id)),
                        _ => (Operation::Created, None),
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
                    ws.restage(WriteOp::Put { key, value, meta: stamped.encode() }, mark);
                    recorded.push(id);
                }
                // A move's delete is its other half, not a deletion.
                (op @ WriteOp::Delete { .. }, Some(Intent::Move { .. })) => ws.restage(op, mark),
                (WriteOp::Delete { key }, _) => {
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
                    ws.restage(WriteOp::Delete { key }, mark);
                }
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
            (u128::from(state.hash_one(self.last)) << 16 | u128::from(state.hash_one(1u8)) & 0xffff) & ((1 << 80) - 1);
        let ms = u128::from(self.now_ms.max(0).unsigned_abs()) & ((1 << 48) - 1);
        self.last = ((ms << 80) | random).max(self.last + 1);
        self.last
    }
}
