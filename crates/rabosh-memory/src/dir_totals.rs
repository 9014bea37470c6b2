//! Per-directory totals kept in the store itself, so a listing after a fresh open reads the
//! records of the lines it prints, not every memory below them (issue 36: the root of a million
//! memories listed without a scan of the million).
//!
//! # Records (engine keyspace, outside the memory prefix `m:`)
//!
//! - `t:{scope}:{depth:04x}:{dir}` for every directory with a memory strictly below it: `dir` a
//!   path (`/memories`, `/memories/a`), `depth` its number of segments below `/memories`. The
//!   metadata (no value) is a version byte (1) and five little-endian u64: every memory strictly
//!   below (`all_n`, `all_b`), those whose path below `dir` has no hidden segment (`vis_n`,
//!   `vis_b`), and the memories directly in `dir` (`files`). A directory whose `all_n` reaches 0
//!   has no record. The depth in the key makes a directory's children (and grandchildren) one
//!   contiguous range each, so a listing reads them without the levels below.
//! - `t:` the marker: a version byte (1) and the sequence number (u64 big-endian) of the last
//!   commit that kept the records. They describe a state only when the marker names its commit:
//!   a commit by a build that does not keep them (an older one, in shared mode too) leaves the
//!   marker behind, and every reader falls back to the scans until a rebuild
//!   ([`EmbeddedStore::open`](crate::EmbeddedStore::open) runs one when it finds them stale).
//!
//! Every commit that keeps them updates them from `size_changes` of its own write set (sizes the
//! commands read in the transaction), in the same engine batch, so they are exactly as atomic
//! and as durable as the memories.

use std::collections::BTreeMap;
use std::ops::ControlFlow;

use crate::backend::{DirSummary, ReadView, WriteOp};
use crate::browse::{Child, Children};
use crate::commands::corrupt;
use crate::dir_rows::{DirRow, summary_of_rows};
use crate::keys::{hidden, parse, segments, subtree_prefix};
use crate::listing::try_scan;
use crate::listing_delta::SizeChange;
use crate::meta::MemMeta;
use crate::{ROOT, Result, Usage};

/// The marker's key.
pub(crate) const MARKER_KEY: &[u8] = b"t:";
/// Every record's prefix (the marker's key too).
const PREFIX: &[u8] = b"t:";
const VERSION: u8 = 1;

/// What one directory's record holds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Totals {
    pub all_n: u64,
    pub all_b: u64,
    pub vis_n: u64,
    pub vis_b: u64,
    pub files: u64,
}

impl Totals {
    fn encode(&self) -> Vec<u8> {
        let mut m = Vec::with_capacity(41);
        m.push(VERSION);
        for v in [self.all_n, self.all_b, self.vis_n, self.vis_b, self.files] {
            m.extend_from_slice(&v.to_le_bytes());
        }
        m
    }

    fn decode(key: &[u8], meta: &[u8]) -> Result<Totals> {
        if meta.len() != 41 || meta[0] != VERSION {
            return Err(corrupt(key, "a directory's totals are not 41 bytes of version 1"));
        }
        let word = |i: usize| u64::from_le_bytes(meta[1 + 8 * i..9 + 8 * i].try_into().expect("eight bytes"));
        Ok(Totals { all_n: word(0), all_b: word(1), vis_n: word(2), vis_b: word(3), files: word(4) })
    }

    /// Counts one memory of `size`; `visible`: its path below the directory has no hidden
    /// segment; `direct`: it is directly in the directory.
    fn count(&mut self, size: u64, visible: bool, direct: bool) {
        self.all_n += 1;
        self.all_b += size;
        if visible {
            self.vis_n += 1;
            self.vis_b += size;
        }
        if direct {
            self.files += 1;
        }
    }
}

/// The key of directory `dir` (at `depth` below `/memories`) of `scope`.
fn record_key(scope: &str, depth: usize, dir: &str) -> Vec<u8> {
    format!("t:{scope}:{depth:04x}:{dir}").into_bytes()
}

/// The prefix of every directory of `scope` at `depth` strictly below `dir`.
fn level_prefix(scope: &str, depth: usize, dir: &str) -> Vec<u8> {
    format!("t:{scope}:{depth:04x}:{dir}/").into_bytes()
}

fn marker_meta(seq: u64) -> Vec<u8> {
    let mut m = vec![VERSION];
    m.extend_from_slice(&seq.to_be_bytes());
    m
}

