//! Version history: every change to a memory, recorded in the same commit as the change (see
//! `stage.rs`), readable by the host, revertible, redactable; retention; a read-only view of the
//! store at an earlier instant (`at.rs`); host edits with preconditions (`host.rs`).
//!
//! History is per scope (versions live under `h:{scope}:`), recorded by a handler built with
//! [`Memories::with_history`]. What a version holds is in `record.rs`; a `deleted` version holds
//! the path and memory id but no content, hash or size (the content it removed is the version
//! before it).

mod at;
mod host;
mod record;
mod settings;
mod stage;
mod tally;

use std::collections::HashMap;
use std::ops::ControlFlow;

use crate::commands::corrupt;
use crate::listing::try_scan;
use crate::{Error, Memories, ROOT, ReadView, Result};

pub use at::{At, Past};
pub use host::{Current, HostRemove, HostWrite, Precondition};
pub use record::{Actor, MAX_ACTOR_ID_BYTES, MAX_ACTOR_TYPE_BYTES, Operation, Version, hex, id_hex, parse_id, sha256};
pub use settings::{HistoryRequest, HistorySettings, settle_history};

use record::{version_key, versions_prefix};
use tally::Tally;

const DAY_MS: i64 = 86_400_000;

/// How long versions are kept. Retention runs at expiry (`expire_before`) and at
/// [`Memories::prune_history`]; compaction then removes the dropped bytes from disk.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct HistoryOptions {
    /// Versions older than this many days are dropped. None: kept forever.
    pub retain_days: Option<f64>,
    /// Only this many newest versions of each memory are kept. None: all.
    pub max_versions_per_memory: Option<u64>,
}

/// A filter over versions; every field set must match.
#[derive(Debug, Clone, Default)]
pub struct VersionQuery {
    pub path: Option<String>,
    pub path_prefix: Option<String>,
    pub memory_id: Option<u128>,
    pub operation: Option<Operation>,
    pub actor: Option<Actor>,
    pub since_ms: Option<i64>,
    pub until_ms: Option<i64>,
    pub limit: Option<usize>,
    /// From a previous page's `next_cursor`: only versions older than it.
    pub cursor: Option<String>,
}

/// One page of versions, newest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionPage {
    pub data: Vec<Version>,
    pub next_cursor: Option<String>,
}

