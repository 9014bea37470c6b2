//! The embedded backend: the rabosh engine in one directory, plus what every handler over it
//! shares — the write lock that makes each transaction's decision and append atomic, group
//! commit (append under the lock, wait for durability outside it, so concurrent commands share
//! one fsync), the per-scope listing indexes every commit keeps current, and maintenance.
//! A caller that runs many commands one after another (a write queue) can go further: under
//! [`EmbeddedStore::appending`] each transaction appends its commit and returns at once, and one
//! [`EmbeddedStore::wait_durable`] covers them all with one fsync.

mod engine;
mod indexes;

use std::cell::Cell;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::backend::{Backend, DirSummary, ReadView, TxBody, Visit, WriteSet};
use crate::dir_totals;
use crate::feed::{self, ChangePage, Cursor};
use crate::listing::{scan_summary, scan_usage, summarise};
use crate::listing_delta::size_changes;
use crate::listing_index::ScopeIndex;
use crate::poison::Poison;
use crate::{Error, Result, Usage};

use engine::Engine;
pub use engine::{CheckpointInfo, CompactInfo, LockHolder, Snapshot, VerifyReport};
use indexes::Indexes;

// The engine's options, durability and counters, re-exported whole like its reports: this
// backend adds nothing to their shape. What it knows beyond them (the last commit appended but
// not yet durable) is [`EmbeddedStore::appended_seq`].
pub use rabosh::{Durability, Options as EmbeddedOptions, Stats};

/// Marks the stores whose writer mutex this thread holds for a shared batch
/// ([`EmbeddedStore::appending`]), so the batch's transactions do not take it again.
struct WriterHeld(usize);

impl WriterHeld {
    fn enter(key: usize) -> WriterHeld {
        WRITER_HELD.with(|h| h.borrow_mut().push(key));
        WriterHeld(key)
    }
    fn here(key: usize) -> bool {
        WRITER_HELD.with(|h| h.borrow().contains(&key))
    }
}

impl Drop for WriterHeld {
    fn drop(&mut self) {
        WRITER_HELD.with(|h| h.borrow_mut().retain(|k| *k != self.0));
    }
}

thread_local! {
    static WRITER_HELD: std::cell::RefCell<Vec<usize>> = const { std::cell::RefCell::new(Vec::new()) };
    /// Set by [`EmbeddedStore::appending`]: this thread's transactions on the store it names
    /// (by address) append without waiting, and the highest commit they need durable is kept here.
    static APPENDING: Cell<Option<(usize, u64)>> = const { Cell::new(None) };
}

/// Commits appended under [`EmbeddedStore::appending`]: none of what they decided may be
/// acknowledged before [`EmbeddedStore::wait_durable`] returned `Ok` for them.
#[must_use = "appended commits are not durable until wait_durable says so"]
#[derive(Debug)]
pub struct Appended {
    /// The last commit the calls decided on or appended; 0 when they decided on nothing.
    pub seq: u64,
    /// Shared mode: the batch was made durable before its commit lock was let go (the next
    /// process to commit must find it durable); this is how that went.
    settled: Option<Result<()>>,
}

/// An open embedded store. Cheap to share: handlers hold it as `Arc<dyn Backend>`.
pub struct EmbeddedStore {
    shared: Arc<Shared>,
}

struct Shared {
    engine: Engine,
    /// Held while a transaction decides and appends.
    writer: Mutex<()>,
    /// Built lazily per scope, the first time a handler with `listing_index` needs one.
    indexes: Mutex<Indexes>,
    poison: Poison,
    /// Index nodes looked at by directory views: work made countable for tests, never timed.
    index_nodes_visited: AtomicU64,
    /// Cleared only by [`EmbeddedStore::act_as_a_build_without_totals`].
    keeps_totals: AtomicBool,
    /// The last long listing the totals answered, so listing it again at the same state costs a
    /// copy, not the records again (a root of 11,000 lines is a few ms of reads).
    last_listed: Mutex<Option<Listed>>,
}

/// A listing answered from the totals, valid for the state at `seq` (a state never changes).
struct Listed {
    seq: u64,
    scope: String,
    dir: String,
    summary: DirSummary,
}