/// Whether the records describe the state `view` reads (at `seq`): the marker names `seq`, or
/// nothing was ever committed (no memory, no record).
pub(crate) fn current(view: &dyn ReadView, seq: u64) -> Result<bool> {
    let Some(meta) = view.meta(MARKER_KEY)? else { return Ok(seq == 0) };
    // Another version's marker: not ours to read; the scans answer.
    if meta.len() != 9 || meta[0] != VERSION {
        return Ok(false);
    }
    Ok(u64::from_be_bytes(meta[1..].try_into().expect("eight bytes")) == seq)
}

/// The rows that bring the records from the state `view` reads (at `seq`) to the commit at
/// `seq + 1` whose memory changes are `changes`: the directories changed and the marker. None
/// when the records are stale there (they stay so, and readers scan).
pub(crate) fn stage(view: &dyn ReadView, seq: u64, changes: &[SizeChange]) -> Result<Option<Vec<WriteOp>>> {
    if !current(view, seq)? {
        return Ok(None);
    }
    let mut deltas: BTreeMap<Vec<u8>, (Totals, Totals)> = BTreeMap::new();
    for change in changes {
        let Some((scope, path)) = parse(&change.key) else { continue };
        if !path.starts_with("/memories/") {
            continue;
        }
        let segs = segments(path);
        let mut dir = ROOT.to_string();
        for j in 0..segs.len() {
            let visible = segs[j..].iter().all(|s| !hidden(s));
            let direct = j + 1 == segs.len();
            let (plus, minus) = deltas.entry(record_key(scope, j, &dir)).or_default();
            if let Some(size) = change.before {
                minus.count(size, visible, direct);
            }
            if let Some(size) = change.after {
                plus.count(size, visible, direct);
            }
            dir.push('/');
            dir.push_str(segs[j]);
        }
    }
    let mut ops = Vec::with_capacity(deltas.len() + 1);
    for (key, (plus, minus)) in deltas {
        if plus == minus {
            continue;
        }
        let mut totals = match view.meta(&key)? {
            Some(meta) => Totals::decode(&key, &meta)?,
            None => Totals::default(),
        };
        for (field, p, m) in [
            (&mut totals.all_n, plus.all_n, minus.all_n),
            (&mut totals.all_b, plus.all_b, minus.all_b),
            (&mut totals.vis_n, plus.vis_n, minus.vis_n),
            (&mut totals.vis_b, plus.vis_b, minus.vis_b),
            (&mut totals.files, plus.files, minus.files),
        ] {
            *field = field
                .checked_add(p)
                .and_then(|v| v.checked_sub(m))
                .ok_or_else(|| corrupt(&key, "a directory's totals would go below zero"))?;
        }
        if totals.all_n == 0 {
            ops.push(WriteOp::Delete { key });
        } else {
            ops.push(WriteOp::Put { key, value: Vec::new(), meta: totals.encode() });
        }
    }
    ops.push(WriteOp::Put { key: MARKER_KEY.to_vec(), value: Vec::new(), meta: marker_meta(seq + 1) });
    Ok(Some(ops))
}

/// One directory on the way down to the memory being counted.
struct Level {
    name: String,
    totals: Totals,
}

/// The records recounted from every memory of the state `view` reads (at `seq`), for the commit
/// at `seq + 1` when it changes no memory: every record the store holds replaced or deleted, and
/// the marker.
pub(crate) fn rebuild(view: &dyn ReadView, seq: u64) -> Result<Vec<WriteOp>> {
    let built = recount(view)?;
    let mut ops = Vec::with_capacity(built.len() + 1);
    view.scan_prefix(PREFIX, &mut |key, _| {
        if key != MARKER_KEY && !built.contains_key(key) {
            ops.push(WriteOp::Delete { key: key.to_vec() });
        }
        ControlFlow::Continue(())
    })?;
    for (key, totals) in built {
        ops.push(WriteOp::Put { key, value: Vec::new(), meta: totals.encode() });
    }
    ops.push(WriteOp::Put { key: MARKER_KEY.to_vec(), value: Vec::new(), meta: marker_meta(seq + 1) });
    Ok(ops)
}