/// The history's own size, apart from the memories'.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HistoryUsage {
    pub versions: u64,
    /// Content bytes the versions hold (redacted and deletion versions hold none).
    pub bytes: u64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Revert {
    /// Written as a new version (None when the content was already there: nothing to write).
    Reverted {
        version_id: Option<u128>,
    },
    UnknownVersion,
    /// The version is redacted or a deletion: it has no content to go back to.
    NoContent,
    TooLarge {
        limit: u64,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Redact {
    Redacted,
    AlreadyRedacted,
    UnknownVersion,
}

/// The versions a page holds when the query names no `limit`.
pub const DEFAULT_VERSION_PAGE: usize = 100;
/// The most versions one page may ask for (a binding refuses a larger `limit`).
pub const MAX_VERSION_PAGE: usize = 10_000;

impl Memories {
    /// Turns history on for the store at this handler's first commit, if it is not on already
    /// (with these retention options then). A handler records whenever the store records,
    /// built so or not; this is for callers that settle no store option ([`settle_history`]).
    #[must_use]
    pub fn with_history(mut self, options: HistoryOptions) -> Memories {
        self.history = Some(options);
        self
    }

    /// Who the versions this handler records name as their author; refuses an actor over the
    /// limits ([`Actor::check`]), so an accepted actor never makes a write fail.
    pub fn with_actor(mut self, actor: Actor) -> Result<Memories> {
        actor.check()?;
        self.actor = Some(actor);
        Ok(self)
    }

    /// Versions matching `q`, newest first. Lists metadata only (reads no content).
    pub fn versions(&self, q: &VersionQuery) -> Result<VersionPage> {
        let before = match &q.cursor {
            Some(c) => Some(parse_id(c).ok_or_else(|| Error::InvalidArgument(format!("invalid cursor {c:?}")))?),
            None => None,
        };
        let limit = q.limit.unwrap_or(DEFAULT_VERSION_PAGE).max(1);
        let view = self.backend.read()?;
        // From the cursor down (key order is id order): a page visits the versions it skips for
        // the filter and one past its end, never the history above the cursor.
        let before = before.map(|b| version_key(&self.options.scope, b));
        let (mut data, mut more, mut failed) = (Vec::new(), false, None);
        view.scan_prefix_rev(&versions_prefix(&self.options.scope), before.as_deref(), &mut |key, meta| {
            match Version::decode(key, meta) {
                Ok(v) if matches(q, &v) && data.len() == limit => more = true,
                Ok(v) if matches(q, &v) => data.push(v),
                Ok(_) => {}
                Err(e) => failed = Some(e),
            }
            if more || failed.is_some() { ControlFlow::Break(()) } else { ControlFlow::Continue(()) }
        })?;
        if let Some(e) = failed {
            return Err(e);
        }
        let next_cursor = if more { data.last().map(|v| id_hex(v.id)) } else { None };
        Ok(VersionPage { data, next_cursor })
    }

    /// A version and its content (None once redacted, and for a deletion).
    pub fn version(&self, id: &str) -> Result<Option<(Version, Option<String>)>> {
        let Some(id) = parse_id(id) else { return Ok(None) };
        let view = self.backend.read()?;
        let key = version_key(&self.options.scope, id);
        let Some(meta) = view.meta(&key)? else { return Ok(None) };
        let v = Version::decode(&key, &meta)?;
        let content = if v.content_sha256.is_some() {
            let bytes = view.get(&key)?.ok_or_else(|| corrupt(&key, "version record without a value"))?;
            Some(String::from_utf8(bytes).map_err(|_| corrupt(&key, "version content is not UTF-8"))?)
        } else {
            None
        };
        Ok(Some((v, content)))
    }

    /// Writes the content of version `version_id` at `path` (creating or replacing), as a new
    /// version when history is on.
    pub fn revert(&self, path: &str, version_id: &str) -> Result<Revert> {
        let Some((_, content)) = self.version(version_id)? else { return Ok(Revert::UnknownVersion) };
        let Some(content) = content else { return Ok(Revert::NoContent) };
        match self.host_put(path, &content, &Precondition::default())? {
            HostWrite::Written { version_id, .. } | HostWrite::Unchanged { version_id, .. } => {
                Ok(Revert::Reverted { version_id })
            }
            HostWrite::TooLarge { limit } => Ok(Revert::TooLarge { limit }),
            HostWrite::IsRoot => Err(Error::InvalidArgument(format!("cannot revert {ROOT} itself"))),
            HostWrite::PreconditionFailed { .. } => unreachable!("revert sets no precondition"),
        }
    }

    /// Forgets a version's content, path, hash and size (the row stays, with `redacted_ms`), then
    /// reclaims so the bytes leave the store's files. The live memory is not touched, even when
    /// this version is its current content. A failed reclaim is returned as the error; the
    /// redaction is committed then, and calling again redoes the reclaim.
    pub fn redact(&self, id: &str) -> Result<Redact> {
        let Some(id) = parse_id(id) else { return Ok(Redact::UnknownVersion) };
        let key = version_key(&self.options.scope, id);
        let now = self.clock.now_ms();
        let outcome = self.transact(|view, ws| {
            let Some(meta) = view.meta(&key)? else { return Ok(Redact::UnknownVersion) };
            let v = Version::decode(&key, &meta)?;
            if v.redacted_ms.is_some() {
                return Ok(Redact::AlreadyRedacted);
            }
            let redacted = Version { path: None, content_sha256: None, size: 0, redacted_ms: Some(now), ..v };
            let mut tally = Tally::read(view, &self.options.scope)?;
            tally.remove(v.size);
            tally.add(0);
            tally.stage(ws, &self.options.scope);
            ws.put(key.clone(), Vec::new(), redacted.encode());
            // The change feed names paths too: the path of a memory that is gone leaves it with
            // the version's (a live memory's path is in its own key anyway).
            if let Some(path) = &v.path {
                let live = crate::keys::key(&self.options.scope, path);
                if view.meta(&live)?.is_none() {
                    ws.forget_change(live);
                }
            }
            Ok(Redact::Redacted)
        })?;
        if outcome != Redact::UnknownVersion {
            self.backend.reclaim()?;
        }
        Ok(outcome)
    }

    /// Drops the versions past this handler's retention (one commit), then reclaims. Returns how
    /// many were dropped. With history off (or no limits) drops nothing.
    pub fn prune_history(&self) -> Result<u64> {
        let dropped = self.prune_history_unreclaimed()?;
        if dropped > 0 {
            self.backend.reclaim()?;
        }
        Ok(dropped)
    }

    /// The retention commit alone (expiry reclaims once for both of its commits).
    pub(crate) fn prune_history_unreclaimed(&self) -> Result<u64> {
        self.transact(|view, ws| {
            // The store's retention, read in the transaction (an opener may have rewritten it).
            let Some(opts) = settings::read_settings(view)?.map(|s| s.options).or(self.history) else { return Ok(0) };
            if opts.retain_days.is_none() && opts.max_versions_per_memory.is_none() {
                return Ok(0);
            }
            let cutoff = opts.retain_days.map(|d| self.clock.now_ms() - (d * DAY_MS as f64) as i64);
            let mut per_memory: HashMap<u128, Vec<(u128, i64, u64)>> = HashMap::new();
            try_scan(view, &versions_prefix(&self.options.scope), &mut |key, meta| {
                let v = Version::decode(key, meta)?;
                per_memory.entry(v.memory_id).or_default().push((v.id, v.created_ms, v.size));
                Ok(())
            })?;
            let mut tally = Tally::read(view, &self.options.scope)?;
            let mut dropped = 0;
            for versions in per_memory.values() {
                let keep = opts.max_versions_per_memory.map_or(usize::MAX, |n| n as usize);
                let excess = versions.len().saturating_sub(keep);
                for (n, (id, created, size)) in versions.iter().enumerate() {
                    if n < excess || cutoff.is_some_and(|c| *created < c) {
                        ws.delete(version_key(&self.options.scope, *id));
                        tally.remove(*size);
                        dropped += 1;
                    }
                }
            }
            if dropped > 0 {
                tally.stage(ws, &self.options.scope);
            }
            Ok(dropped)
        })
    }

    /// How many versions the scope holds and their content bytes, apart from [`Memories::usage`].
    /// Reads the scope's running count (one key), not the versions.
    pub fn history_usage(&self) -> Result<HistoryUsage> {
        Ok(Tally::read(&*self.backend.read()?, &self.options.scope)?.usage)
    }
}

/// The versions of every scope in `view` and their content bytes (a store-wide figure, for
/// stats): a few keys per scope (its running count), never the versions themselves.
pub fn history_usage_of(view: &dyn ReadView) -> Result<HistoryUsage> {
    tally::store_usage(view)
}

fn matches(q: &VersionQuery, v: &Version) -> bool {
    let path = v.path.as_deref();
    q.path.as_deref().is_none_or(|p| path == Some(p))
        && q.path_prefix.as_deref().is_none_or(|p| path.is_some_and(|path| under(path, p)))
        && q.memory_id.is_none_or(|m| v.memory_id == m)
        && q.operation.is_none_or(|o| v.operation == o)
        && q.actor.as_ref().is_none_or(|a| v.actor.as_ref() == Some(a))
        && q.since_ms.is_none_or(|s| v.created_ms >= s)
        && q.until_ms.is_none_or(|u| v.created_ms <= u)
}

/// `path` is `prefix` or below it (a directory prefix, so `/memories/a` does not match `/memories/ab`).
fn under(path: &str, prefix: &str) -> bool {
    let prefix = prefix.trim_end_matches('/');
    path == prefix || path.strip_prefix(prefix).is_some_and(|rest| rest.starts_with('/'))
}
