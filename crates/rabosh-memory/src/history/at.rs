//! The store as it was at an instant, rebuilt from the versions and the live memories — and only
//! as far as they prove it: `at()` never shows a state that did not exist.
//!
//! Each memory (a memory id, or a live memory history never recorded) is, at instant `t`:
//! - with `t` at or after history was turned on (`since`, the store's settings): the state of its
//!   newest version at or before `t` — absent for a deletion; unknown for a redacted version, for
//!   a version older than `since` that is not the live state (history was off after it), and for
//!   the last version when the live memory has changed since without a version (then the live
//!   state from its `updatedAt` on). With no version at or before `t`: absent when its first
//!   version is `created`, else unknown (a version was dropped by retention, or it predates
//!   history);
//! - before `since` (or in a store that never recorded): absent before it was created, the live
//!   state from the live memory's `updatedAt` on (its last change), unknown otherwise.
//!
//! When `t` is at or after `since` and every memory is known at `t`, every view answers as the
//! model saw it. Otherwise (before `since` a memory deleted then left no trace, so it is never
//! complete) a file view of a memory known at its path still answers (no other memory can have
//! held that path then), and every other view is [`View::NotRecorded`]. [`Memories::view_at`] on
//! an `At` answers from the known memories alone; [`Memories::view_past`] also says where that is
//! not the whole truth — the binding uses it.
//!
//! Lazy: building it reads metadata only (the versions' records and the live memories'); a
//! view reads the one value it shows. It pins nothing: each view reads the store as it is then,
//! and where the store no longer proves what the `At` was built from (a version redacted or
//! dropped since, a live memory changed), it answers as an `At` built now would. A redaction is
//! so never undone by a view built before it, and holds no segment of the erased bytes.

use std::collections::{BTreeMap, HashMap};
use std::ops::{Bound, ControlFlow};
use std::sync::Mutex;

use crate::backend::{ReadView, Visit};
use crate::commands::corrupt;
use crate::keys::{check_normalised, parse, subtree_prefix};
use crate::listing::try_scan;
use crate::meta::MemMeta;
use crate::{Memories, ROOT, Result, View};

use super::record::{Operation, Version, version_key, versions_prefix};
use super::settings::read_settings;

/// Where a memory's content at the instant is read from.
#[derive(Clone)]
struct Source {
    /// A version key, or the live memory's own key.
    key: Vec<u8>,
    meta: MemMeta,
    /// The line count is not in a version record: counted from the content when first asked.
    lines_known: bool,
}

/// The scope at an instant: the memories known then (content read at each view from the store
/// as it is then), and whether that is all of them. Read it through [`Memories::view_past`], or
/// as a [`ReadView`] through [`Memories::past`].
pub struct At {
    when_ms: i64,
    map: BTreeMap<Vec<u8>, Source>,
    complete: bool,
}

impl At {
    /// Every memory's state at the instant is known: every view answers.
    #[must_use]
    pub fn complete(&self) -> bool {
        self.complete
    }
}

/// An [`At`] read through one view of the store now (the content of the memories it knows).
pub struct Past<'a> {
    at: &'a At,
    now: Box<dyn ReadView>,
    /// The last value read by `meta` (a file view asks for the metadata, then the content).
    last: Mutex<Option<(Vec<u8>, Vec<u8>)>>,
}

impl Past<'_> {
    fn content(&self, s: &Source) -> Result<Vec<u8>> {
        let mut last = self.last.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((k, v)) = last.take().filter(|(k, _)| *k == s.key) {
            *last = Some((k, v.clone()));
            return Ok(v);
        }
        let value = self.now.get(&s.key)?.ok_or_else(|| corrupt(&s.key, "record without a value"))?;
        *last = Some((s.key.clone(), value.clone()));
        Ok(value)
    }
}