/// Every directory's totals counted from the memories of the state `view` reads, by record key.
/// Keys come in byte order, so a directory's memories are one run: its record is complete when
/// the run ends, and only the directories above the current memory are held.
pub(crate) fn recount(view: &dyn ReadView) -> Result<BTreeMap<Vec<u8>, Totals>> {
    let mut built: BTreeMap<Vec<u8>, Totals> = BTreeMap::new();
    let mut scope_now = String::new();
    let mut stack: Vec<Level> = Vec::new();
    let flush = |stack: &mut Vec<Level>, keep: usize, scope: &str, built: &mut BTreeMap<Vec<u8>, Totals>| {
        while stack.len() > keep {
            let depth = stack.len() - 1;
            let mut dir = ROOT.to_string();
            for level in &stack[1..] {
                dir.push('/');
                dir.push_str(&level.name);
            }
            let level = stack.pop().expect("longer than keep");
            built.insert(record_key(scope, depth, &dir), level.totals);
        }
    };
    let mut failed = None;
    view.scan_prefix(b"m:", &mut |key, meta| {
        let Some((scope, path)) = parse(key) else { return ControlFlow::Continue(()) };
        if !path.starts_with("/memories/") {
            return ControlFlow::Continue(());
        }
        let size = match MemMeta::decode(key, meta) {
            Ok(m) => m.size,
            Err(e) => {
                failed = Some(e);
                return ControlFlow::Break(());
            }
        };
        if scope != scope_now {
            flush(&mut stack, 0, &scope_now, &mut built);
            scope_now = scope.to_string();
        }
        let segs = segments(path);
        let dirs = &segs[..segs.len() - 1];
        let mut keep = stack.len().min(1);
        while keep < stack.len() && keep - 1 < dirs.len() && stack[keep].name == dirs[keep - 1] {
            keep += 1;
        }
        flush(&mut stack, keep, &scope_now, &mut built);
        if stack.is_empty() {
            stack.push(Level { name: String::new(), totals: Totals::default() });
        }
        for name in &dirs[stack.len() - 1..] {
            stack.push(Level { name: (*name).to_string(), totals: Totals::default() });
        }
        for (j, level) in stack.iter_mut().enumerate() {
            let visible = segs[j..].iter().all(|s| !hidden(s));
            level.totals.count(size, visible, j + 1 == segs.len());
        }
        ControlFlow::Continue(())
    })?;
    if let Some(e) = failed {
        return Err(e);
    }
    flush(&mut stack, 0, &scope_now, &mut built);
    Ok(built)
}

/// The record of `dir` of `scope`, when it has memories below it.
fn record(view: &dyn ReadView, scope: &str, dir: &str) -> Result<Option<Totals>> {
    let key = record_key(scope, segments(dir).len(), dir);
    view.meta(&key)?.map(|meta| Totals::decode(&key, &meta)).transpose()
}

/// Every `(key, totals)` of the directories of `scope` at `depth` below `dir`.
fn each_level(
    view: &dyn ReadView,
    scope: &str,
    depth: usize,
    dir: &str,
    visit: &mut dyn FnMut(&str, Totals) -> Result<()>,
) -> Result<()> {
    let prefix = level_prefix(scope, depth, dir);
    try_scan(view, &prefix, &mut |key, meta| {
        let rel =
            std::str::from_utf8(&key[prefix.len()..]).map_err(|_| corrupt(key, "a directory's name is not UTF-8"))?;
        visit(rel, Totals::decode(key, meta)?)
    })
}

/// `visit(name, size)` for each memory directly in `dir`, stepping over each subdirectory's keys
/// with a seek (so a directory with files beside large subdirectories reads its files only).
fn direct_files(view: &dyn ReadView, scope: &str, dir: &str, visit: &mut dyn FnMut(&str, u64)) -> Result<()> {
    let prefix = subtree_prefix(scope, dir);
    let mut after: Option<Vec<u8>> = None;
    loop {
        let mut skip = None;
        let mut failed = None;
        view.scan_prefix_after(&prefix, after.as_deref(), &mut |key, meta| {
            let rel = &key[prefix.len()..];
            if let Some(slash) = rel.iter().position(|&b| b == b'/') {
                // Past every key below `name/` (no UTF-8 byte is 0xFF).
                let mut past = key[..=prefix.len() + slash].to_vec();
                past.push(0xFF);
                skip = Some(past);
                return ControlFlow::Break(());
            }
            let parsed = std::str::from_utf8(rel)
                .map_err(|_| corrupt(key, "a memory's name is not UTF-8"))
                .and_then(|name| Ok((name, MemMeta::decode(key, meta)?.size)));
            match parsed {
                Ok((name, size)) => {
                    visit(name, size);
                    ControlFlow::Continue(())
                }
                Err(e) => {
                    failed = Some(e);
                    ControlFlow::Break(())
                }
            }
        })?;
        if let Some(e) = failed {
            return Err(e);
        }
        match skip {
            Some(past) => after = Some(past),
            None => return Ok(()),
        }
    }
}

