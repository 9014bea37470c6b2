//! The change feed: which paths of a scope changed since a cursor, in commit order, resumable
//! across reopen and across processes (docs/architecture.md, "Change feed").
//!
//! What a commit changed is computed here once, from the intents its commands staged
//! ([`feed_changes`]), like listings' size changes; each backend records it in the same commit.
//! The feed keeps ONE entry per path, its latest change: an entry is replaced (its older row
//! removed in the same commit) when its path changes again, so the feed grows with the paths
//! ever written, never with the writes. A reader whose cursor is older than what the feed can
//! answer for (a store written before the feed existed, or an entry erased by redaction) gets
//! `reset`: re-list, then carry on from the cursor answered with it.
//!
//! Positions are a backend's own commit order: the engine's commit sequence (shared by every
//! process on a store), the in-memory map's commit count, PostgreSQL's transaction ids read only
//! below every transaction still in flight (`rabosh-memory-postgres`, `feed.rs`).
//!
//! The embedded and in-memory backends keep the feed as rows (this module's [`stage_rows`] and
//! [`read_rows`]):
//! - `f:{scope}:` + the position (8 bytes big-endian, so its first byte is 0) + the path
//!   without its `/memories` root: an entry, metadata one byte of [`ChangeKind`]. Builds before
//!   issue 36 wrote `f:{scope}:{position:016x}:{path}` (hex digits sort after byte 0): both are
//!   read, each from the cursor on in position order, and merged. An older build meeting a
//!   binary entry refuses it as `Corruption` (not ours), never misreads it;
//! - the position of a path's entry, to remove it when the path changes again: in the metadata
//!   of the memory at the path when it has the compact layout (`meta.rs`), else (no memory
//!   there: deleted or renamed away; a memory with history ids; a row written before issue 36)
//!   in a row `g:{scope}:{path}`: the position (8 bytes big-endian) and a byte 1 naming a
//!   binary entry; an older build's row (8 bytes) names a hex one, and an older build refuses a
//!   9-byte row as `Corruption`. A commit that leaves a compact memory at a
//!   path removes the path's `g:` row. A build from before the compact layout keeps a `g:` row
//!   for every path it writes, and can write only paths whose metadata and `g:` row it reads,
//!   which excludes every compact memory and every row of this build (it refuses them as
//!   `Corruption`): so every path it changes has a hex entry named by its own kind of `g:` row,
//!   and it never leaves an entry behind.
//! - `f:` (no scope): the marker: the horizon, the position below which changes may be missing,
//!   and the tip, the last commit that kept the feed (a commit by a build without the feed
//!   leaves it behind, and the next one that keeps it raises the horizon).

use std::collections::{BTreeMap, HashMap};
use std::ops::ControlFlow;

use crate::backend::{Intent, ReadView, WriteOp, WriteSet};
use crate::commands::corrupt;
use crate::keys::{is_memory_key, parse};
use crate::meta::MemMeta;
use crate::{Error, Result};

/// What happened to a path, as of its latest change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ChangeKind {
    /// A memory where there was none.
    Created,
    /// New content (or metadata) of a memory that stays at its path.
    Modified,
    /// The memory at the path was removed.
    Deleted,
    /// The memory at the path was renamed away (its new path is a `RenamedTo` of the same commit).
    RenamedFrom,
    /// A memory was renamed to the path (its old path is a `RenamedFrom` of the same commit).
    RenamedTo,
}

impl ChangeKind {
    #[must_use]
    pub fn code(self) -> u8 {
        match self {
            ChangeKind::Created => 1,
            ChangeKind::Modified => 2,
            ChangeKind::Deleted => 3,
            ChangeKind::RenamedFrom => 4,
            ChangeKind::RenamedTo => 5,
        }
    }

    #[must_use]
    pub fn from_code(code: u8) -> Option<ChangeKind> {
        Some(match code {
            1 => ChangeKind::Created,
            2 => ChangeKind::Modified,
            3 => ChangeKind::Deleted,
            4 => ChangeKind::RenamedFrom,
            5 => ChangeKind::RenamedTo,
            _ => return None,
        })
    }

    /// The word the binding and the docs use.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            ChangeKind::Created => "created",
            ChangeKind::Modified => "modified",
            ChangeKind::Deleted => "deleted",
            ChangeKind::RenamedFrom => "renamedFrom",
            ChangeKind::RenamedTo => "renamedTo",
        }
    }
}

/// One memory key a commit changes, net of everything the commit did to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeedChange {
    pub key: Vec<u8>,
    pub kind: ChangeKind,
}