/// Listings shorter than this are answered from the records each time: they cost less than the
/// copy a cache would hold.
const CACHED_ENTRIES: usize = 256;

/// A read view of the embedded store at one engine snapshot, answering listings from the
/// store's index when it is at the same state.
struct EngineView {
    snap: Snapshot,
    shared: Arc<Shared>,
}

impl EmbeddedStore {
    /// Opens (creating if needed) the store in `dir`; takes the directory's lock.
    pub fn open(dir: impl AsRef<Path>, options: EmbeddedOptions) -> Result<Arc<EmbeddedStore>> {
        let engine = Engine::open(dir.as_ref(), options)?;
        let store = Arc::new(EmbeddedStore {
            shared: Arc::new(Shared {
                engine,
                writer: Mutex::new(()),
                indexes: Mutex::new(Indexes::default()),
                poison: Poison::default(),
                index_nodes_visited: AtomicU64::new(0),
                keeps_totals: AtomicBool::new(true),
                last_listed: Mutex::new(None),
            }),
        });
        store.bring_totals_current()?;
        Ok(store)
    }

    /// Rebuilds the directory totals (`dir_totals.rs`) when they do not describe the newest
    /// state (a store written before they existed, or since by a build that does not keep them):
    /// one scan of every memory's metadata, committed as one commit of no memory change. A
    /// listing of a store whose totals stay stale scans as before, so a rebuild that cannot run
    /// now (another process keeps the commit lock; a damaged record it reads) leaves them so.
    fn bring_totals_current(&self) -> Result<()> {
        let snap = self.shared.engine.snapshot()?;
        if dir_totals::current(&snap, snap.seq())? {
            return Ok(());
        }
        match self.commit(&mut |_, _| Ok(()), true) {
            Err(Error::Busy { .. } | Error::Corruption(_)) => Ok(()),
            other => other,
        }
    }

    /// Close the engine (idempotent); every later call fails with `Closed` (or `Poisoned`).
    pub fn close(&self) -> Result<()> {
        self.shared.engine.close()
    }

    /// Make every commit so far durable (for `Buffered`).
    pub fn sync(&self) -> Result<()> {
        self.shared.poison.check()?;
        self.shared.engine.sync()
    }

    /// See [`engine::reencrypt`]: for a closed store.
    pub fn reencrypt(
        dir: impl AsRef<Path>,
        from: Option<&crate::EncryptionKey>,
        to: Option<&crate::EncryptionKey>,
    ) -> Result<()> {
        engine::reencrypt(dir.as_ref(), from, to)
    }

    /// Whether the engine seals what it writes.
    pub fn is_encrypted(&self) -> Result<bool> {
        Ok(self.shared.engine.is_encrypted())
    }

    /// See [`crate::Store::rotate_key`].
    pub fn rotate_key(&self, new: &crate::EncryptionKey) -> Result<()> {
        self.shared.poison.check()?;
        self.shared.engine.rotate_key(new)
    }

    /// A durable, openable copy of the current state in `target` (empty or absent).
    pub fn checkpoint(&self, target: impl AsRef<Path>) -> Result<CheckpointInfo> {
        self.shared.poison.check()?;
        self.shared.engine.checkpoint(target.as_ref())
    }

    /// Rewrites live data to give back the space of overwritten and deleted memories.
    pub fn compact(&self) -> Result<CompactInfo> {
        self.shared.poison.check()?;
        self.shared.engine.compact()
    }

    /// Reads every record and checks every checksum.
    pub fn verify(&self) -> Result<VerifyReport> {
        self.shared.engine.verify()
    }

    #[must_use]
    pub fn stats(&self) -> Stats {
        let mut stats = self.shared.engine.stats();
        stats.poisoned |= self.shared.poison.check().is_err();
        stats
    }

    /// The last commit appended, durable or not: ahead of [`Stats::seq`] while an fsync runs.
    /// A closed or failed store answers with `seq`.
    #[must_use]
    pub fn appended_seq(&self) -> u64 {
        self.shared.engine.latest().map_or_else(|_| self.shared.engine.stats().seq, |snap| snap.seq())
    }

