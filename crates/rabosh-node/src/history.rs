//! Version history and host edits on `NativeMemories` (issue 13): its own `#[napi] impl` block,
//! so the six commands' file stays as it is. Everything is decided in rabosh-memory; outcomes
//! cross as small tagged objects the facade words (and turns into `PreconditionFailedError`).

use std::sync::Arc;

use napi::Env;
use napi::bindgen_prelude::AsyncTask;
use napi_derive::napi;
use rabosh_memory::{
    Actor, Backend, HistoryOptions, HostRemove, HostWrite, Memories, Operation, Precondition, ReadView, Redact, Revert,
    Version, VersionQuery, hex, history_usage_of, id_hex, parse_id,
};

use crate::fault::{Fault, on_js_thread};
use crate::memories::NativeMemories;
use crate::memories::view_shape;
use crate::outcome::NativeView;
use crate::store::NativeStore;
use crate::work::{Work, work};

/// Store-level history settings, passed to every handler over the store.
#[napi(object)]
pub struct NativeHistoryOptions {
    pub retain_days: Option<f64>,
    pub max_versions_per_memory: Option<f64>,
}

#[napi(object)]
#[derive(Clone)]
pub struct NativeActor {
    #[napi(js_name = "type")]
    pub kind: String,
    pub id: String,
}

#[napi(object)]
pub struct NativeVersion {
    pub id: String,
    pub memory_id: String,
    pub path: Option<String>,
    pub operation: String,
    pub actor: Option<NativeActor>,
    pub created_at_ms: f64,
    pub content_sha256: Option<String>,
    pub size_bytes: f64,
    pub redacted_at_ms: Option<f64>,
    /// Only from `version(id)`: the content, absent once redacted and for a deletion.
    pub content: Option<String>,
}

#[napi(object)]
pub struct NativeVersionQuery {
    pub path: Option<String>,
    pub path_prefix: Option<String>,
    pub memory_id: Option<String>,
    pub operation: Option<String>,
    pub actor: Option<NativeActor>,
    pub since_ms: Option<f64>,
    pub until_ms: Option<f64>,
    pub limit: Option<f64>,
    pub cursor: Option<String>,
}

#[napi(object)]
pub struct NativeVersionPage {
    pub data: Vec<NativeVersion>,
    pub next_cursor: Option<String>,
}

/// `status`: `written`, `unchanged`, `removed`, `absent`, `precondition_failed`, `too_large`,
/// `is_root`, `reverted`, `unknown_version`, `no_content`, `redacted`, `already_redacted`.
#[napi(object)]
pub struct NativeHistoryOutcome {
    pub status: String,
    pub content_sha256: Option<String>,
    pub version_id: Option<String>,
    /// For `precondition_failed`: the memory's hash now (absent: there is no memory).
    pub current_sha256: Option<String>,
    pub limit: Option<f64>,
}

#[napi(object)]
pub struct NativeCurrent {
    pub path: String,
    pub content: String,
    pub content_sha256: String,
    pub version_id: Option<String>,
}

#[napi(object)]
pub struct NativeHistoryUsage {
    pub versions: f64,
    pub bytes: f64,
}

/// A handler configured with the store's history settings and the handler's actor.
pub(crate) fn configure(m: Memories, history: Option<NativeHistoryOptions>, actor: Option<NativeActor>) -> Memories {
    let m = match history {
        Some(h) => m.with_history(HistoryOptions {
            retain_days: h.retain_days,
            max_versions_per_memory: h.max_versions_per_memory.map(|n| n as u64),
        }),
        None => m,
    };
    match actor {
        Some(a) => m.with_actor(Actor { kind: a.kind, id: a.id }),
        None => m,
    }
}

fn version_out(v: Version, content: Option<String>) -> NativeVersion {
    NativeVersion {
        id: id_hex(v.id),
        memory_id: id_hex(v.memory_id),
        content_sha256: v.sha256_hex(),
        path: v.path,
        operation: v.operation.as_str().to_string(),
        actor: v.actor.map(|a| NativeActor { kind: a.kind, id: a.id }),
        created_at_ms: v.created_ms as f64,
        size_bytes: v.size as f64,
        redacted_at_ms: v.redacted_ms.map(|t| t as f64),
        content,
    }
}