/// The memory keys `ws` changes, in key order, each once: what the commit found there (the first
/// row's intent) against what it leaves (the last row's). An access stamp alone is no change,
/// nor is a memory created and removed in the same commit.
#[must_use]
pub fn feed_changes(ws: &WriteSet) -> Vec<FeedChange> {
    // key → (existed before, exists after, last intent was a move)
    let mut net: BTreeMap<&[u8], (bool, bool, bool)> = BTreeMap::new();
    for (op, mark) in ws.rows() {
        let key = match op {
            WriteOp::Put { key, .. } | WriteOp::Delete { key } => key.as_slice(),
        };
        let Some(mark) = mark else { continue };
        if !is_memory_key(key) || mark.intent == Intent::Touch {
            continue;
        }
        let moved = matches!(mark.intent, Intent::Move { .. });
        let after = mark.sizes.after.is_some();
        net.entry(key)
            .and_modify(|n| {
                n.1 = after;
                n.2 = moved;
            })
            .or_insert((mark.sizes.before.is_some(), after, moved));
    }
    net.into_iter()
        .filter_map(|(key, (before, after, moved))| {
            let kind = match (before, after, moved) {
                (_, true, true) => ChangeKind::RenamedTo,
                (true, false, true) => ChangeKind::RenamedFrom,
                (false, true, false) => ChangeKind::Created,
                (true, true, false) => ChangeKind::Modified,
                (true, false, false) => ChangeKind::Deleted,
                (false, false, _) => return None,
            };
            Some(FeedChange { key: key.to_vec(), kind })
        })
        .collect()
}

/// Where a reader is: it has every change at a position below `position`, and those at
/// `position` whose path sorts at or before `after` (a page that ended inside one commit).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Cursor {
    pub position: u64,
    pub after: Option<String>,
}

impl Cursor {
    /// The opaque string handed to readers: the position in hex, then `:` and the path when the
    /// page ended inside a commit.
    #[must_use]
    pub fn encode(&self) -> String {
        match &self.after {
            None => format!("{:x}", self.position),
            Some(path) => format!("{:x}:{path}", self.position),
        }
    }

    pub fn decode(s: &str) -> Result<Cursor> {
        let bad = || Error::InvalidArgument(format!("invalid change cursor {s:?}"));
        let (position, after) = match s.split_once(':') {
            Some((p, path)) if !path.is_empty() => (p, Some(path.to_string())),
            Some(_) => return Err(bad()),
            None => (s, None),
        };
        if position.is_empty() || position.len() > 16 {
            return Err(bad());
        }
        let position = u64::from_str_radix(position, 16).map_err(|_| bad())?;
        Ok(Cursor { position, after })
    }

    /// Whether the entry at `position`/`path` is past this cursor.
    #[must_use]
    pub fn before(&self, position: u64, path: &str) -> bool {
        position > self.position
            || (position == self.position && self.after.as_deref().is_none_or(|after| path > after))
    }
}

/// One change a page answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub path: String,
    pub kind: ChangeKind,
}

/// Changes after a cursor, oldest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangePage {
    pub changes: Vec<Change>,
    /// Where the next read starts.
    pub cursor: Cursor,
    /// The cursor asked for is older than what the feed answers for: `changes` is empty, and
    /// the reader re-lists the scope, then reads on from `cursor`.
    pub reset: bool,
}

/// A page of no changes whose cursor is the state read: what a reader starting now (not from
/// the feed's start) goes on from. Asked for with a limit of 0.
#[must_use]
pub fn now(end: u64) -> ChangePage {
    ChangePage { changes: Vec::new(), cursor: Cursor { position: end, after: None }, reset: false }
}

/// The most changes a page holds.
pub const MAX_PAGE: usize = 10_000;
/// Changes per page when the reader does not say.
pub const DEFAULT_PAGE: usize = 1_000;

pub(crate) const HORIZON_KEY: &[u8] = b"f:";

fn entries_prefix(scope: &str) -> String {
    format!("f:{scope}:")
}

/// Positions below this are written in the binary entry key (its first byte is then 0, below
/// every hex digit): every position a store will reach.
const BINARY_BELOW: u64 = 1 << 56;

/// The entry this build writes at `position`: binary (`f:{scope}:` + 8 bytes big-endian + the
/// path without its `/memories` root), or the hex layout of older builds past [`BINARY_BELOW`].
fn entry_key(scope: &str, position: u64, path: &str) -> Vec<u8> {
    match path.strip_prefix(crate::ROOT) {
        Some(rest) if position < BINARY_BELOW => {
            let mut key = entries_prefix(scope).into_bytes();
            key.extend_from_slice(&position.to_be_bytes());
            key.extend_from_slice(rest.as_bytes());
            key
        }
        _ => hex_entry_key(scope, position, path),
    }
}