impl ReadView for Past<'_> {
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.at.map.get(key).map(|s| self.content(s)).transpose()
    }

    fn meta(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        let Some(s) = self.at.map.get(key) else { return Ok(None) };
        if s.lines_known {
            return Ok(Some(s.meta.encode()));
        }
        let content = self.content(s)?;
        let text = std::str::from_utf8(&content).map_err(|_| corrupt(&s.key, "version content is not UTF-8"))?;
        let counted = MemMeta::for_content(text, s.meta.created_ms, s.meta.updated_ms, 0);
        Ok(Some(counted.encode()))
    }

    fn scan_prefix(&self, prefix: &[u8], visit: &mut Visit<'_>) -> Result<()> {
        let range = self.at.map.range::<[u8], _>((Bound::Included(prefix), Bound::Unbounded));
        for (key, s) in range.take_while(|(k, _)| k.starts_with(prefix)) {
            // Listings read the size only, which every source knows.
            if visit(key, &s.meta.encode()) == ControlFlow::Break(()) {
                break;
            }
        }
        Ok(())
    }
}

/// A live memory: its key and metadata now.
struct Live {
    key: Vec<u8>,
    meta: MemMeta,
}

enum State {
    Absent,
    /// At the memory key of its path then, read from the source.
    Known(Vec<u8>, Source),
    Unknown,
}

impl Memories {
    /// This scope as history proves it was at `when_ms` (see the module doc); answer views of
    /// it with [`Memories::view_past`].
    pub fn at(&self, when_ms: i64) -> Result<Box<At>> {
        self.at_in(&*self.backend.read()?, when_ms)
    }

