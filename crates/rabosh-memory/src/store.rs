//! The engine plus what every handler over it shares: the write lock that keeps each command's
//! read-modify-write atomic, and the listing indexes that every commit keeps current.

use std::collections::{HashMap, VecDeque};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use rabosh::{Batch, Op, Snapshot};

use crate::Result;
use crate::listing_index::{Change, ScopeIndex};
use crate::meta::MemMeta;

/// The store's write lock, held while a command decides and appends. A command that decided
/// on the newest state and returns without committing still answers only once that state is
/// durable: dropping the guard releases the lock first, then waits.
pub(crate) struct WriteGuard<'a> {
    lock: Option<MutexGuard<'a, ()>>,
    store: &'a MemoryStore,
    /// The newest seq a decision was taken on.
    seen: Option<u64>,
}

impl WriteGuard<'_> {
    /// The state a command decides on: the newest, including commits not yet durable, so no
    /// update is lost while an fsync is in flight.
    pub fn latest(&mut self) -> Result<Snapshot> {
        let snap = self.store.engine.latest_snapshot()?;
        self.seen = Some(snap.seq());
        Ok(snap)
    }
}

impl Drop for WriteGuard<'_> {
    fn drop(&mut self) {
        drop(self.lock.take());
        if let Some(seq) = self.seen {
            // A failure here poisons the engine: the next command reports it.
            let _ = self.store.engine.wait_durable(seq);
        }
    }
}

pub struct MemoryStore {
    engine: rabosh::Store,
    write: Mutex<()>,
    /// Built lazily per scope, the first time a handler with `listing_index` needs one.
    indexes: Mutex<Indexes>,
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
            indexes: Mutex::new(Indexes::default()),
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
        let mut v: Vec<String> = self.lock_indexes().trees.keys().cloned().collect();
        v.sort();
        v
    }

    pub(crate) fn lock_write(&self) -> WriteGuard<'_> {
        // The guarded data is `()`: a panic elsewhere leaves nothing half-done to protect.
        let lock = self.write.lock().unwrap_or_else(|e| e.into_inner());
        WriteGuard { lock: Some(lock), store: self, seen: None }
    }

    fn lock_indexes(&self) -> MutexGuard<'_, Indexes> {
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

    /// Appends `batch` as one engine commit decided on `base_seq` (the command's
    /// `latest_snapshot`), queues its index changes, releases the write lock, and returns once
    /// the commit is durable. The fsync happens outside the lock, so concurrent commands share it.
    pub(crate) fn commit(&self, mut write: WriteGuard<'_>, base_seq: u64, batch: Batch) -> Result<u64> {
        if batch.is_empty() {
            return Ok(base_seq);
        }
        let changes: Vec<Change> = batch
            .ops()
            .iter()
            .map(|op| match op {
                Op::Put { key, meta, .. } => (key.clone(), Some(MemMeta::decode(meta).size)),
                Op::Delete { key } => (key.clone(), None),
            })
            .collect();
        let seq = {
            // The index lock is held across the append: a leader may publish this commit at
            // once, and a view must then find its changes queued, not a gap.
            let mut ix = self.lock_indexes();
            let seq = match self.engine.append(batch) {
                Ok(seq) => seq,
                Err(e) => {
                    // Whether a failed commit reached the log is the engine's call; rebuild.
                    ix.clear();
                    return Err(e.into());
                }
            };
            if !ix.trees.is_empty() {
                ix.pending.push_back((seq, changes));
            }
            if let Ok(snap) = self.engine.snapshot() {
                ix.catch_up(snap.seq());
            }
            seq
        };
        write.seen = None;
        drop(write);
        if let Err(e) = self.engine.wait_durable(seq) {
            self.lock_indexes().clear();
            return Err(e.into());
        }
        Ok(seq)
    }

    /// Runs `f` on the published (durable) snapshot and the scope's index at that same state,
    /// catching the index up from queued commits, or building it when the chain is broken.
    pub(crate) fn with_index<R>(
        &self,
        scope: &str,
        f: impl FnOnce(&Snapshot, &ScopeIndex, &mut u64) -> R,
    ) -> Result<R> {
        self.index_at_published(scope, true, f).map(|r| r.expect("built on demand"))
    }

    /// As `with_index`, but None instead of a build: for callers that must not pay for one.
    pub(crate) fn with_index_if_built<R>(
        &self,
        scope: &str,
        f: impl FnOnce(&Snapshot, &ScopeIndex, &mut u64) -> R,
    ) -> Result<Option<R>> {
        self.index_at_published(scope, false, f)
    }

    fn index_at_published<R>(
        &self,
        scope: &str,
        build: bool,
        f: impl FnOnce(&Snapshot, &ScopeIndex, &mut u64) -> R,
    ) -> Result<Option<R>> {
        let mut visited = 0;
        let mut ix = self.lock_indexes();
        let snap = self.engine.snapshot()?;
        ix.catch_up(snap.seq());
        let fresh = ix.trees.get(scope).is_some_and(|i| i.seq == snap.seq());
        if !fresh {
            if !build {
                return Ok(None);
            }
            ix.trees.insert(scope.to_string(), ScopeIndex::build(&snap, scope));
        }
        let r = f(&snap, &ix.trees[scope], &mut visited);
        self.index_nodes_visited.fetch_add(visited, Ordering::Relaxed);
        Ok(Some(r))
    }
}

/// The listing indexes, each at some published seq, and the changes of commits appended since
/// (in seq order) that bring them forward as those commits become durable.
#[derive(Default)]
pub(crate) struct Indexes {
    pub trees: HashMap<String, ScopeIndex>,
    pub pending: VecDeque<(u64, Vec<Change>)>,
}

impl Indexes {
    fn clear(&mut self) {
        self.trees.clear();
        self.pending.clear();
    }

    /// Moves every index to `published` by applying queued commits in order. An index the queue
    /// cannot carry there without a gap is dropped (rebuilt when next asked for); queued
    /// commits no index needs any more are dropped.
    fn catch_up(&mut self, published: u64) {
        let pending = &self.pending;
        self.trees.retain(|scope, index| {
            if index.seq > published {
                return false;
            }
            let from = index.seq;
            for (seq, changes) in pending.iter().filter(|(s, _)| *s > from && *s <= published) {
                if *seq != index.seq + 1 {
                    return false;
                }
                index.apply(scope, changes, *seq);
            }
            index.seq == published
        });
        let oldest = self.trees.values().map(|i| i.seq).min();
        match oldest {
            None => self.pending.clear(),
            Some(oldest) => {
                while self.pending.front().is_some_and(|(s, _)| *s <= oldest) {
                    self.pending.pop_front();
                }
            }
        }
    }
}
