//! The seam under the memory semantics: a backend is a read view plus an atomic write
//! transaction over ordered byte keys. The six commands, usage, expiry, export and import are
//! written only against these two traits; the embedded engine, an in-memory map and PostgreSQL
//! implement them. Keys and metadata are opaque here: their layout belongs to this crate
//! (`keys.rs`, `meta.rs`), never to a backend's storage format.

use std::ops::ControlFlow;

use crate::feed::{ChangePage, Cursor};
use crate::listing::{scan_summary, scan_usage};
use crate::meta::MemMeta;
use crate::{DirEntry, Result, Usage};

/// Keys starting with this prefix are store-wide settings: few, rarely written, and read inside
/// many transactions (the memory layer's `c:` space, `history/settings.rs`). A backend may keep
/// them apart from the keys commands write, so that reading one does not lock their
/// neighbourhood: PostgreSQL's SERIALIZABLE read of a key locks the whole index page it lies on,
/// and in kv's primary key that page also takes the rows of new memories (issue 24), so the
/// PostgreSQL backend reads settings through an index of their own (`rabosh-memory-postgres`, `sql.rs`).
pub const SETTINGS_PREFIX: &[u8] = b"c:";

/// One staged change of a transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WriteOp {
    Put { key: Vec<u8>, value: Vec<u8>, meta: Vec<u8> },
    Delete { key: Vec<u8> },
}

/// What a command did to one memory, staged with the row it writes: history records its
/// versions from these (never by comparing the rows with the state before), listings their size
/// changes (with the sizes staged beside them), and a backend sees only the rows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Intent {
    /// A memory where there was none: a `created` version.
    Create,
    /// New content (or metadata) for a memory that exists: a `modified` version.
    Modify,
    /// Only the access stamp of a memory that exists (a view with `trackAccess`): no version.
    Touch,
    /// A memory moved from `from` (what `rename` does for each memory): both rows carry it; the
    /// put is one `renamed` version carrying the memory's id, the delete records nothing.
    Move { from: Vec<u8> },
    /// A memory removed: a `deleted` version.
    Delete,
}

/// The size of the memory at a row's key before its commit, as the command read it in its own
/// transaction, and after it (None: no memory there): what listings need (`listing_delta.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Sizes {
    pub before: Option<u64>,
    pub after: Option<u64>,
}

/// What a memory row was staged with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Staged {
    pub intent: Intent,
    pub sizes: Sizes,
    /// Staged by [`WriteSet::write_new`]: the row must not exist when the transaction commits.
    pub new_only: bool,
    /// The position of the change feed entry that the memory's metadata named when the command
    /// read it (`MemMeta::feed_position`): the entry this commit replaces, found without a read.
    pub feed_before: Option<u64>,
}

/// What a transaction body stages; committed as one unit after the body returns `Ok`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WriteSet {
    ops: Vec<WriteOp>,
    /// Parallel to `ops`: what each memory row's command did and the sizes it read; None for
    /// every other row (versions, settings, the sync's bases).
    marks: Vec<Option<Staged>>,
    /// Memory keys whose change feed entry the commit removes (`feed.rs`): a redaction erasing
    /// the path of a memory that is gone.
    forget: Vec<Vec<u8>>,
}