    /// `at` as a read view over the store now (what [`Memories::view_past`] answers from, without
    /// its checks that the store still proves it).
    pub fn past<'a>(&self, at: &'a At) -> Result<Past<'a>> {
        Ok(Past { at, now: self.backend.read()?, last: Mutex::new(None) })
    }

    fn at_in(&self, now: &dyn ReadView, when_ms: i64) -> Result<Box<At>> {
        let scope = &self.options.scope;
        let settings = read_settings(now)?;
        let since = settings.map(|s| s.since_ms);
        let mut versions: HashMap<u128, Vec<Version>> = HashMap::new();
        try_scan(now, &versions_prefix(scope), &mut |key, meta| {
            let v = Version::decode(key, meta)?;
            versions.entry(v.memory_id).or_default().push(v); // in id (= commit) order
            Ok(())
        })?;
        let mut live_by_id: HashMap<u128, Live> = HashMap::new();
        let mut unrecorded: Vec<Live> = Vec::new();
        try_scan(now, &subtree_prefix(scope, ROOT), &mut |key, meta| {
            let live = Live { key: key.to_vec(), meta: MemMeta::decode(key, meta)? };
            match live.meta.memory_id {
                Some(id) => drop(live_by_id.insert(id, live)),
                None => unrecorded.push(live),
            }
            Ok(())
        })?;
        let after_since = since.is_some_and(|s| when_ms >= s);
        // Before history was turned on, memories deleted then left no trace: never complete.
        let mut complete = after_since;
        let mut map = BTreeMap::new();
        let mut place = |state: State, map: &mut BTreeMap<Vec<u8>, Source>| match state {
            State::Absent => {}
            State::Unknown => complete = false,
            State::Known(key, source) => drop(map.insert(key, source)),
        };
        let mut ids: Vec<u128> = versions.keys().chain(live_by_id.keys()).copied().collect();
        ids.sort_unstable();
        ids.dedup();
        for id in ids {
            let vs = versions.get(&id).map_or(&[][..], Vec::as_slice);
            let state = self.state_at(when_ms, since, after_since, vs, live_by_id.get(&id));
            place(state, &mut map);
        }
        for live in &unrecorded {
            place(self.state_at(when_ms, since, after_since, &[], Some(live)), &mut map);
        }
        Ok(Box::new(At { when_ms, map, complete }))
    }

    fn state_at(&self, t: i64, since: Option<i64>, after_since: bool, vs: &[Version], live: Option<&Live>) -> State {
        let from_live = || match live {
            Some(l) if t >= l.meta.updated_ms => {
                State::Known(l.key.clone(), Source { key: l.key.clone(), meta: l.meta, lines_known: true })
            }
            Some(l) if t < l.meta.created_ms => State::Absent,
            _ => State::Unknown,
        };
        let created_after = vs.first().is_some_and(|v| v.operation == Operation::Created && t < v.created_ms);
        if !after_since {
            return if created_after { State::Absent } else { from_live() };
        }
        let since = since.expect("after since");
        let Some(n) = vs.iter().rposition(|v| v.created_ms <= t) else {
            return match vs.first() {
                Some(v) if v.operation == Operation::Created => State::Absent,
                Some(_) => State::Unknown,
                None => from_live(),
            };
        };
        let v = &vs[n];
        let last = n + 1 == vs.len();
        // The live memory is this version's state: same version, same path (an unrecorded rename
        // keeps the version id).
        let is_live = |l: &Live| l.meta.version_id == Some(v.id) && v.path.as_deref() == parse(&l.key).map(|(_, p)| p);
        let recorded = match live {
            Some(l) => is_live(l),
            None => v.operation == Operation::Deleted,
        };
        if last && !recorded {
            return from_live();
        }
        if v.created_ms < since && !(last && recorded) {
            // History was off after this version: what followed it is not known.
            return State::Unknown;
        }
        match &v.path {
            _ if v.operation == Operation::Deleted => State::Absent,
            // Redacted: what it held is forgotten on purpose, so it is not known.
            Some(path) if v.redacted_ms.is_none() => State::Known(
                self.key(path),
                Source {
                    key: version_key(&self.options.scope, v.id),
                    meta: MemMeta { size: v.size, ..MemMeta::for_content("", v.created_ms, v.created_ms, 0) },
                    lines_known: false,
                },
            ),
            _ => State::Unknown,
        }
    }

    /// A view of `at` (never records access): the view as the model saw it then, or
    /// [`View::NotRecorded`] where history does not know it.
    /// Read from the store as it is now: where that no longer proves what `at` was built from
    /// (a redaction, a version dropped, a live memory changed since), answered as an `At` built
    /// now would answer.
    pub fn view_past(&self, at: &At, path: &str) -> Result<View> {
        check_normalised(path)?;
        let key = self.key(path);
        let now = self.backend.read()?;
        let known = path != ROOT && at.map.contains_key(&key);
        if !known && !at.complete {
            return Ok(View::NotRecorded); // a rebuild never knows more than the build did
        }
        let fresh;
        let at = match at.map.get(&key).filter(|_| known) {
            // A file view reads one memory: still proven when its source still holds it.
            Some(s) if self.still_holds(&*now, s)? => at,
            // Any other view lists what the instant held: rebuilt from the store now (a
            // redaction anywhere may have made it incomplete).
            _ => {
                fresh = self.at_in(&*now, at.when_ms)?;
                &*fresh
            }
        };
        if at.complete || (path != ROOT && at.map.contains_key(&key)) {
            return self.view_at(&Past { at, now, last: Mutex::new(None) }, path);
        }
        Ok(View::NotRecorded)
    }

    /// The source still holds what `at` was built from: the version unredacted and kept, or the
    /// live memory unchanged.
    fn still_holds(&self, now: &dyn ReadView, s: &Source) -> Result<bool> {
        let Some(meta) = now.meta(&s.key)? else { return Ok(false) };
        if s.key.starts_with(&versions_prefix(&self.options.scope)) {
            return Ok(Version::decode(&s.key, &meta)?.redacted_ms.is_none());
        }
        let m = MemMeta::decode(&s.key, &meta)?;
        let was = &s.meta;
        Ok((m.memory_id, m.version_id, m.updated_ms, m.size)
            == (was.memory_id, was.version_id, was.updated_ms, was.size))
    }
}
