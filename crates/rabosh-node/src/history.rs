//! Version history and host edits on `NativeMemories` (issue 13): its own `#[napi] impl` block,
//! so the six commands' file stays as it is. Everything is decided in rabosh-memory; outcomes
//! cross as typed unions (`history_outcome.rs`) the facade words (and turns into
//! `PreconditionFailedError`). This module imports the handler and the store, never the reverse
//! (what they need of history is in `history_options.rs`).

use std::sync::Arc;

use napi::Env;
use napi::bindgen_prelude::Object;
use napi_derive::napi;
use rabosh_memory::{
    Actor, At, Backend, MAX_VERSION_PAGE, Memories, Operation, Precondition, Version, VersionQuery, Workers, hex,
    history_usage_of, id_hex, parse_id,
};

use crate::fault::{Fault, on_js_thread};
use crate::history_options::{NativeActor, NativeHistorySettings};
use crate::history_outcome::{NativeHostRemove, NativeHostWrite, NativeRedact, NativeRevert};
use crate::memories::NativeMemories;
use crate::memories::view_shape;
use crate::outcome::NativeView;
use crate::reports::HistoryUsage;
use crate::store::NativeStore;
use crate::work::run_off_thread;

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

#[napi(object)]
pub struct NativeCurrent {
    pub path: String,
    pub content: String,
    pub content_sha256: String,
    pub version_id: Option<String>,
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
        Some(l) if l.fract() == 0.0 && (1.0..=MAX_VERSION_PAGE as f64).contains(&l) => {
            Some(crate::js_number::to_unsigned(l) as usize)
        }
        Some(l) => {
            return Err(Fault::invalid_argument(format!(
                "limit must be an integer from 1 to {MAX_VERSION_PAGE}, got {l}"
            )));
        }
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

#[napi]
impl NativeMemories {
    /// Versions matching the query, newest first, one page.
    #[napi(ts_return_type = "Promise<NativeVersionPage>")]
    pub fn versions<'env>(&self, env: &'env Env, q: NativeVersionQuery) -> napi::Result<Object<'env>> {
        self.off_thread(env, move |m| {
            let page = m.versions(&query(q)?)?;
            let data = page.data.into_iter().map(|v| version_out(v, None)).collect();
            Ok(NativeVersionPage { data, next_cursor: page.next_cursor })
        })
    }

    /// One version with its content; null for an unknown id.
    #[napi(ts_return_type = "Promise<NativeVersion | null>")]
    pub fn version<'env>(&self, env: &'env Env, id: String) -> napi::Result<Object<'env>> {
        self.off_thread(env, move |m| Ok(m.version(&id)?.map(|(v, c)| version_out(v, c))))
    }

    #[napi(ts_return_type = "Promise<NativeRevert>")]
    pub fn revert<'env>(&self, env: &'env Env, path: String, version_id: String) -> napi::Result<Object<'env>> {
        self.off_thread(env, move |m| -> Result<NativeRevert, Fault> { Ok(m.revert(&path, &version_id)?.into()) })
    }

    /// Forgets a version's content, path, hash and size, then compacts the store.
    #[napi(ts_return_type = "Promise<NativeRedact>")]
    pub fn redact<'env>(&self, env: &'env Env, id: String) -> napi::Result<Object<'env>> {
        self.off_thread(env, move |m| -> Result<NativeRedact, Fault> { Ok(m.redact(&id)?.into()) })
    }

    #[napi(ts_return_type = "Promise<NativeCurrent | null>")]
    pub fn host_get<'env>(&self, env: &'env Env, path: String) -> napi::Result<Object<'env>> {
        self.off_thread(env, move |m| {
            Ok(m.host_get(&path)?.map(|c| NativeCurrent {
                path: c.path,
                content: c.content,
                content_sha256: hex(&c.sha256),
                version_id: c.version_id.map(id_hex),
            }))
        })
    }

    #[napi(ts_return_type = "Promise<NativeHostWrite>")]
    pub fn host_put<'env>(
        &self,
        env: &'env Env,
        path: String,
        content: String,
        if_match: Option<String>,
        if_none_match_any: bool,
    ) -> napi::Result<Object<'env>> {
        self.off_thread(env, move |m| -> Result<NativeHostWrite, Fault> {
            let pre = Precondition { if_match, if_none_match_any };
            Ok(m.host_put(&path, &content, &pre)?.into())
        })
    }

    #[napi(ts_return_type = "Promise<NativeHostRemove>")]
    pub fn host_remove<'env>(
        &self,
        env: &'env Env,
        path: String,
        if_match: Option<String>,
    ) -> napi::Result<Object<'env>> {
        self.off_thread(env, move |m| -> Result<NativeHostRemove, Fault> {
            Ok(m.host_remove(&path, if_match.as_deref())?.into())
        })
    }

    /// The history's own size, apart from `usage()`.
    #[napi(ts_return_type = "Promise<HistoryUsage>")]
    pub fn history_usage<'env>(&self, env: &'env Env) -> napi::Result<Object<'env>> {
        self.off_thread(env, move |m| Ok(HistoryUsage::from(m.history_usage()?)))
    }

    /// Drops versions past the store's retention, then compacts; how many were dropped.
    #[napi(ts_return_type = "Promise<number>")]
    pub fn prune_history<'env>(&self, env: &'env Env) -> napi::Result<Object<'env>> {
        self.off_thread(env, move |m| Ok(m.prune_history()? as f64))
    }

    /// The scope as history recorded it at `when_ms`, read-only.
    #[napi(ts_return_type = "Promise<NativeAt>")]
    pub fn at<'env>(&self, env: &'env Env, when_ms: f64) -> napi::Result<Object<'env>> {
        let workers = self.workers();
        self.off_thread(env, move |m| {
            if !when_ms.is_finite() {
                return Err(Fault::invalid_argument(format!("at needs a finite instant, got {when_ms}")));
            }
            let view = m.at(when_ms as i64)?;
            Ok(NativeAt { memories: m.clone(), workers, view: Arc::from(view) })
        })
    }
}