impl WriteSet {
    /// A row that is not a memory (versions, settings, the sync's bases; a backend's own tests).
    /// A memory row staged here, without what the command did, is refused at commit
    /// (`listing_delta.rs`): listings are kept from the intents, never from the rows.
    pub fn put(&mut self, key: Vec<u8>, value: Vec<u8>, meta: Vec<u8>) {
        self.ops.push(WriteOp::Put { key, value, meta });
        self.marks.push(None);
    }
    /// Deletes a row that is not a memory (see [`WriteSet::put`]).
    pub fn delete(&mut self, key: Vec<u8>) {
        self.ops.push(WriteOp::Delete { key });
        self.marks.push(None);
    }
    /// A memory's new row: `Create` when the command's transaction found none at `key` (`old`
    /// None), else `Modify` of the memory it read (`old`).
    pub(crate) fn write(&mut self, key: Vec<u8>, value: Vec<u8>, meta: MemMeta, old: Option<&MemMeta>) {
        let intent = if old.is_some() { Intent::Modify } else { Intent::Create };
        let sizes = Sizes { before: old.map(|m| m.size), after: Some(meta.size) };
        // The feed stamps the position of the entry this commit writes (`feed.rs`).
        let meta = MemMeta { feed_position: None, ..meta };
        self.ops.push(WriteOp::Put { key, value, meta: meta.encode() });
        self.marks.push(Some(Staged {
            intent,
            sizes,
            new_only: false,
            feed_before: old.and_then(|m| m.feed_position),
        }));
    }
    /// A memory where the command did not look: created only if no row is at `key` when the
    /// transaction commits ([`Backend::transact_new`] answers [`Committed::Taken`] otherwise, having
    /// committed nothing). The absence is decided by the backend at commit (PostgreSQL: a unique
    /// insert) rather than by a read in the body, which under SERIALIZABLE would lock the index
    /// page its neighbours are inserted into.
    pub(crate) fn write_new(&mut self, key: Vec<u8>, value: Vec<u8>, meta: MemMeta) {
        let sizes = Sizes { before: None, after: Some(meta.size) };
        let meta = MemMeta { feed_position: None, ..meta };
        self.ops.push(WriteOp::Put { key, value, meta: meta.encode() });
        self.marks.push(Some(Staged { intent: Intent::Create, sizes, new_only: true, feed_before: None }));
    }
    /// The keys staged by [`WriteSet::write_new`] whose last row is still that put.
    #[must_use]
    pub fn new_only_keys(&self) -> Vec<&[u8]> {
        let mut last: std::collections::BTreeMap<&[u8], bool> = std::collections::BTreeMap::new();
        for (op, mark) in self.rows() {
            let new_only = matches!(op, WriteOp::Put { .. }) && mark.is_some_and(|m| m.new_only);
            let key = match op {
                WriteOp::Put { key, .. } | WriteOp::Delete { key } => key.as_slice(),
            };
            last.insert(key, new_only);
        }
        last.into_iter().filter(|(_, n)| *n).map(|(k, _)| k).collect()
    }
    /// Only the access stamp of the memory at `key`: its content, and so its size, unchanged.
    pub(crate) fn touch(&mut self, key: Vec<u8>, value: Vec<u8>, meta: MemMeta) {
        let sizes = Sizes { before: Some(meta.size), after: Some(meta.size) };
        let feed_before = meta.feed_position;
        self.ops.push(WriteOp::Put { key, value, meta: meta.encode() });
        self.marks.push(Some(Staged { intent: Intent::Touch, sizes, new_only: false, feed_before }));
    }
    /// Removes the memory the command's transaction read at `key` (`old`).
    pub(crate) fn remove(&mut self, key: Vec<u8>, old: &MemMeta) {
        self.ops.push(WriteOp::Delete { key });
        self.marks.push(Some(Staged {
            intent: Intent::Delete,
            sizes: Sizes { before: Some(old.size), after: None },
            new_only: false,
            feed_before: old.feed_position,
        }));
    }
    /// Moves a memory from `from` to `to`, where the command found nothing: a put and a delete
    /// to every backend (none has a move), one `renamed` version to history.
    /// `meta` is the memory's as read at `from` (its feed position is `from`'s entry).
    pub(crate) fn moved(&mut self, from: Vec<u8>, to: Vec<u8>, value: Vec<u8>, meta: MemMeta) {
        let size = Some(meta.size);
        let feed_before = meta.feed_position;
        let meta = MemMeta { feed_position: None, ..meta };
        self.ops.push(WriteOp::Put { key: to, value, meta: meta.encode() });
        let intent = Intent::Move { from: from.clone() };
        self.marks.push(Some(Staged {
            intent: intent.clone(),
            sizes: Sizes { before: None, after: size },
            new_only: false,
            feed_before: None,
        }));
        self.ops.push(WriteOp::Delete { key: from });
        self.marks.push(Some(Staged {
            intent,
            sizes: Sizes { before: size, after: None },
            new_only: false,
            feed_before,
        }));
    }
    /// The change feed entry of the memory key `key` leaves the feed in this commit, and
    /// readers whose cursor is older get `reset` (`feed.rs`): how redaction erases a path the
    /// feed still names.
    pub(crate) fn forget_change(&mut self, key: Vec<u8>) {
        self.forget.push(key);
    }
    /// The memory keys whose change feed entry this commit removes.
    #[must_use]
    pub fn forgotten(&self) -> &[Vec<u8>] {
        &self.forget
    }
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty() && self.forget.is_empty()
    }
    #[must_use]
    pub fn len(&self) -> usize {
        self.ops.len()
    }
    #[must_use]
    pub fn ops(&self) -> &[WriteOp] {
        &self.ops
    }
    #[must_use]
    pub fn into_ops(self) -> Vec<WriteOp> {
        self.ops
    }
    /// Each row with what it was staged with.
    pub(crate) fn rows(&self) -> impl Iterator<Item = (&WriteOp, Option<&Staged>)> {
        self.ops.iter().zip(self.marks.iter().map(Option::as_ref))
    }
    /// The metadata of row `index`, when it is a put, for the feed to restamp (`feed.rs`).
    pub(crate) fn put_meta_mut(&mut self, index: usize) -> Option<(&[u8], &mut Vec<u8>)> {
        match self.ops.get_mut(index) {
            Some(WriteOp::Put { key, meta, .. }) => Some((key.as_slice(), meta)),
            _ => None,
        }
    }
    /// Each row with what it was staged with (history's hook), leaving the set empty.
    pub(crate) fn take_staged(&mut self) -> impl Iterator<Item = (WriteOp, Option<Staged>)> {
        let ops = std::mem::take(&mut self.ops);
        let marks = std::mem::take(&mut self.marks);
        ops.into_iter().zip(marks)
    }
    /// Stages a row as it was taken from [`WriteSet::take_staged`].
    pub(crate) fn restage(&mut self, op: WriteOp, mark: Option<Staged>) {
        self.ops.push(op);
        self.marks.push(mark);
    }
    /// Forget what was staged (a retried body starts from nothing).
    pub fn clear(&mut self) {
        self.ops.clear();
        self.marks.clear();
        self.forget.clear();
    }
}

