//! The hosted-store sync's seam (issue 22) on `NativeMemories`: its own `#[napi] impl` block.
//! Everything is decided in rabosh-memory (`sync_base.rs`); the facade (`src/sync/`) plans.

use napi::Env;
use napi::bindgen_prelude::Object;
use napi_derive::napi;
use rabosh_memory::{Actor, BaseWrite, SyncApply, SyncOp, hex, id_hex};

use crate::history_options::NativeActor;
use crate::memories::NativeMemories;

/// What a sync op does, a closed set like every outcome across the boundary (`'put' | 'remove' |
/// 'move'` in TypeScript): the compiler refuses any other, and napi refuses it at runtime.
#[napi(string_enum = "lowercase")]
pub enum NativeSyncOpKind {
    Put,
    Remove,
    Move,
}

/// `kind`: `put` (`ifMatch` absent: the memory must not exist), `remove` or `move` (`from` → `path`).
#[napi(object)]
pub struct NativeSyncOp {
    pub kind: NativeSyncOpKind,
    pub path: String,
    pub from: Option<String>,
    pub content: Option<String>,
    pub if_match: Option<String>,
}

/// A base record to write (`value`) or delete (absent), if it now holds `expect` (absent: none).
#[napi(object)]
pub struct NativeBaseWrite {
    pub tag: String,
    pub value: Option<String>,
    pub expect: Option<String>,
}

#[napi(object)]
pub struct NativeBaseRecord {
    pub tag: String,
    pub value: String,
}

#[napi(object)]
pub struct NativeSyncEntry {
    pub path: String,
    pub content_sha256: String,
    pub size_bytes: f64,
    pub memory_id: Option<String>,
    pub version_id: Option<String>,
}

/// `status`: `applied`, `op_refused`, `path_conflict`, `too_large`, `base_changed`.
#[napi(object)]
pub struct NativeSyncApplied {
    pub status: String,
    pub version_ids: Vec<String>,
    pub index: Option<u32>,
    pub current_sha256: Option<String>,
    pub path: Option<String>,
    pub limit: Option<f64>,
}

fn op(o: NativeSyncOp) -> napi::Result<SyncOp> {
    let need =
        |v: Option<String>, what: &str| v.ok_or_else(|| napi::Error::from_reason(format!("sync op needs {what}")));
    Ok(match o.kind {
        NativeSyncOpKind::Put => {
            SyncOp::Put { path: o.path, content: need(o.content, "content")?, if_match: o.if_match }
        }
        NativeSyncOpKind::Remove => SyncOp::Remove { path: o.path, if_match: need(o.if_match, "ifMatch")? },
        NativeSyncOpKind::Move => {
            SyncOp::Move { from: need(o.from, "from")?, to: o.path, if_match: need(o.if_match, "ifMatch")? }
        }
    })
}

fn applied(a: SyncApply) -> NativeSyncApplied {
    let none = |status: &str| NativeSyncApplied {
        status: status.into(),
        version_ids: Vec::new(),
        index: None,
        current_sha256: None,
        path: None,
        limit: None,
    };
    match a {
        SyncApply::Applied { version_ids } => {
            NativeSyncApplied { version_ids: version_ids.into_iter().map(id_hex).collect(), ..none("applied") }
        }
        SyncApply::OpRefused { index, current } => {
            NativeSyncApplied { index: Some(index as u32), current_sha256: current, ..none("op_refused") }
        }
        SyncApply::PathConflict { index, path } => {
            NativeSyncApplied { index: Some(index as u32), path: Some(path), ..none("path_conflict") }
        }
        SyncApply::TooLarge { index, limit } => {
            NativeSyncApplied { index: Some(index as u32), limit: Some(limit as f64), ..none("too_large") }
        }
        SyncApply::BaseChanged { index } => NativeSyncApplied { index: Some(index as u32), ..none("base_changed") },
    }
}

#[napi]
impl NativeMemories {
    /// Every memory at or below `dir` with its hash and ids, at one snapshot.
    #[napi(ts_return_type = "Promise<Array<NativeSyncEntry>>")]
    pub fn sync_entries<'env>(&self, env: &'env Env, dir: String) -> napi::Result<Object<'env>> {
        self.off_thread(env, move |m| {
            Ok(m.sync_entries(&dir)?
                .into_iter()
                .map(|e| NativeSyncEntry {
                    path: e.path,
                    content_sha256: hex(&e.sha256),
                    size_bytes: e.size as f64,
                    memory_id: e.memory_id.map(id_hex),
                    version_id: e.version_id.map(id_hex),
                })
                .collect::<Vec<_>>())
        })
    }

    /// The sync's base records whose tag starts with `tagPrefix`, in tag order.
    #[napi(ts_return_type = "Promise<Array<NativeBaseRecord>>")]
    pub fn sync_bases<'env>(&self, env: &'env Env, tag_prefix: String) -> napi::Result<Object<'env>> {
        self.off_thread(env, move |m| {
            Ok(m.sync_bases(&tag_prefix)?
                .into_iter()
                .map(|(tag, v)| NativeBaseRecord { tag, value: String::from_utf8_lossy(&v).into_owned() })
                .collect::<Vec<_>>())
        })
    }

    /// The ops and base records in one commit (versions recorded with `actor`), or nothing.
    #[napi(ts_return_type = "Promise<NativeSyncApplied>")]
    pub fn sync_apply<'env>(
        &self,
        env: &'env Env,
        ops: Vec<NativeSyncOp>,
        bases: Vec<NativeBaseWrite>,
        actor: Option<NativeActor>,
    ) -> napi::Result<Object<'env>> {
        let ops = ops.into_iter().map(op).collect::<napi::Result<Vec<_>>>()?;
        let bases: Vec<BaseWrite> = bases
            .into_iter()
            .map(|b| BaseWrite {
                tag: b.tag,
                value: b.value.map(String::into_bytes),
                expect: b.expect.map(String::into_bytes),
            })
            .collect();
        let actor = actor.map(|a| Actor { kind: a.kind, id: a.id });
        self.off_thread(env, move |m| Ok(applied(m.sync_apply(&ops, &bases, actor)?)))
    }
}