    /// Pins the durable state, for reads as of now (e.g. [`crate::Memories::view_at`]).
    pub fn snapshot(&self) -> Result<Snapshot> {
        self.shared.poison.check()?;
        self.shared.engine.snapshot()
    }

    /// [`EmbeddedStore::snapshot`] for a thread that must not block (a JS thread): never waits
    /// for another process's commit lock — caught up under it when free, else from what is
    /// durable — and fails with `Busy` at once in the one case neither answers (another process
    /// holds the lock right after it rotated or compacted).
    pub fn snapshot_without_waiting(&self) -> Result<Snapshot> {
        self.shared.poison.check()?;
        self.shared.engine.snapshot_without_waiting()
    }

    /// After a snapshot of this store is released: closes here the segments another process
    /// retired meanwhile (if the commit lock is free; never waits).
    pub fn release_retired(&self) -> Result<()> {
        self.shared.engine.release_retired()
    }

    /// Runs `f` with this thread's transactions on this store appending their commits without
    /// waiting for them to be durable, so that one [`EmbeddedStore::wait_durable`] afterwards
    /// covers every one of them with a single fsync. Each transaction is still one atomic commit,
    /// and none is visible to reads before it is durable; what `f` learned from them must not be
    /// acknowledged until `wait_durable` returned `Ok`. A failed fsync then fails all of them.
    ///
    /// Shared mode: `started` is when the oldest of those calls began to wait. When another
    /// process holds the commit lock until the lock timeout has passed since then, `f` does not
    /// run and the answer is `Busy` (nothing was decided): the caller answers the calls that
    /// waited their timeout and may try again for the others, each within its own.
    pub fn appending<R>(&self, started: Instant, f: impl FnOnce() -> R) -> Result<(R, Appended)> {
        /// Restores the thread's previous setting even when `f` unwinds.
        struct Restore(Option<(usize, u64)>);
        impl Drop for Restore {
            fn drop(&mut self) {
                APPENDING.with(|a| a.set(self.0));
            }
        }
        let s = &self.shared;
        if !s.engine.is_shared() {
            let restore = Restore(APPENDING.with(|a| a.replace(Some((s.key(), 0)))));
            let r = f();
            let seq = APPENDING.with(std::cell::Cell::get).map_or(0, |(_, seq)| seq);
            drop(restore);
            return Ok((r, Appended { seq, settled: None }));
        }
        // Shared: the whole batch under one hold of the cross-process commit lock (taken after
        // the writer mutex, the order every transaction takes them in), synced before it goes.
        let Ok(writer) = s.writer.lock() else {
            return Ok((
                f(),
                Appended { seq: 0, settled: Some(Err(Error::Poisoned("a panic while committing".into()))) },
            ));
        };
        let guard = match s.engine.batch_guard_since(started) {
            Ok(g) => g,
            // Run, the calls would each wait a timeout of their own for the lock (and one that got
            // it would commit what this answer then calls failed).
            Err(e @ Error::Busy { .. }) => return Err(e),
            Err(e) => {
                drop(writer);
                let failed = s.failed(e);
                return Ok((f(), Appended { seq: 0, settled: Some(Err(failed)) }));
            }
        };
        let restore = Restore(APPENDING.with(|a| a.replace(Some((s.key(), 0)))));
        let held = WriterHeld::enter(s.key());
        let r = f();
        drop(held);
        let seq = APPENDING.with(std::cell::Cell::get).map_or(0, |(_, seq)| seq);
        drop(restore);
        let settled = s.durable(seq);
        drop(guard);
        drop(writer);
        Ok((r, Appended { seq, settled: Some(settled) }))
    }

    /// The longest wait for another process's commit lock (shared mode), from when a call began
    /// to wait: see [`EmbeddedStore::appending`].
    #[must_use]
    pub fn lock_timeout(&self) -> Duration {
        self.shared.engine.lock_timeout()
    }