/// The entry layout of builds before issue 36's binary keys (still read, and written past
/// [`BINARY_BELOW`]).
fn hex_entry_key(scope: &str, position: u64, path: &str) -> Vec<u8> {
    format!("f:{scope}:{position:016x}:{path}").into_bytes()
}

fn pointer_key(scope: &str, path: &str) -> Vec<u8> {
    format!("g:{scope}:{path}").into_bytes()
}

/// A `g:` row of this build: the position and a byte 1 (its entry's key is [`entry_key`]'s), so
/// an older build, which reads 8 bytes only, refuses it rather than remove the wrong key.
fn pointer_meta(position: u64) -> Vec<u8> {
    let mut m = position.to_be_bytes().to_vec();
    m.push(1);
    m
}

/// The key of the entry a `g:` row names: 8 bytes (an older build's row) name a hex entry.
fn pointed_entry(scope: &str, path: &str, key: &[u8], meta: &[u8]) -> Result<Vec<u8>> {
    let position = |bytes: &[u8]| u64::from_be_bytes(bytes.try_into().unwrap_or_default());
    match meta {
        [p @ .., 1] if p.len() == 8 => Ok(entry_key(scope, position(p), path)),
        p if p.len() == 8 => Ok(hex_entry_key(scope, position(p), path)),
        _ => Err(corrupt(key, "a change feed pointer is not ours")),
    }
}

/// The feed's marker (`f:`): the horizon (changes at positions below it may be missing) and the
/// tip (the last commit that kept the feed). None: no commit has kept one.
fn marker(view: &dyn ReadView) -> Result<Option<(u64, u64)>> {
    let Some(meta) = view.meta(HORIZON_KEY)? else { return Ok(None) };
    let bytes: [u8; 16] =
        meta.as_slice().try_into().map_err(|_| corrupt(HORIZON_KEY, "the change feed's marker is not 16 bytes"))?;
    let (horizon, tip) = bytes.split_at(8);
    Ok(Some((
        u64::from_be_bytes(horizon.try_into().unwrap_or_default()),
        u64::from_be_bytes(tip.try_into().unwrap_or_default()),
    )))
}

/// The feed's rows for a commit at `position` whose write set is `ws`, decided on `view` (the
/// state the commit applies to, read under the backend's exclusion): each changed path's entry
/// replaced, each erased one removed (raising the horizon past this commit), and the marker
/// moved to this commit. When the commit before this one did not keep the feed (a store
/// written before it existed, or by a build without it), the changes up to here may be missing:
/// the horizon rises to this commit, unless no commit at all came before (`first`).
///
/// A memory the commit leaves at a changed path gets the entry's position in its metadata
/// (`ws` is restamped: the compact layout, `meta.rs`) and the path loses its `g:` row; a path
/// left without a memory, or whose memory keeps the fixed layout (history ids), gets its `g:`
/// row. The entry a path had is the one its memory's metadata named when the command read it,
/// else its `g:` row's.
pub(crate) fn stage_rows(view: &dyn ReadView, ws: &mut WriteSet, position: u64, first: bool) -> Result<Vec<WriteOp>> {
    let mut ops = Vec::new();
    let mut horizon = match marker(view)? {
        Some((horizon, tip)) if tip + 1 == position => horizon,
        _ if first => 0,
        _ => position,
    };
    for (change, feed_before, last_put) in with_rows(ws) {
        let Some((scope, path)) = parse(&change.key) else { continue };
        let pointer = pointer_key(scope, path);
        let (old, had_pointer) = match feed_before {
            Some(old) => (Some(entry_key(scope, old, path)), false),
            None => match view.meta(&pointer)? {
                Some(meta) => (Some(pointed_entry(scope, path, &pointer, &meta)?), true),
                None => (None, false),
            },
        };
        if let Some(old) = old {
            ops.push(WriteOp::Delete { key: old });
        }
        ops.push(WriteOp::Put {
            key: entry_key(scope, position, path),
            value: Vec::new(),
            meta: vec![change.kind.code()],
        });
        let carried = match last_put.and_then(|i| ws.put_meta_mut(i)) {
            Some((key, meta)) => {
                let stamped = MemMeta { feed_position: Some(position), ..MemMeta::decode(key, meta)? };
                *meta = stamped.encode();
                MemMeta::decode(key, meta)?.feed_position.is_some()
            }
            None => false,
        };
        if !carried {
            ops.push(WriteOp::Put { key: pointer, value: Vec::new(), meta: pointer_meta(position) });
        } else if had_pointer {
            ops.push(WriteOp::Delete { key: pointer });
        }
    }
    let replace = |ops: &mut Vec<WriteOp>, scope: &str, path: &str| -> Result<()> {
        let pointer = pointer_key(scope, path);
        if let Some(meta) = view.meta(&pointer)? {
            ops.push(WriteOp::Delete { key: pointed_entry(scope, path, &pointer, &meta)? });
        }
        Ok(())
    };
    for key in ws.forgotten() {
        let Some((scope, path)) = parse(key) else { continue };
        replace(&mut ops, scope, path)?;
        ops.push(WriteOp::Delete { key: pointer_key(scope, path) });
        horizon = position + 1;
    }
    let mut marker = horizon.to_be_bytes().to_vec();
    marker.extend_from_slice(&position.to_be_bytes());
    ops.push(WriteOp::Put { key: HORIZON_KEY.to_vec(), value: Vec::new(), meta: marker });
    Ok(ops)
}

