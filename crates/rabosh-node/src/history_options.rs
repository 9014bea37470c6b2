//! What openers and handlers ask of version history: the store option (settled into the store
//! by rabosh-memory when the store opens) and the handler's actor with its limits. Kept apart
//! from `history.rs` (the history calls) so the store and the handler need not import those.

use napi_derive::napi;
use rabosh_memory::{Actor, Backend, HistoryOptions, HistoryRequest, HistorySettings, Memories, settle_history};

/// What an opener asks of the store's history (docs/guide/history.md): `on: false` is refused on a
/// store that records history; `on: true` turns it on (recorded in the store) with `options`
/// when given (rewriting the store's retention), else keeping the store's.
#[napi(object)]
pub struct NativeHistoryRequest {
    pub on: bool,
    pub options: Option<NativeHistoryOptions>,
}

#[napi(object)]
pub struct NativeHistoryOptions {
    pub retain_days: Option<f64>,
    pub max_versions_per_memory: Option<f64>,
}

/// The store's history settings: retention, and since when every change is recorded.
#[napi(object)]
pub struct NativeHistorySettings {
    pub retain_days: Option<f64>,
    pub max_versions_per_memory: Option<f64>,
    pub since_ms: f64,
}

/// Reconciles the opener's request with the store's settings (one commit when it turns history
/// on or rewrites retention); a conflicting request is `RABOSH_INVALID_OPTION`.
pub(crate) fn settle(
    store: &dyn Backend,
    request: Option<NativeHistoryRequest>,
) -> rabosh_memory::Result<Option<HistorySettings>> {
    let request = request.map(|r| match (r.on, r.options) {
        (false, _) => HistoryRequest::Off,
        (true, None) => HistoryRequest::On,
        (true, Some(o)) => HistoryRequest::OnWith(HistoryOptions {
            retain_days: o.retain_days,
            max_versions_per_memory: o.max_versions_per_memory.map(crate::js_number::to_unsigned),
        }),
    });
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64);
    settle_history(store, request, now)
}

#[napi(object)]
#[derive(Clone)]
pub struct NativeActor {
    #[napi(js_name = "type")]
    pub kind: String,
    pub id: String,
}

/// A handler with its actor (refused over the limits). It records whenever the store does.
pub(crate) fn configure(m: Memories, actor: Option<NativeActor>) -> rabosh_memory::Result<Memories> {
    match actor {
        Some(a) => m.with_actor(Actor { kind: a.kind, id: a.id }),
        None => Ok(m),
    }
}