    /// Waits until every commit [`EmbeddedStore::appending`] reported is durable (one fsync for
    /// all of them). An error means none of them may be acknowledged; a failed fsync poisons the
    /// store, as it does for a single command.
    pub fn wait_durable(&self, appended: Appended) -> Result<()> {
        if let Some(settled) = appended.settled {
            return settled;
        }
        self.shared.poison.check()?;
        self.shared.durable(appended.seq)
    }

    /// Index nodes every indexed directory view so far has looked at (a work counter).
    #[must_use]
    pub fn index_nodes_visited(&self) -> u64 {
        self.shared.index_nodes_visited.load(Ordering::Relaxed)
    }

    /// From now on this handle commits as a build that predates the directory totals did: it
    /// neither keeps nor rebuilds them, so they go stale with its next commit and every
    /// listing falls back to the index or the scans. For tests of that fallback and of the
    /// rebuild at the next open (an old build writing the store, in shared mode too).
    #[doc(hidden)]
    pub fn act_as_a_build_without_totals(&self) {
        self.shared.keeps_totals.store(false, Ordering::Relaxed);
    }

    /// Scopes that currently have a listing index built.
    #[must_use]
    pub fn indexed_scopes(&self) -> Vec<String> {
        let mut v: Vec<String> = self.shared.lock_indexes().trees.keys().cloned().collect();
        v.sort();
        v
    }
}

impl Shared {
    /// This store's identity for [`EmbeddedStore::appending`].
    fn key(&self) -> usize {
        std::ptr::from_ref::<Shared>(self) as usize
    }

    /// Returns once commit `seq` is durable, or at once under [`EmbeddedStore::appending`] on
    /// this store, noting `seq` for its `wait_durable`.
    fn durable_or_deferred(&self, seq: u64) -> Result<()> {
        let key = self.key();
        let deferred = APPENDING.with(|a| match a.get() {
            Some((k, highest)) if k == key => {
                a.set(Some((k, highest.max(seq))));
                true
            }
            _ => false,
        });
        if deferred { Ok(()) } else { self.durable(seq) }
    }

    fn durable(&self, seq: u64) -> Result<()> {
        self.engine.wait_durable(seq).map_err(|e| self.failed(e))
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

    /// A commit whose outcome is unknown poisons the store; a closed store is only closed, and a
    /// busy one (another process kept the commit lock past the timeout: nothing was appended)
    /// only busy.
    fn failed(&self, e: Error) -> Error {
        if !matches!(e, Error::Closed | Error::InvalidArgument(_) | Error::Busy { .. }) {
            self.poison.set(e.to_string());
            self.lock_indexes().clear();
        }
        e
    }

    /// The listing of `dir` kept at `seq`, if it is the one kept.
    fn listed_at(&self, seq: u64, scope: &str, dir: &str) -> Option<DirSummary> {
        let kept = self.last_listed.lock().ok()?;
        kept.as_ref().filter(|l| l.seq == seq && l.scope == scope && l.dir == dir).map(|l| l.summary.clone())
    }

    /// Keeps a long listing for [`Shared::listed_at`], in place of the one kept.
    fn keep_listed(&self, seq: u64, scope: &str, dir: &str, summary: &DirSummary) {
        if summary.entries.len() < CACHED_ENTRIES {
            return;
        }
        if let Ok(mut kept) = self.last_listed.lock() {
            let newer = kept.as_ref().is_none_or(|l| l.seq <= seq);
            if newer {
                *kept = Some(Listed { seq, scope: scope.into(), dir: dir.into(), summary: summary.clone() });
            }
        }
    }

    /// Runs `f` on the scope's index at exactly the state `view` reads, catching it up from
    /// queued commits or (when `build`) building it. None when `view` is not the published state
    /// (a pinned older snapshot, or the newest state inside a transaction), or when the index
    /// would need a build it may not do: the caller scans instead.
    fn with_index<R>(
        &self,
        scope: &str,
        view: &EngineView,
        build: bool,
        f: impl FnOnce(&ScopeIndex, &mut u64) -> R,
    ) -> Result<Option<R>> {
        // Catch up with other processes before the index lock: a committing thread of this
        // process holds the commit lock while it waits for the index lock.
        self.engine.snapshot()?;
        let mut ix = self.lock_indexes();
        let published = self.engine.published_seq();
        ix.catch_up(published);
        if view.snap.seq() != published {
            return Ok(None);
        }
        if ix.trees.get(scope).is_none_or(|i| i.seq != published) {
            if !build {
                return Ok(None);
            }
            ix.trees.insert(scope.to_string(), ScopeIndex::build(view, published, scope)?);
        }
        let mut visited = 0;
        let r = f(&ix.trees[scope], &mut visited);
        self.index_nodes_visited.fetch_add(visited, Ordering::Relaxed);
        Ok(Some(r))
    }
}

impl ReadView for EngineView {
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.snap.get(key)
    }