/// Each change of `ws` with the feed position its memory's metadata named before the commit
/// (the first row's, as its command read it) and the index of the put that leaves the memory
/// there (None: the last row at its key deletes it).
fn with_rows(ws: &WriteSet) -> Vec<(FeedChange, Option<u64>, Option<usize>)> {
    let mut rows: HashMap<&[u8], (Option<u64>, Option<usize>)> = HashMap::new();
    for (i, (op, mark)) in ws.rows().enumerate() {
        let Some(mark) = mark else { continue };
        let (key, put) = match op {
            WriteOp::Put { key, .. } => (key.as_slice(), Some(i)),
            WriteOp::Delete { key } => (key.as_slice(), None),
        };
        rows.entry(key).and_modify(|r| r.1 = put).or_insert((mark.feed_before, put));
    }
    feed_changes(ws)
        .into_iter()
        .map(|change| {
            let (before, put) = rows.get(change.key.as_slice()).copied().unwrap_or_default();
            (change, before, put)
        })
        .collect()
}

/// The hex prefixes that cover positions `from..` in order: `from` itself, then for each digit
/// from the last, the larger values of that digit after the digits before it. Each is one seek
/// of an ordered prefix scan, so a read starts at its cursor, never at the feed's oldest entry.
fn prefixes_from(from: u64) -> Vec<String> {
    let digits = format!("{from:016x}");
    let mut out = vec![digits.clone()];
    for i in (0..16).rev() {
        let d = (digits.as_bytes()[i] as char).to_digit(16).unwrap_or(15);
        for e in d + 1..16 {
            out.push(format!("{}{e:x}", &digits[..i]));
        }
    }
    out
}

/// A page of `scope`'s feed after `since`, read on `view`, whose state is every commit below
/// position `end` (and none at or after it).
pub(crate) fn read_rows(
    view: &dyn ReadView,
    scope: &str,
    since: &Cursor,
    limit: usize,
    end: u64,
) -> Result<ChangePage> {
    let limit = limit.min(MAX_PAGE);
    // Positions a reader may be handed: up to the last commit known to have kept the feed. A
    // commit after it that did not (an older build's) is behind the horizon the next commit
    // that keeps the feed raises, so no reader passes over it without a reset.
    let (horizon, end) = match marker(view)? {
        Some((horizon, tip)) => (horizon, end.min(tip + 1)),
        // A store with commits from before the feed existed, none since: all of them missing.
        None if end > 1 => (end, end),
        None => (0, end),
    };
    if limit == 0 {
        return Ok(now(end));
    }
    if since.position < horizon || since.position > end {
        return Ok(ChangePage { changes: Vec::new(), cursor: Cursor { position: end, after: None }, reset: true });
    }
    // Entries in both key layouts, each read in position order from the cursor, then merged.
    let mut changes = binary_entries(view, scope, since, limit, end)?;
    changes.extend(hex_entries(view, scope, since, limit, end)?);
    changes.sort_by(|a, b| (a.0, &a.1.path).cmp(&(b.0, &b.1.path)));
    if changes.len() >= limit {
        changes.truncate(limit);
        let (position, last) = changes.last().map(|(p, c)| (*p, c.path.clone())).unwrap_or_default();
        let changes = changes.into_iter().map(|(_, c)| c).collect();
        return Ok(ChangePage { changes, cursor: Cursor { position, after: Some(last) }, reset: false });
    }
    let changes = changes.into_iter().map(|(_, c)| c).collect();
    Ok(ChangePage { changes, cursor: Cursor { position: end, after: None }, reset: false })
}