fn status(s: &str) -> NativeHistoryOutcome {
    NativeHistoryOutcome {
        status: s.to_string(),
        content_sha256: None,
        version_id: None,
        current_sha256: None,
        limit: None,
    }
}

fn id_arg(what: &str, s: &str) -> Result<u128, Fault> {
    parse_id(s).ok_or_else(|| Fault::invalid_argument(format!("{what} must be 32 hex digits, got {s:?}")))
}

fn query(q: NativeVersionQuery) -> Result<VersionQuery, Fault> {
    let operation = match q.operation {
        Some(o) => Some(Operation::parse(&o).ok_or_else(|| {
            Fault::invalid_argument(format!("operation must be created, modified, renamed or deleted, got {o:?}"))
        })?),
        None => None,
    };
    let limit = match q.limit {
        Some(l) if l.fract() == 0.0 && (1.0..=10_000.0).contains(&l) => Some(l as usize),
        Some(l) => return Err(Fault::invalid_argument(format!("limit must be an integer from 1 to 10000, got {l}"))),
        None => None,
    };
    Ok(VersionQuery {
        path: q.path,
        path_prefix: q.path_prefix,
        memory_id: q.memory_id.map(|m| id_arg("memoryId", &m)).transpose()?,
        operation,
        actor: q.actor.map(|a| Actor { kind: a.kind, id: a.id }),
        since_ms: q.since_ms.map(|t| t as i64),
        until_ms: q.until_ms.map(|t| t as i64),
        limit,
        cursor: q.cursor,
    })
}

fn host_write(w: HostWrite) -> NativeHistoryOutcome {
    match w {
        HostWrite::Written { sha256, version_id } | HostWrite::Unchanged { sha256, version_id } => {
            let written = matches!(w, HostWrite::Written { .. });
            NativeHistoryOutcome {
                content_sha256: Some(hex(&sha256)),
                version_id: version_id.map(id_hex),
                ..status(if written { "written" } else { "unchanged" })
            }
        }
        HostWrite::PreconditionFailed { current } => {
            NativeHistoryOutcome { current_sha256: current.as_ref().map(hex), ..status("precondition_failed") }
        }
        HostWrite::TooLarge { limit } => NativeHistoryOutcome { limit: Some(limit as f64), ..status("too_large") },
        HostWrite::IsRoot => status("is_root"),
    }
}

#[napi]
impl NativeMemories {
    /// Versions matching the query, newest first, one page.
    #[napi(ts_return_type = "Promise<NativeVersionPage>")]
    pub fn versions(&self, q: NativeVersionQuery) -> AsyncTask<Work<NativeVersionPage>> {
        let m = self.shared();
        work(move || {
            let page = m.versions(&query(q)?)?;
            let data = page.data.into_iter().map(|v| version_out(v, None)).collect();
            Ok(NativeVersionPage { data, next_cursor: page.next_cursor })
        })
    }

    /// One version with its content; null for an unknown id.
    #[napi(ts_return_type = "Promise<NativeVersion | null>")]
    pub fn version(&self, id: String) -> AsyncTask<Work<Option<NativeVersion>>> {
        let m = self.shared();
        work(move || Ok(m.version(&id)?.map(|(v, c)| version_out(v, c))))
    }

    #[napi(ts_return_type = "Promise<NativeHistoryOutcome>")]
    pub fn revert(&self, path: String, version_id: String) -> AsyncTask<Work<NativeHistoryOutcome>> {
        let m = self.shared();
        work(move || {
            Ok(match m.revert(&path, &version_id)? {
                Revert::Reverted { version_id } => {
                    NativeHistoryOutcome { version_id: version_id.map(id_hex), ..status("reverted") }
                }
                Revert::UnknownVersion => status("unknown_version"),
                Revert::NoContent => status("no_content"),
                Revert::TooLarge { limit } => NativeHistoryOutcome { limit: Some(limit as f64), ..status("too_large") },
            })
        })
    }

    /// Forgets a version's content, path, hash and size, then compacts the store.
    #[napi(ts_return_type = "Promise<NativeHistoryOutcome>")]
    pub fn redact(&self, id: String) -> AsyncTask<Work<NativeHistoryOutcome>> {
        let m = self.shared();
        work(move || {
            Ok(status(match m.redact(&id)? {
                Redact::Redacted => "redacted",
                Redact::AlreadyRedacted => "already_redacted",
                Redact::UnknownVersion => "unknown_version",
            }))
        })
    }

