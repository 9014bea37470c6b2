//! The engine plus what every handler over it shares: the write lock that keeps each command's
//! read-modify-write atomic, and the listing indexes that every commit keeps current.

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use rabosh::{Batch, Op, Snapshot};

use crate::Result;
use crate::listing_index::{Change, ScopeIndex};
use crate::meta::MemMeta;

/// Proof that the caller holds the store's write lock.
pub(crate) type WriteGuard<'a> = MutexGuard<'a, ()>;

pub struct MemoryStore {
    engine: rabosh::Store,
    write: Mutex<()>,
    /// Built lazily per scope, the first time a handler with `listing_index` needs one.
    indexes: Mutex<HashMap<String, ScopeIndex>>,
    /// Index nodes looked at by directory views: work made countable for tests, never timed.
    index_nodes_visited: AtomicU64,
}

impl MemoryStore {
    pub fn open(dir: impl AsRef<Path>, options: rabosh::Options) -> Result<Arc<MemoryStore>> {
        Ok(MemoryStore::new(rabosh::Store::open(dir, options)?))
    }

    /// Wraps an engine the caller opened. Every write to memory keys must then go through
    /// handlers over this store: the listing indexes only see commits made here.
    pub fn new(engine: rabosh::Store) -> Arc<MemoryStore> {
        Arc::new(MemoryStore {
            engine,
            write: Mutex::new(()),
            indexes: Mutex::new(HashMap::new()),
            index_nodes_visited: AtomicU64::new(0),
        })
    }

    pub fn engine(&self) -> &rabosh::Store {
        &self.engine
    }

    /// Close the engine (idempotent); every later command fails with the engine's Closed error.
    pub fn close(&self) -> Result<()> {
        Ok(self.engine.close()?)
    }

    /// Index nodes every indexed directory view so far has looked at (a work counter).
    pub fn index_nodes_visited(&self) -> u64 {
        self.index_nodes_visited.load(Ordering::Relaxed)
    }

    /// Scopes that currently have a listing index built.
    pub fn indexed_scopes(&self) -> Vec<String> {
        let mut v: Vec<String> = self.lock_indexes().keys().cloned().collect();
        v.sort();
        v
    }

    pub(crate) fn lock_write(&self) -> WriteGuard<'_> {
        // The guarded data is `()`: a panic elsewhere leaves nothing half-done to protect.
        self.write.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn lock_indexes(&self) -> MutexGuard<'_, HashMap<String, ScopeIndex>> {
        match self.indexes.lock() {
            Ok(g) => g,
            Err(poisoned) => {
                // A panic mid-update may have left a tree half-changed: rebuild them all lazily.
                let mut g = poisoned.into_inner();
                g.clear();
                self.indexes.clear_poison();
                g
            }
        }
    }

    /// Commits `batch` as one engine commit and moves every index that was current at `base_seq`
    /// (the snapshot the command decided on) to the new state. Any other index is dropped.
    pub(crate) fn commit(
        &self,
        _write: &WriteGuard<'_>,
        base_seq: u64,
        batch: Batch,
    ) -> Result<u64> {
        // Indexes are only built under the write lock, which the caller holds: none can appear
        // between this check and the update below.
        let indexed = !self.lock_indexes().is_empty();
        let changes: Vec<Change> = match indexed {
            false => Vec::new(),
            true => batch
                .ops()
                .iter()
                .map(|op| match op {
                    Op::Put { key, meta, .. } => (key.clone(), Some(MemMeta::decode(meta).size)),
                    Op::Delete { key } => (key.clone(), None),
                })
                .collect(),
        };
        let seq = match self.engine.write(batch) {
            Ok(seq) => seq,
            Err(e) => {
                // Whether a failed commit reached the log is the engine's call; rebuild to be sure.
                self.lock_indexes().clear();
                return Err(e.into());
            }
        };
        let mut indexes = self.lock_indexes();
        indexes.retain(|_, index| index.seq == base_seq);
        for (scope, index) in indexes.iter_mut() {
            index.apply(scope, &changes, seq);
        }
        Ok(seq)
    }

    /// Runs `f` on a snapshot and the scope's index at the same state, building or rebuilding
    /// the index first if needed. `held`: the caller already holds the write lock.
    pub(crate) fn with_index<R>(
        &self,
        scope: &str,
        held: Option<&WriteGuard<'_>>,
        f: impl FnOnce(&Snapshot, &ScopeIndex, &mut u64) -> R,
    ) -> Result<R> {
        let mut visited = 0;
        if held.is_none() {
            let indexes = self.lock_indexes();
            let snap = self.engine.snapshot()?;
            if let Some(index) = indexes.get(scope).filter(|i| i.seq == snap.seq()) {
                let r = f(&snap, index, &mut visited);
                self.index_nodes_visited
                    .fetch_add(visited, Ordering::Relaxed);
                return Ok(r);
            }
        }
        // Missing, or a commit is between the engine and the index: wait for the writer.
        let _write = if held.is_none() {
            Some(self.lock_write())
        } else {
            None
        };
        let mut indexes = self.lock_indexes();
        let snap = self.engine.snapshot()?;
        let stale = indexes.get(scope).is_none_or(|i| i.seq != snap.seq());
        if stale {
            indexes.insert(scope.to_string(), ScopeIndex::build(&snap, scope));
        }
        let r = f(&snap, &indexes[scope], &mut visited);
        self.index_nodes_visited
            .fetch_add(visited, Ordering::Relaxed);
        Ok(r)
    }
}