/// Where a scan under `prefix` that resumes after `after` starts: the byte-order successor of the
/// cursor (`after` followed by a zero byte), or the prefix itself when the cursor lies before it.
#[must_use]
pub fn resume_from(prefix: &[u8], after: Option<&[u8]>) -> Vec<u8> {
    match after {
        Some(a) if a >= prefix => {
            let mut from = a.to_vec();
            from.push(0);
            from
        }
        _ => prefix.to_vec(),
    }
}

/// Called for each `(key, meta)` of a scan; `Break` stops it.
pub type Visit<'a> = dyn FnMut(&[u8], &[u8]) -> ControlFlow<()> + 'a;
/// A transaction's body: decides on the view, stages into the write set.
pub type TxBody<'a> = dyn FnMut(&dyn ReadView, &mut WriteSet) -> Result<()> + 'a;

/// A consistent read of one state. Later commits never change what a view answers.
pub trait ReadView: Send + Sync {
    /// The value at `key`.
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>>;

    /// The metadata at `key`, without reading the value.
    fn meta(&self, key: &[u8]) -> Result<Option<Vec<u8>>>;

    /// Every `(key, meta)` whose key starts with `prefix`, in byte order of the key, until `visit`
    /// breaks. Reads no values.
    fn scan_prefix(&self, prefix: &[u8], visit: &mut Visit<'_>) -> Result<()>;

    /// Every `(key, meta)` under `prefix` strictly after `after` (None: from the first), in byte
    /// order of the key, until `visit` breaks. For pages that resume at a cursor (a listing of
    /// memories, oldest key first). The default runs the prefix scan and passes over the keys up
    /// to the cursor, so it reads them; a backend with an ordered index seeks instead.
    fn scan_prefix_after(&self, prefix: &[u8], after: Option<&[u8]>, visit: &mut Visit<'_>) -> Result<()> {
        self.scan_prefix(prefix, &mut |k, m| match after {
            Some(a) if k <= a => ControlFlow::Continue(()),
            _ => visit(k, m),
        })
    }

    /// The keys of [`ReadView::scan_prefix_after`] that may contain `needle` once lower-cased
    /// (`str::to_lowercase`, `needle` already so): every key that does is visited, others may be,
    /// so the caller tests each again. For a search over paths: a backend whose every page is a
    /// round trip may leave out in its query the keys that cannot match, rather than send them.
    /// The default visits every key.
    fn scan_prefix_after_containing(
        &self,
        prefix: &[u8],
        after: Option<&[u8]>,
        _needle: &str,
        visit: &mut Visit<'_>,
    ) -> Result<()> {
        self.scan_prefix_after(prefix, after, visit)
    }

    /// The same keys from the top: every `(key, meta)` under `prefix` and below `before` (None: no
    /// bound), in reverse byte order, until `visit` breaks. For pages that start at a cursor
    /// (history, newest first). The default runs the forward scan and replays it reversed, so it
    /// reads the whole prefix; a backend with an ordered index seeks instead.
    fn scan_prefix_rev(&self, prefix: &[u8], before: Option<&[u8]>, visit: &mut Visit<'_>) -> Result<()> {
        let mut all: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
        self.scan_prefix(prefix, &mut |k, m| {
            if before.is_some_and(|b| k >= b) {
                return ControlFlow::Break(());
            }
            all.push((k.to_vec(), m.to_vec()));
            ControlFlow::Continue(())
        })?;
        for (k, m) in all.iter().rev() {
            if visit(k, m).is_break() {
                break;
            }
        }
        Ok(())
    }

    /// What a view of directory `dir` of `scope` lists: the visible memories below it and the
    /// entries at depth 1 and 2. The default scans the directory's key range (reads no values);
    /// a backend with an aggregated listing index answers from it instead, with the same result.
    fn dir_summary(&self, scope: &str, dir: &str) -> Result<DirSummary> {
        scan_summary(self, scope, dir)
    }

    /// The same summary, only when an aggregate that is already current answers it and it lists
    /// at most `max_lines` lines; None when it would need a scan or a build. For callers on a
    /// latency-sensitive thread. The default: never (a scan grows with the directory).
    fn dir_summary_if_ready(&self, _scope: &str, _dir: &str, _max_lines: u64) -> Result<Option<DirSummary>> {
        Ok(None)
    }

    /// The names directly under directory `dir` of `scope`, each with its size and what lies
    /// below it (hidden memories included), all of them in byte order, when an aggregate that
    /// describes this state answers without reading the memories below; None when it would
    /// need a scan. The default: None.
    fn dir_children(&self, _scope: &str, _dir: &str) -> Result<Option<crate::browse::Children>> {
        Ok(None)
    }

    /// Every memory of `scope`, hidden ones included. The default scans the scope's metadata.
    fn usage(&self, scope: &str) -> Result<Usage> {
        scan_usage(self, scope)
    }

    /// Says the caller's next `meta(key)` will, when a row is there, most likely be followed by
    /// `get(key)` (a file view): a backend whose every read is a round trip may fetch the value
    /// with the metadata, and answer that `get` without another. Answers are unchanged either
    /// way. The default: nothing (a local read costs less than a fetched value left unused).
    fn prefetch_value(&self, _key: &[u8]) {}
}

/// A directory as a view lists it: `memories` and `bytes` count the visible memories at any
/// depth below it (zero: nothing to list); `entries` are depth 1 and 2, in listing order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DirSummary {
    pub memories: u64,
    pub bytes: u64,
    pub entries: Vec<DirEntry>,
}

