//! `NativeStore`: one open embedded store, shared by every handler built on it.

use std::sync::Arc;

use napi::Env;
use napi::bindgen_prelude::AsyncTask;
use napi_derive::napi;
use rabosh_memory::{Durability, EmbeddedOptions, EmbeddedStore};

use crate::fault::{Fault, on_js_thread};
use crate::work::{Work, work};

/// When a commit is durable: `sync` (fsynced before it is acknowledged) or `buffered` (at
/// `sync()` or close).
#[napi(string_enum = "lowercase")]
pub enum NativeDurability {
    Sync,
    Buffered,
}

#[napi(object)]
pub struct NativeStoreOptions {
    pub durability: NativeDurability,
    /// Create the store when the directory holds none (false: refuse, touching nothing).
    pub create: bool,
    /// Hold the directory alone (false: several processes may share it; needs 'sync').
    pub exclusive: bool,
}

#[napi(object)]
pub struct NativeStats {
    pub commits: f64,
    pub fsyncs: f64,
    pub values_read: f64,
    pub bytes_written: f64,
    pub live_bytes: f64,
    pub dead_bytes: f64,
    pub files: f64,
    pub keys: f64,
    pub open_snapshots: f64,
    pub compactions: f64,
    pub seq: f64,
}

#[napi(object)]
pub struct NativeCheckpointInfo {
    pub seq: f64,
    pub hard_linked: bool,
}

#[napi(object)]
pub struct NativeCompactInfo {
    pub bytes_before: f64,
    pub bytes_after: f64,
}

#[napi(object)]
pub struct NativeVerifyReport {
    pub files: f64,
    pub records: f64,
    pub keys: f64,
}

#[napi]
pub struct NativeStore {
    inner: Arc<EmbeddedStore>,
}

impl NativeStore {
    pub(crate) fn memory_store(&self) -> Arc<EmbeddedStore> {
        self.inner.clone()
    }

    /// Runs `f` on the libuv pool with the store.
    fn off_thread<T, F>(&self, f: F) -> AsyncTask<Work<T>>
    where
        T: napi::bindgen_prelude::ToNapiValue + napi::bindgen_prelude::TypeName + Send + 'static,
        F: FnOnce(&EmbeddedStore) -> Result<T, Fault> + Send + 'static,
    {
        let store = self.inner.clone();
        work(move || f(&store))
    }
}

impl From<NativeDurability> for Durability {
    fn from(d: NativeDurability) -> Self {
        match d {
            NativeDurability::Sync => Durability::Sync,
            NativeDurability::Buffered => Durability::Buffered,
        }
    }
}

#[napi]
impl NativeStore {
    /// Open (creating if needed) the store in `dir`; takes the directory's lock.
    #[napi(ts_return_type = "Promise<NativeStore>")]
    pub fn open(dir: String, options: NativeStoreOptions) -> AsyncTask<Work<NativeStore>> {
        work(move || {
            let opts = EmbeddedOptions {
                durability: options.durability.into(),
                create_if_missing: options.create,
                shared: !options.exclusive,
                ..Default::default()
            };
            Ok(NativeStore { inner: EmbeddedStore::open(&dir, opts)? })
        })
    }

    /// Release the lock and every file; idempotent.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn close(&self) -> AsyncTask<Work<()>> {
        self.off_thread(|s| Ok(s.close()?))
    }

    /// Make every commit so far durable (for `buffered`).
    #[napi(ts_return_type = "Promise<void>")]
    pub fn sync(&self) -> AsyncTask<Work<()>> {
        self.off_thread(|s| Ok(s.sync()?))
    }

    /// A durable, openable copy of the current state in `dir` (empty or absent).
    #[napi(ts_return_type = "Promise<NativeCheckpointInfo>")]
    pub fn checkpoint(&self, dir: String) -> AsyncTask<Work<NativeCheckpointInfo>> {
        self.off_thread(move |s| {
            let info = s.checkpoint(&dir)?;
            Ok(NativeCheckpointInfo { seq: info.seq as f64, hard_linked: info.hard_linked })
        })
    }

    #[napi(ts_return_type = "Promise<NativeCompactInfo>")]
    pub fn compact(&self) -> AsyncTask<Work<NativeCompactInfo>> {
        self.off_thread(|s| {
            let info = s.compact()?;
            Ok(NativeCompactInfo { bytes_before: info.bytes_before as f64, bytes_after: info.bytes_after as f64 })
        })
    }

    /// Read every record and check every checksum.
    #[napi(ts_return_type = "Promise<NativeVerifyReport>")]
    pub fn verify(&self) -> AsyncTask<Work<NativeVerifyReport>> {
        self.off_thread(|s| {
            let r = s.verify()?;
            Ok(NativeVerifyReport { files: r.files as f64, records: r.records as f64, keys: r.keys as f64 })
        })
    }

    /// Counters kept in memory; no disk access, so answered on the calling thread.
    #[napi]
    pub fn stats(&self, env: Env) -> napi::Result<NativeStats> {
        on_js_thread(&env, || {
            let s = self.inner.stats();
            Ok(NativeStats {
                commits: s.commits as f64,
                fsyncs: s.fsyncs as f64,
                values_read: s.values_read as f64,
                bytes_written: s.bytes_written as f64,
                live_bytes: s.live_bytes as f64,
                dead_bytes: s.dead_bytes as f64,
                files: s.files as f64,
                keys: s.keys as f64,
                open_snapshots: s.open_snapshots as f64,
                compactions: s.compactions as f64,
                seq: s.seq as f64,
            })
        })
    }

    /// Pin a consistent view; in memory, so answered on the calling thread.
    #[napi]
    pub fn snapshot(&self, env: Env) -> napi::Result<NativeSnapshot> {
        on_js_thread(&env, || {
            let snap = self.inner.snapshot()?;
            Ok(NativeSnapshot { seq: snap.seq() as f64, inner: Some(snap) })
        })
    }
}

/// A pinned read view. `release` unpins it (idempotent); garbage collection also unpins.
#[napi]
pub struct NativeSnapshot {
    seq: f64,
    inner: Option<rabosh_memory::Snapshot>,
}

impl NativeSnapshot {
    /// The pinned view, until released.
    pub(crate) fn pinned(&self) -> Option<rabosh_memory::Snapshot> {
        self.inner.clone()
    }
}

#[napi]
impl NativeSnapshot {
    /// The sequence number of the last commit this view sees (kept after release).
    #[napi(getter)]
    pub fn seq(&self) -> f64 {
        self.seq
    }

    #[napi]
    pub fn release(&mut self) {
        self.inner = None;
    }
}