#[napi]
impl NativeStore {
    /// The store's history settings as this open settled them; null: history off.
    #[napi]
    pub fn history_settings(&self) -> Option<NativeHistorySettings> {
        self.history.map(|s| NativeHistorySettings {
            retain_days: s.options.retain_days,
            max_versions_per_memory: s.options.max_versions_per_memory.map(|n| n as f64),
            since_ms: s.since_ms as f64,
        })
    }

    /// Versions of every scope and their content bytes; reads metadata in memory only.
    #[napi]
    pub fn history_stats(&self, env: Env) -> napi::Result<HistoryUsage> {
        on_js_thread(env, || {
            let store: Arc<dyn Backend> = self.memory_store();
            Ok(HistoryUsage::from(history_usage_of(&*store.read()?)?))
        })
    }
}

/// A read-only view of an earlier instant, held in memory. Its views run off the JS thread (on
/// the store's own threads for PostgreSQL, else the libuv pool) like any
/// other: a listing of the past grows with the store as a listing of the present does.
#[napi]
pub struct NativeAt {
    memories: Arc<Memories>,
    /// The store's own threads (PostgreSQL), where its views run like the handler's calls.
    workers: Option<Arc<Workers>>,
    view: Arc<At>,
}

#[napi]
impl NativeAt {
    #[napi(ts_return_type = "Promise<NativeView>")]
    pub fn view<'env>(
        &self,
        env: &'env Env,
        path: String,
        range: Option<Vec<f64>>,
        max_chars: f64,
    ) -> napi::Result<Object<'env>> {
        let (range, max_chars) = view_shape(range, max_chars);
        let (m, view) = (self.memories.clone(), self.view.clone());
        run_off_thread(env, self.workers.as_ref(), move || {
            Ok(NativeView::new(&path, m.view_past(&view, &path)?, range, max_chars))
        })
    }
}