/// What [`Backend::transact_new`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Committed {
    /// The body's write set was committed (or it staged nothing).
    Done,
    /// A row staged by [`WriteSet::write_new`] found a row at its key: nothing was committed.
    Taken,
}

/// A store the commands run over.
pub trait Backend: Send + Sync {
    /// A view that includes every commit acknowledged (by any handle, any process) before the
    /// call.
    fn read(&self) -> Result<Box<dyn ReadView>>;

    /// [`Backend::read`] when it needs no wait for a lock another thread or process may hold
    /// (catching up on another process's commits, say); `None` when it would. For callers on a
    /// thread that must not wait, which then read elsewhere.
    fn read_without_waiting(&self) -> Result<Option<Box<dyn ReadView>>> {
        self.read().map(Some)
    }

    /// [`Backend::read`] for a caller that queries the view at once and drops it soon (one
    /// command): its snapshot may be taken at its first query instead of before this returns.
    /// It includes every commit acknowledged before the call either way; only commits that land
    /// between the call and the first query may be seen too, so a caller that must pin a state
    /// before doing something else (a snapshot handed out) uses `read`. A remote backend saves
    /// a round trip (PostgreSQL sends BEGIN with the first query). The default: `read`.
    fn read_deferred(&self) -> Result<Box<dyn ReadView>> {
        self.read()
    }

