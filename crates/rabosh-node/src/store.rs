//! `NativeStore`: one open store, embedded (a directory) or PostgreSQL (a URL), shared by every
//! handler built on it.
//!
//! On PostgreSQL the engine's maintenance has no meaning: `checkpoint`, `compact`, `verify` and
//! `snapshot` answer `RABOSH_UNSUPPORTED` (a pinned view would hold a pooled connection and an
//! old server snapshot for as long as the host keeps it), `sync` resolves at once (a commit is
//! acknowledged only once the server committed it), and `stats` counts commits and values read,
//! every other figure zero.

use std::sync::Arc;

use napi::Env;
use napi::bindgen_prelude::AsyncTask;
use napi_derive::napi;
use rabosh_memory::{Backend, Durability, EmbeddedOptions, EmbeddedStore};

use crate::fault::{Fault, on_js_thread};
use crate::pg::{PgStore, is_url};
use crate::work::{Work, work};
use crate::write_queue::WriteQueue;

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
    /// Hold the directory alone (false: several processes may share it).
    pub exclusive: bool,
    /// Shared mode: the longest wait for another process's commit lock, in ms (validated by the
    /// TypeScript layer: a whole number from 0 to 2^31 - 1).
    pub lock_timeout_ms: u32,
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

impl NativeStats {
    fn zero() -> NativeStats {
        NativeStats {
            commits: 0.0,
            fsyncs: 0.0,
            values_read: 0.0,
            bytes_written: 0.0,
            live_bytes: 0.0,
            dead_bytes: 0.0,
            files: 0.0,
            keys: 0.0,
            open_snapshots: 0.0,
            compactions: 0.0,
            seq: 0.0,
        }
    }
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

#[derive(Clone)]
enum Backing {
    Embedded(Arc<EmbeddedStore>),
    Postgres(Arc<PgStore>),
}

#[napi]
pub struct NativeStore {
    inner: Backing,
    /// Embedded only: the queue its handlers' committing commands join (write_queue.rs).
    writes: Option<Arc<WriteQueue>>,
}

impl NativeStore {
    pub(crate) fn write_queue(&self) -> Option<Arc<WriteQueue>> {
        self.writes.clone()
    }

    pub(crate) fn memory_store(&self) -> Arc<dyn Backend> {
        match &self.inner {
            Backing::Embedded(s) => s.clone(),
            Backing::Postgres(s) => s.clone(),
        }
    }

    /// Whether a read is in this process's memory (embedded) rather than a network round trip:
    /// only then may a view run on the JS thread.
    pub(crate) fn reads_in_process(&self) -> bool {
        matches!(self.inner, Backing::Embedded(_))
    }

    /// Runs `f` on the libuv pool with the embedded store; on PostgreSQL, `what` is refused.
    fn off_thread<T, F>(&self, what: &'static str, f: F) -> AsyncTask<Work<T>>
    where
        T: napi::bindgen_prelude::ToNapiValue + napi::bindgen_prelude::TypeName + Send + 'static,
        F: FnOnce(&EmbeddedStore) -> Result<T, Fault> + Send + 'static,
    {
        let store = self.inner.clone();
        work(move || match store {
            Backing::Embedded(s) => f(&s),
            Backing::Postgres(_) => Err(Fault::unsupported(what)),
        })
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
    /// Open (creating if needed) the store in `dir`, taking the directory's lock; or, for a
    /// `postgres://` / `postgresql://` URL, connect and create or migrate the schema.
    #[napi(ts_return_type = "Promise<NativeStore>")]
    pub fn open(dir: String, options: NativeStoreOptions) -> AsyncTask<Work<NativeStore>> {
        work(move || {
            if is_url(&dir) {
                if let NativeDurability::Buffered = options.durability {
                    return Err(Fault::invalid_option(
                        "durability",
                        "buffered (a PostgreSQL store's durability is the server's: every commit is acknowledged once the server committed it)",
                    ));
                }
                return Ok(NativeStore {
                    inner: Backing::Postgres(Arc::new(PgStore::open(&dir, options.create)?)),
                    writes: None,
                });
            }
            let opts = EmbeddedOptions {
                durability: options.durability.into(),
                create_if_missing: options.create,
                shared: !options.exclusive,
                lock_timeout: std::time::Duration::from_millis(options.lock_timeout_ms.into()),
                ..Default::default()
            };
            let store = EmbeddedStore::open(&dir, opts)?;
            Ok(NativeStore { writes: Some(WriteQueue::new(&store)), inner: Backing::Embedded(store) })
        })
    }

    /// Release the lock and every file; idempotent.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn close(&self) -> AsyncTask<Work<()>> {
        let store = self.inner.clone();
        work(move || match store {
            Backing::Embedded(s) => Ok(s.close()?),
            Backing::Postgres(s) => {
                s.close();
                Ok(())
            }
        })
    }

    /// Make every commit so far durable (for `buffered`).
    #[napi(ts_return_type = "Promise<void>")]
    pub fn sync(&self) -> AsyncTask<Work<()>> {
        let store = self.inner.clone();
        work(move || match store {
            Backing::Embedded(s) => Ok(s.sync()?),
            Backing::Postgres(s) => Ok(s.check_open()?),
        })
    }

    /// A durable, openable copy of the current state in `dir` (empty or absent).
    #[napi(ts_return_type = "Promise<NativeCheckpointInfo>")]
    pub fn checkpoint(&self, dir: String) -> AsyncTask<Work<NativeCheckpointInfo>> {
        self.off_thread("checkpoint", move |s| {
            let info = s.checkpoint(&dir)?;
            Ok(NativeCheckpointInfo { seq: info.seq as f64, hard_linked: info.hard_linked })
        })
    }

    #[napi(ts_return_type = "Promise<NativeCompactInfo>")]
    pub fn compact(&self) -> AsyncTask<Work<NativeCompactInfo>> {
        self.off_thread("compact", |s| {
            let info = s.compact()?;
            Ok(NativeCompactInfo { bytes_before: info.bytes_before as f64, bytes_after: info.bytes_after as f64 })
        })
    }

    /// Read every record and check every checksum.
    #[napi(ts_return_type = "Promise<NativeVerifyReport>")]
    pub fn verify(&self) -> AsyncTask<Work<NativeVerifyReport>> {
        self.off_thread("verify", |s| {
            let r = s.verify()?;
            Ok(NativeVerifyReport { files: r.files as f64, records: r.records as f64, keys: r.keys as f64 })
        })
    }

    /// Counters kept in memory; no disk access, so answered on the calling thread.
    #[napi]
    pub fn stats(&self, env: Env) -> napi::Result<NativeStats> {
        on_js_thread(&env, || {
            let s = match &self.inner {
                Backing::Embedded(s) => s.stats(),
                Backing::Postgres(s) => {
                    let c = s.counters();
                    return Ok(NativeStats {
                        commits: c.commits as f64,
                        values_read: c.values_read as f64,
                        ..NativeStats::zero()
                    });
                }
            };
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

    /// Pin a consistent view, on the calling thread: it never waits for another process's
    /// commit lock there (shared mode: `RABOSH_STORE_BUSY` at once in the rare case only that
    /// would answer — see `snapshot_without_waiting`).
    #[napi]
    pub fn snapshot(&self, env: Env) -> napi::Result<NativeSnapshot> {
        on_js_thread(&env, || {
            let Backing::Embedded(store) = &self.inner else { return Err(Fault::unsupported("snapshot")) };
            let snap = store.snapshot_without_waiting()?;
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