/// What a view of `dir` lists, from the records, when they describe the state `view` reads (at
/// `seq`) and it prints at most `max_lines` lines: reads `dir`'s record, its children's and
/// grandchildren's, then the memories directly in those directories that have any. None when the
/// records are stale or the listing may print more (each name at depth 1 and 2 prints at most two
/// lines, as `Dir::listing_lines_exceed` counts).
pub(crate) fn summary(
    view: &dyn ReadView,
    seq: u64,
    scope: &str,
    dir: &str,
    max_lines: u64,
) -> Result<Option<DirSummary>> {
    if !current(view, seq)? {
        return Ok(None);
    }
    let Some(own) = record(view, scope, dir)? else { return Ok(Some(DirSummary::default())) };
    let depth = segments(dir).len();
    let mut names = own.files;
    let mut with_files = Vec::new();
    each_level(view, scope, depth + 1, dir, &mut |child, totals| {
        names += 1 + totals.files;
        if totals.files > 0 {
            with_files.push(child.to_string());
        }
        Ok(())
    })?;
    let mut rows = Vec::new();
    each_level(view, scope, depth + 2, dir, &mut |rel, t| {
        rows.push(DirRow { r: rel.to_string(), f: false, n: t.all_n, b: t.all_b, vn: t.vis_n, vb: t.vis_b });
        Ok(())
    })?;
    // A name that is a memory and a directory at once is counted twice: a bound, not a count.
    if (names + rows.len() as u64).saturating_mul(2) > max_lines {
        return Ok(None);
    }
    let file_row = |r: String, size: u64| DirRow { r, f: true, n: 1, b: size, vn: 0, vb: 0 };
    if own.files > 0 {
        direct_files(view, scope, dir, &mut |name, size| rows.push(file_row(name.to_string(), size)))?;
    }
    for child in with_files {
        let path = format!("{dir}/{child}");
        direct_files(view, scope, &path, &mut |name, size| rows.push(file_row(format!("{child}/{name}"), size)))?;
    }
    Ok(Some(summary_of_rows(&rows)))
}

/// The names directly under `dir`, from its record, its children's records and the memories
/// directly in it (never those further below), when the records describe the state `view`
/// reads (at `seq`).
pub(crate) fn children(view: &dyn ReadView, seq: u64, scope: &str, dir: &str) -> Result<Option<Children>> {
    if !current(view, seq)? {
        return Ok(None);
    }
    let Some(own) = record(view, scope, dir)? else { return Ok(Some(Children::default())) };
    let mut names: BTreeMap<String, Child> = BTreeMap::new();
    each_level(view, scope, segments(dir).len() + 1, dir, &mut |name, t| {
        let child = Child { name: name.to_string(), memory: None, memories: t.all_n, bytes: t.all_b };
        names.insert(name.to_string(), child);
        Ok(())
    })?;
    if own.files > 0 {
        direct_files(view, scope, dir, &mut |name, size| {
            let child =
                names.entry(name.to_string()).or_insert_with(|| Child { name: name.to_string(), ..Child::default() });
            child.memory = Some(size);
        })?;
    }
    let entries: Vec<Child> = names.into_values().collect();
    Ok(Some(Children { memories: own.all_n, bytes: own.all_b, total: entries.len() as u64, entries, next: None }))
}

/// Every memory of `scope` from the root's record, when the records are current.
pub(crate) fn usage(view: &dyn ReadView, seq: u64, scope: &str) -> Result<Option<Usage>> {
    if !current(view, seq)? {
        return Ok(None);
    }
    let own = record(view, scope, ROOT)?.unwrap_or_default();
    Ok(Some(Usage { memories: own.all_n, bytes: own.all_b }))
}