    #[napi(ts_return_type = "Promise<NativeCurrent | null>")]
    pub fn host_get(&self, path: String) -> AsyncTask<Work<Option<NativeCurrent>>> {
        let m = self.shared();
        work(move || {
            Ok(m.host_get(&path)?.map(|c| NativeCurrent {
                path: c.path,
                content: c.content,
                content_sha256: hex(&c.sha256),
                version_id: c.version_id.map(id_hex),
            }))
        })
    }

    #[napi(ts_return_type = "Promise<NativeHistoryOutcome>")]
    pub fn host_put(
        &self,
        path: String,
        content: String,
        if_match: Option<String>,
        if_none_match_any: bool,
    ) -> AsyncTask<Work<NativeHistoryOutcome>> {
        let m = self.shared();
        work(move || {
            let pre = Precondition { if_match, if_none_match_any };
            Ok(host_write(m.host_put(&path, &content, &pre)?))
        })
    }

    #[napi(ts_return_type = "Promise<NativeHistoryOutcome>")]
    pub fn host_remove(&self, path: String, if_match: Option<String>) -> AsyncTask<Work<NativeHistoryOutcome>> {
        let m = self.shared();
        work(move || {
            Ok(match m.host_remove(&path, if_match.as_deref())? {
                HostRemove::Removed { version_id } => {
                    NativeHistoryOutcome { version_id: version_id.map(id_hex), ..status("removed") }
                }
                HostRemove::Absent => status("absent"),
                HostRemove::PreconditionFailed { current } => {
                    NativeHistoryOutcome { current_sha256: Some(hex(&current)), ..status("precondition_failed") }
                }
                HostRemove::IsRoot => status("is_root"),
            })
        })
    }

    /// The history's own size, apart from `usage()`.
    #[napi(ts_return_type = "Promise<NativeHistoryUsage>")]
    pub fn history_usage(&self) -> AsyncTask<Work<NativeHistoryUsage>> {
        let m = self.shared();
        work(move || {
            let u = m.history_usage()?;
            Ok(NativeHistoryUsage { versions: u.versions as f64, bytes: u.bytes as f64 })
        })
    }

    /// Drops versions past the store's retention, then compacts; how many were dropped.
    #[napi(ts_return_type = "Promise<number>")]
    pub fn prune_history(&self) -> AsyncTask<Work<f64>> {
        let m = self.shared();
        work(move || Ok(m.prune_history()? as f64))
    }

    /// The scope as history recorded it at `when_ms`, read-only.
    #[napi(ts_return_type = "Promise<NativeAt>")]
    pub fn at(&self, when_ms: f64) -> AsyncTask<Work<NativeAt>> {
        let m = self.shared();
        work(move || {
            if !when_ms.is_finite() {
                return Err(Fault::invalid_argument(format!("at needs a finite instant, got {when_ms}")));
            }
            let view = m.at(when_ms as i64)?;
            Ok(NativeAt { memories: m, view: Arc::from(view) })
        })
    }
}

#[napi]
impl NativeStore {
    /// Versions of every scope and their content bytes; reads metadata in memory only.
    #[napi]
    pub fn history_stats(&self, env: Env) -> napi::Result<NativeHistoryUsage> {
        on_js_thread(&env, || {
            let store: Arc<dyn Backend> = self.memory_store();
            let u = history_usage_of(&*store.read()?)?;
            Ok(NativeHistoryUsage { versions: u.versions as f64, bytes: u.bytes as f64 })
        })
    }
}

/// A read-only view of an earlier instant, held in memory. Its views run on the pool like any
/// other: a listing of the past grows with the store as a listing of the present does.
#[napi]
pub struct NativeAt {
    memories: Arc<Memories>,
    view: Arc<dyn ReadView>,
}

#[napi]
impl NativeAt {
    #[napi(ts_return_type = "Promise<NativeView>")]
    pub fn view(&self, path: String, range: Option<Vec<f64>>, max_chars: f64) -> AsyncTask<Work<NativeView>> {
        let (range, max_chars) = view_shape(range, max_chars);
        let (m, view) = (self.memories.clone(), self.view.clone());
        work(move || Ok(NativeView::new(&path, m.view_at(&*view, &path)?, range, max_chars)))
    }
}