    fn meta(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.snap.meta(key)
    }

    fn scan_prefix(&self, prefix: &[u8], visit: &mut Visit<'_>) -> Result<()> {
        self.snap.scan_prefix(prefix, visit)
    }

    fn scan_prefix_rev(&self, prefix: &[u8], before: Option<&[u8]>, visit: &mut Visit<'_>) -> Result<()> {
        self.snap.scan_prefix_rev(prefix, before, visit)
    }

    fn scan_prefix_after(&self, prefix: &[u8], after: Option<&[u8]>, visit: &mut Visit<'_>) -> Result<()> {
        self.snap.scan_prefix_after(prefix, after, visit)
    }

    fn dir_summary(&self, scope: &str, dir: &str) -> Result<DirSummary> {
        // A built index at this state answers from the heap; else the directory totals the
        // store keeps answer from the records of the lines shown (issue 36: the root of a
        // million memories without reading them). Only when those are stale (a store last
        // written by a build without them) does the root's listing build the index (it reads
        // every memory of the scope either way), and a directory below it scan its own subtree.
        let kept = self
            .shared
            .with_index(scope, self, false, |index, visited| summarise(index.find(dir, visited), visited))?;
        if let Some(summary) = kept {
            return Ok(summary);
        }
        if let Some(summary) = self.shared.listed_at(self.snap.seq(), scope, dir) {
            return Ok(summary);
        }
        if let Some(summary) = dir_totals::summary(self, self.snap.seq(), scope, dir, u64::MAX)? {
            self.shared.keep_listed(self.snap.seq(), scope, dir, &summary);
            return Ok(summary);
        }
        let build = dir == crate::ROOT;
        let indexed = self
            .shared
            .with_index(scope, self, build, |index, visited| summarise(index.find(dir, visited), visited))?;
        match indexed {
            Some(summary) => Ok(summary),
            None => scan_summary(self, scope, dir),
        }
    }

    fn dir_children(&self, scope: &str, dir: &str) -> Result<Option<crate::browse::Children>> {
        dir_totals::children(self, self.snap.seq(), scope, dir)
    }

    fn dir_summary_if_ready(&self, scope: &str, dir: &str, max_lines: u64) -> Result<Option<DirSummary>> {
        let ready = self.shared.with_index(scope, self, false, |index, visited| {
            let node = index.find(dir, visited);
            if node.is_some_and(|n| n.listing_lines_exceed(max_lines)) {
                return None;
            }
            Some(summarise(node, visited))
        })?;
        match ready {
            Some(answer) => Ok(answer),
            // No index here: the totals, when current, answer within the same bound (they read
            // records and files of the lines shown, on this thread, never waiting for a lock).
            None => dir_totals::summary(self, self.snap.seq(), scope, dir, max_lines),
        }
    }

    fn usage(&self, scope: &str) -> Result<Usage> {
        if let Some(usage) = dir_totals::usage(self, self.snap.seq(), scope)? {
            return Ok(usage);
        }
        let indexed = self.shared.with_index(scope, self, true, |index, _| Usage {
            memories: index.root.all_count,
            bytes: index.root.all_bytes,
        })?;
        match indexed {
            Some(usage) => Ok(usage),
            None => scan_usage(self, scope),
        }
    }
}