/// Every record of the state `view` reads, by key (for tests comparing them with a recount).
#[cfg(test)]
pub(crate) fn stored(view: &dyn ReadView) -> Result<BTreeMap<Vec<u8>, Totals>> {
    let mut out = BTreeMap::new();
    let mut failed: Option<crate::Error> = None;
    view.scan_prefix(PREFIX, &mut |key, meta| {
        if key == MARKER_KEY {
            return ControlFlow::Continue(());
        }
        match Totals::decode(key, meta) {
            Ok(t) => {
                out.insert(key.to_vec(), t);
                ControlFlow::Continue(())
            }
            Err(e) => {
                failed = Some(e);
                ControlFlow::Break(())
            }
        }
    })?;
    failed.map_or(Ok(out), Err)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

    use proptest::prelude::*;

    use super::*;
    use crate::backend::Visit;
    use crate::listing::scan_summary;
    use crate::{Clock, EmbeddedOptions, EmbeddedStore, HistoryOptions, Memories, MemoryOptions, VersionQuery, id_hex};

    fn open(dir: &std::path::Path) -> Arc<EmbeddedStore> {
        let options = EmbeddedOptions { shared: true, segment_bytes: 16 << 10, ..Default::default() };
        EmbeddedStore::open(dir, options).unwrap()
    }

    /// A handler whose clock moves one millisecond a call, shared by both handles.
    fn handler(store: &Arc<EmbeddedStore>, clock: &Arc<AtomicI64>) -> Memories {
        let clock = clock.clone();
        Memories::new(store.clone(), MemoryOptions::default())
            .unwrap()
            .with_clock(Clock::from_fn(move || clock.fetch_add(1, Ordering::Relaxed)))
            .with_history(HistoryOptions::default())
    }

    /// The records equal a recount of the memories, and every listing they answer equals a scan.
    fn check(store: &EmbeddedStore, dirs: &[String]) -> std::result::Result<bool, TestCaseError> {
        let snap = store.snapshot().unwrap();
        if !current(&snap, snap.seq()).unwrap() {
            return Ok(false);
        }
        prop_assert_eq!(stored(&snap).unwrap(), recount(&snap).unwrap());
        for dir in dirs {
            let kept = summary(&snap, snap.seq(), "default", dir, u64::MAX).unwrap().expect("current");
            prop_assert_eq!(kept, scan_summary(&snap, "default", dir).unwrap(), "{}", dir);
            let names = children(&snap, snap.seq(), "default", dir).unwrap().expect("current");
            prop_assert_eq!(names, crate::browse::scan_children(&snap, "default", dir).unwrap(), "{}", dir);
        }
        Ok(true)
    }

    #[derive(Debug, Clone)]
    enum Op {
        Create(String, usize),
        Replace(String),
        Insert(String),
        Delete(String),
        Rename(String, String),
        Expire(i64),
        Revert(String),
        /// The handle commits as a build without totals from now on (until reopened).
        OldBuild,
        Reopen,
    }

    fn path() -> impl Strategy<Value = String> {
        let seg = prop_oneof![
            Just("a"),
            Just("b"),
            Just("c.md"),
            Just(".h"),
            Just("node_modules"),
            Just("\u{1F600}"),
            Just("\u{FF5E}")
        ];
        prop::collection::vec(seg, 1..4).prop_map(|s| format!("/memories/{}", s.join("/")))
    }

    fn op() -> impl Strategy<Value = (usize, Op)> {
        let op = prop_oneof![
            6 => (path(), 0..40usize).prop_map(|(p, n)| Op::Create(p, n)),
            2 => path().prop_map(Op::Replace),
            2 => path().prop_map(Op::Insert),
            2 => path().prop_map(Op::Delete),
            2 => (path(), path()).prop_map(|(a, b)| Op::Rename(a, b)),
            1 => (0..30i64).prop_map(Op::Expire),
            1 => path().prop_map(Op::Revert),
            1 => Just(Op::OldBuild),
            1 => Just(Op::Reopen),
        ];
        (0..2usize, op)
    }

    fn run(m: &Memories, op: &Op, now: i64) {
        match op {
            Op::Create(p, n) => drop(m.create(p, &"x".repeat(*n))),
            Op::Replace(p) => drop(m.str_replace(p, "x", "yyy")),
            Op::Insert(p) => drop(m.insert(p, Some(0), "line\n")),
            Op::Delete(p) => drop(m.delete(p)),
            Op::Rename(a, b) => drop(m.rename(a, b)),
            Op::Expire(back) => drop(m.expire_before(now - back).unwrap()),
            Op::Revert(p) => {
                let q = VersionQuery { path: Some(p.clone()), ..Default::default() };
                if let Some(v) = m.versions(&q).unwrap().data.last() {
                    drop(m.revert(p, &id_hex(v.id)));
                }
            }
            Op::OldBuild | Op::Reopen => unreachable!("store-level"),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]
        /// After any sequence of commands from two handles in shared mode (every command, history
        /// revert, expiry, reopen, and commits of a build that does not keep the totals), the
        /// records are either marked stale or equal a recount, and every listing they answer equals
        /// a scan; a reopen always leaves them current.
        #[test]
        fn totals_equal_a_recount_after_any_commands(ops in prop::collection::vec(op(), 1..40)) {
            let tmp = tempfile::tempdir().unwrap();
            let dir = tmp.path().join("store");
            let clock = Arc::new(AtomicI64::new(1_000));
            let mut stores = [open(&dir), open(&dir)];
            let mut handlers = [handler(&stores[0], &clock), handler(&stores[1], &clock)];
            let mut dirs = vec![ROOT.to_string()];
            let mut stale = false;
            for (h, op) in &ops {
                match op {
                    Op::Reopen => {
                        drop(handlers);
                        for s in &stores {
                            s.close().unwrap();
                        }
                        stores = [open(&dir), open(&dir)];
                        handlers = [handler(&stores[0], &clock), handler(&stores[1], &clock)];
                        stale = false;
                        prop_assert!(check(&stores[0], &dirs)?, "stale after a reopen");
                    }
                    Op::OldBuild => {
                        stores[*h].act_as_a_build_without_totals();
                        stale = true;
                    }
                    op => {
                        if let Op::Create(p, _) | Op::Rename(_, p) = op {
                            let segs = segments(p);
                            for d in 1..segs.len() {
                                dirs.push(format!("{ROOT}/{}", segs[..d].join("/")));
                            }
                        }
                        run(&handlers[*h], op, clock.load(Ordering::Relaxed));
                        let current = check(&stores[*h], &dirs)?;
                        prop_assert!(current || stale, "stale with every handle keeping them");
                    }
                }
            }
        }
    }

    /// Counts the memory keys a view's scans visit.
    struct Counting<'a> {
        inner: &'a dyn ReadView,
        memories: AtomicU64,
    }

    impl ReadView for Counting<'_> {
        fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
            self.inner.get(key)
        }
        fn meta(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
            self.inner.meta(key)
        }
        fn scan_prefix(&self, prefix: &[u8], visit: &mut Visit<'_>) -> Result<()> {
            self.inner.scan_prefix(prefix, &mut |k, m| {
                if k.starts_with(b"m:") {
                    self.memories.fetch_add(1, Ordering::Relaxed);
                }
                visit(k, m)
            })
        }
        fn scan_prefix_after(&self, prefix: &[u8], after: Option<&[u8]>, visit: &mut Visit<'_>) -> Result<()> {
            self.inner.scan_prefix_after(prefix, after, &mut |k, m| {
                if k.starts_with(b"m:") {
                    self.memories.fetch_add(1, Ordering::Relaxed);
                }
                visit(k, m)
            })
        }
    }

    /// Issue 36: after a reopen, the root's listing reads the records of the lines it prints and
    /// the memories it prints (plus one key per subdirectory stepped over), never the memories
    /// deeper down, and builds no index.
    #[test]
    fn the_roots_listing_after_reopen_reads_what_it_prints() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("store");
        let store = open(&dir);
        let m = Memories::new(store.clone(), MemoryOptions::default()).unwrap();
        for d in 0..4 {
            m.create(&format!("/memories/top{d}.md"), "t").unwrap();
            for s in 0..3 {
                m.create(&format!("/memories/d{d}/file{s}.md"), "f").unwrap();
                for f in 0..25 {
                    m.create(&format!("/memories/d{d}/s{s}/f{f}.md"), "deep").unwrap();
                }
            }
        }
        drop(m);
        store.close().unwrap();
        let store = open(&dir);
        let snap = store.snapshot().unwrap();
        let counting = Counting { inner: &snap, memories: AtomicU64::new(0) };
        let listed = summary(&counting, snap.seq(), "default", ROOT, u64::MAX).unwrap().expect("current");
        assert_eq!(listed, scan_summary(&snap, "default", ROOT).unwrap());
        // Printed: 4 + 12 memories at depth 1 and 2. Stepped over: the 4 directories beside the
        // root's files, and the 3 beside each of d0..d3's.
        let read = counting.memories.load(Ordering::Relaxed);
        assert!(read <= 16 + 4 + 12, "read {read} memory keys for a listing of 16 memories");
        let m = Memories::new(store.clone(), MemoryOptions::default()).unwrap();
        assert_eq!(listed.memories, 4 * (1 + 3 + 3 * 25));
        assert_eq!(crate::View::Dir { total: listed.bytes, entries: listed.entries }, m.view(ROOT).unwrap());
        assert!(store.indexed_scopes().is_empty(), "the root's listing built the index");
    }
}