fn entry_kind(key: &[u8], meta: &[u8]) -> Result<ChangeKind> {
    meta.first()
        .copied()
        .and_then(ChangeKind::from_code)
        .ok_or_else(|| corrupt(key, "a change feed entry's kind is not ours"))
}

/// Up to `limit` binary entries after `since` and below `end`, in position order: one seek.
fn binary_entries(
    view: &dyn ReadView,
    scope: &str,
    since: &Cursor,
    limit: usize,
    end: u64,
) -> Result<Vec<(u64, Change)>> {
    let base = entries_prefix(scope).into_bytes();
    let mut prefix = base.clone();
    prefix.push(0);
    // Every entry at the cursor's position sorts after this key (a path follows it).
    let mut from = base.clone();
    from.extend_from_slice(&since.position.to_be_bytes());
    let mut out = Vec::new();
    let mut failed = None;
    view.scan_prefix_after(&prefix, Some(&from), &mut |key, meta| {
        let parsed = key[base.len()..].split_at_checked(8).and_then(|(p, path)| {
            let path = std::str::from_utf8(path).ok()?;
            Some((u64::from_be_bytes(p.try_into().ok()?), format!("{}{path}", crate::ROOT)))
        });
        let Some((position, path)) = parsed else {
            failed = Some(corrupt(key, "a change feed entry's key is not ours"));
            return ControlFlow::Break(());
        };
        if position >= end {
            return ControlFlow::Break(());
        }
        if !since.before(position, &path) {
            return ControlFlow::Continue(());
        }
        match entry_kind(key, meta) {
            Ok(kind) => out.push((position, Change { path, kind })),
            Err(e) => {
                failed = Some(e);
                return ControlFlow::Break(());
            }
        }
        if out.len() == limit { ControlFlow::Break(()) } else { ControlFlow::Continue(()) }
    })?;
    failed.map_or(Ok(out), Err)
}

/// Up to `limit` entries of the hex layout (older builds') after `since` and below `end`, in
/// position order.
fn hex_entries(view: &dyn ReadView, scope: &str, since: &Cursor, limit: usize, end: u64) -> Result<Vec<(u64, Change)>> {
    let base = entries_prefix(scope);
    let mut out = Vec::new();
    let mut failed = None;
    for digits in prefixes_from(since.position) {
        let prefix = format!("{base}{digits}");
        view.scan_prefix(prefix.as_bytes(), &mut |key, meta| {
            let parsed = std::str::from_utf8(&key[base.len()..]).ok().and_then(|rest| {
                let (position, path) = rest.split_at_checked(16)?;
                Some((u64::from_str_radix(position, 16).ok()?, path.strip_prefix(':')?))
            });
            let Some((position, path)) = parsed else {
                failed = Some(corrupt(key, "a change feed entry's key is not ours"));
                return ControlFlow::Break(());
            };
            if position >= end || !since.before(position, path) {
                return ControlFlow::Continue(());
            }
            match entry_kind(key, meta) {
                Ok(kind) => out.push((position, Change { path: path.to_string(), kind })),
                Err(e) => {
                    failed = Some(e);
                    return ControlFlow::Break(());
                }
            }
            if out.len() == limit { ControlFlow::Break(()) } else { ControlFlow::Continue(()) }
        })?;
        if let Some(e) = failed {
            return Err(e);
        }
        if out.len() == limit {
            break;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_cover_every_larger_position_in_order() {
        for from in [0u64, 1, 0xf, 0x10, 0x1ab, u64::MAX - 1, u64::MAX] {
            let prefixes = prefixes_from(from);
            assert!(prefixes.windows(2).all(|w| w[0] < w[1]), "{from:x}");
            for probe in [from, from.saturating_add(1), from.saturating_add(17), from.saturating_add(4096), u64::MAX] {
                let hex = format!("{probe:016x}");
                let covering = prefixes.iter().filter(|p| hex.starts_with(p.as_str())).count();
                assert_eq!(covering, 1, "{probe:x} from {from:x}");
            }
            if from > 0 {
                let below = format!("{:016x}", from - 1);
                assert!(!prefixes.iter().any(|p| below.starts_with(p.as_str())));
            }
        }
    }

    #[test]
    fn cursors_round_trip_and_refuse_what_is_not_one() {
        for c in [Cursor::default(), Cursor { position: 0xabc, after: Some("/memories/a:b".into()) }] {
            assert_eq!(Cursor::decode(&c.encode()).unwrap(), c);
        }
        for bad in ["", "x", "1:", "11111111111111111", ":/memories/a"] {
            assert!(Cursor::decode(bad).is_err(), "{bad}");
        }
    }
}