impl Backend for EmbeddedStore {
    fn read(&self) -> Result<Box<dyn ReadView>> {
        let snap = self.snapshot()?;
        Ok(Box::new(EngineView { snap, shared: self.shared.clone() }))
    }

    fn read_without_waiting(&self) -> Result<Option<Box<dyn ReadView>>> {
        self.shared.poison.check()?;
        let Some(snap) = self.shared.engine.snapshot_if_current()? else { return Ok(None) };
        Ok(Some(Box::new(EngineView { snap, shared: self.shared.clone() })))
    }

    fn transact(&self, body: &mut TxBody<'_>) -> Result<()> {
        self.commit(body, false)
    }

    fn changes(&self, scope: &str, since: &Cursor, limit: usize) -> Result<ChangePage> {
        let snap = self.snapshot()?;
        let end = snap.seq() + 1;
        feed::read_rows(&snap, scope, since, limit, end)
    }

    fn reclaim(&self) -> Result<()> {
        self.compact().map(|_| ())
    }
}

impl EmbeddedStore {
    /// [`Backend::transact`]; with `rebuild_totals` (for a body that changes no memory), the
    /// directory totals are recounted in the same commit when they are stale.
    fn commit(&self, body: &mut TxBody<'_>, rebuild_totals: bool) -> Result<()> {
        let s = &self.shared;
        s.poison.check()?;
        // The lock timeout bounds the whole wait, behind this process's other commits too.
        let started = Instant::now();
        // Inside a shared batch on this thread the writer mutex is already held by it.
        let writer = if WriterHeld::here(s.key()) {
            None
        } else {
            Some(s.writer.lock().map_err(|_| Error::Poisoned("a panic while committing".into()))?)
        };
        let _on_panic = s.poison.on_panic();
        // Shared mode: no other process commits between this decision and its append.
        let guard = s.engine.commit_guard_since(started).map_err(|e| s.failed(e))?;
        // Decide on the newest state, including commits not yet durable, so no update is lost
        // while an fsync is in flight.
        let view = EngineView { snap: s.engine.latest()?, shared: s.clone() };
        let mut staged = WriteSet::default();
        body(&view, &mut staged)?;
        let keeps_totals = s.keeps_totals.load(Ordering::Relaxed);
        let recount = keeps_totals && rebuild_totals && !dir_totals::current(&view, view.snap.seq())?;
        if staged.is_empty() && !recount {
            // Decided on that state: answer once it is durable, without holding the lock.
            drop(guard);
            drop(writer);
            return s.durable_or_deferred(view.snap.seq());
        }
        let changes = size_changes(&staged)?;
        // The change feed's rows, at the sequence number this append takes (the engine numbers
        // each commit one past the newest, which the view is, under the commit guard).
        let position = view.snap.seq() + 1;
        let feed = feed::stage_rows(&view, &mut staged, position, view.snap.seq() == 0)?;
        let totals = if recount {
            Some(dir_totals::rebuild(&view, view.snap.seq())?)
        } else if !keeps_totals {
            None
        } else {
            dir_totals::stage(&view, view.snap.seq(), &changes)?
        };
        let mut ops = staged.into_ops();
        ops.extend(feed);
        ops.extend(totals.into_iter().flatten());
        let seq = {
            // The index lock is held across the append: a leader may publish this commit at
            // once, and a view must then find its changes queued, not a gap.
            let mut ix = s.lock_indexes();
            let seq = match s.engine.append(ops) {
                Ok(seq) => seq,
                Err(e) => {
                    drop(ix);
                    return Err(s.failed(e));
                }
            };
            if seq != position {
                // The feed's entries name a commit that is not this one: nothing may build on it.
                drop(ix);
                return Err(s.failed(Error::Poisoned(format!(
                    "the change feed expected commit {position}, the engine appended {seq}"
                ))));
            }
            if !ix.trees.is_empty() {
                ix.pending.push_back((seq, changes));
            }
            if let Ok(snap) = s.engine.snapshot() {
                ix.catch_up(snap.seq());
            }
            seq
        };
        drop(guard);
        drop(writer);
        s.durable_or_deferred(seq)
    }
}