    /// Runs `body` on the newest state with no other commit landing in between (by exclusion,
    /// or by retrying the body on conflict: it may run more than once, so it must not act
    /// beyond what it stages), then commits what it staged as one atomic unit. Returns once
    /// that commit is durable (per the backend's durability), or once the state the body
    /// decided on is, when it staged nothing. A body that returns `Ok` commits what it staged
    /// even when its answer is a refusal, so a refusing body stages nothing (or clears). An
    /// error means nothing was committed — except an IO fault after the commit reached storage,
    /// when durability cannot be known: the backend is then poisoned and refuses every later
    /// call (reads too, with `Error::Poisoned`) until reopened; and a server's connection lost
    /// during COMMIT, answered with the backend's typed error (`backend_kit` says when that
    /// poisons). A panic in the body or the
    /// commit poisons the same way: nothing continues on state it may have left half-updated.
    fn transact(&self, body: &mut TxBody<'_>) -> Result<()>;

    /// [`Backend::transact`], honouring rows staged by [`WriteSet::write_new`]: when one finds a
    /// row at its key at commit, nothing of the write set is committed and the answer is
    /// [`Committed::Taken`]. (Through plain `transact` such a row is an ordinary put.) The
    /// default checks each on the body's view after the body, in the same transaction (the
    /// embedded and in-memory backends decide under exclusion, so check-then-put is exact); a
    /// backend that detects conflicts (PostgreSQL) lets a unique insert decide instead.
    fn transact_new(&self, body: &mut TxBody<'_>) -> Result<Committed> {
        let mut taken = false;
        self.transact(&mut |view, ws| {
            taken = false;
            body(view, ws)?;
            for key in ws.new_only_keys() {
                if view.meta(key)?.is_some() {
                    taken = true;
                    break;
                }
            }
            if taken {
                ws.clear();
            }
            Ok(())
        })?;
        Ok(if taken { Committed::Taken } else { Committed::Done })
    }

    /// A page of `scope`'s change feed after `since`, at most `limit` changes (`feed.rs`). The
    /// default: refused, for a backend that keeps no feed.
    fn changes(&self, _scope: &str, _since: &Cursor, _limit: usize) -> Result<ChangePage> {
        Err(crate::Error::Unsupported(crate::Unsupported {
            what: "changes".into(),
            backend: "this backend's",
            why: "it keeps no change feed",
        }))
    }

    /// Gives back the space of what was deleted, where the backend keeps it until asked (the
    /// engine's compaction). Changes no state a view can see. The default does nothing.
    fn reclaim(&self) -> Result<()> {
        Ok(())
    }
}
