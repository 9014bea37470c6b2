//! `NativeStore`: one open store (`rabosh_memory::Store`, a directory or a URL: the memory crate
//! decides), shared by every handler built on it. What the backend cannot do is refused by the
//! store itself (`RABOSH_UNSUPPORTED`, or `RABOSH_INVALID_OPTION` for an option at open); this
//! file only carries the calls across, each on the JS thread when it is bounded and in memory,
//! else on the store's own threads when it has them (PostgreSQL), else the libuv pool.

use std::sync::Arc;

use napi::Env;
use napi::bindgen_prelude::{AsyncTask, Buffer, Object, ToNapiValue, TypeName};
use napi_derive::napi;
use rabosh_memory::{Backend, Durability, EncryptionKey, Store, StoreOptions, Workers};

use crate::fault::{Fault, on_js_thread};
use crate::reports::{CheckpointInfo, CompactInfo, StoreCounters, VerifyReport};
use crate::work::{Work, run_off_thread, work};
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
    /// What the opener asks of the store's history (absent: whatever the store records).
    pub history: Option<crate::history_options::NativeHistoryRequest>,
    /// Shared mode: the longest wait for another process's commit lock, in ms (validated by the
    /// TypeScript layer: a whole number from 0 to 2^31 - 1); absent: the engine's default.
    pub lock_timeout_ms: Option<u32>,
    /// The host's 32-byte key (absent: a plain store). Copied into Rust's zeroized key on the JS
    /// thread; the TypeScript layer zeroes its own copy when the open settles. Typed as a
    /// `Uint8Array` (a Buffer is one) so that the declarations need no @types/node.
    #[napi(ts_type = "Uint8Array")]
    pub encryption_key: Option<Buffer>,
}

#[napi]
pub struct NativeStore {
    inner: Arc<Store>,
    /// Where the backend can group commits: the queue its handlers' committing commands join
    /// (`write_queue.rs`).
    writes: Option<Arc<WriteQueue>>,
    /// The store's history settings as this open settled them.
    pub(crate) history: Option<rabosh_memory::HistorySettings>,
}

impl NativeStore {
    pub(crate) fn write_queue(&self) -> Option<Arc<WriteQueue>> {
        self.writes.clone()
    }

    pub(crate) fn memory_store(&self) -> Arc<dyn Backend> {
        self.inner.backend()
    }

    /// Whether a read is in this process's memory rather than a network round trip: only then
    /// may a view run on the JS thread.
    pub(crate) fn reads_in_process(&self) -> bool {
        self.inner.capabilities().reads_in_process
    }

    /// The store's own threads, where its calls run instead of the libuv pool (PostgreSQL).
    pub(crate) fn workers(&self) -> Option<Arc<Workers>> {
        self.inner.workers().cloned()
    }

    /// Runs `f` with the store off the JS thread: on the store's own threads when it has them,
    /// else the libuv pool.
    fn off_thread<'env, T, F>(&self, env: &'env Env, f: F) -> napi::Result<Object<'env>>
    where
        T: ToNapiValue + TypeName + Send + 'static,
        F: FnOnce(&Store) -> Result<T, Fault> + Send + 'static,
    {
        let store = self.inner.clone();
        run_off_thread(env, self.workers().as_ref(), move || f(&store))
    }
}

/// A key's bytes copied into the memory crate's zeroized key (a wrong length refused naming
/// `option`, never showing a byte). The TypeScript layer checks first; this is the last word.
fn key_of(option: &'static str, bytes: Option<&[u8]>) -> Result<Option<EncryptionKey>, Fault> {
    Ok(bytes.map(|b| rabosh_memory::key_from_slice(option, b)).transpose()?)
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
    /// `postgres://` / `postgresql://` URL, connect and create or migrate the schema. The memory
    /// crate decides which, and refuses what the backend cannot do.
    #[napi(ts_return_type = "Promise<NativeStore>")]
    pub fn open(dir: String, mut options: NativeStoreOptions) -> AsyncTask<Work<NativeStore>> {
        // Copied here, on the JS thread; the JS buffer is not taken along.
        let encryption = key_of("encryption.key", options.encryption_key.take().as_deref());
        work(move || {
            let encryption = encryption?;
            let history = options.history;
            let options = StoreOptions {
                durability: options.durability.into(),
                create: options.create,
                exclusive: options.exclusive,
                lock_timeout: options.lock_timeout_ms.map(|ms| std::time::Duration::from_millis(ms.into())),
                encryption,
            };
            let store = Arc::new(rabosh_memory::open_with(&dir, options, crate::backends::URL_BACKENDS)?);
            let history = crate::history_options::settle(&*store.backend(), history)?;
            let writes = store.group_commit().map(WriteQueue::new);
            Ok(NativeStore { inner: store, writes, history })
        })
    }

    /// Whether the store is encrypted at rest.
    #[napi]
    pub fn is_encrypted(&self, env: Env) -> napi::Result<bool> {
        on_js_thread(env, || Ok(self.inner.is_encrypted()?))
    }

    /// Rewrap the data key under `key` (32 bytes), crash-safely, rewriting no data.
    #[napi(ts_args_type = "key: Uint8Array", ts_return_type = "Promise<void>")]
    #[allow(clippy::needless_pass_by_value)] // napi converts each JS argument into an owned value
    pub fn rotate_key<'env>(&self, env: &'env Env, key: Buffer) -> napi::Result<Object<'env>> {
        let key = key_of("newKey", Some(&key));
        self.off_thread(env, move |s| {
            let key = key?.expect("a key was given");
            Ok(s.rotate_key(&key)?)
        })
    }

    /// Rewrite the closed store in `dir` from `from` to `to` (absent: plain), crash-safely.
    #[napi(
        ts_args_type = "dir: string, from?: Uint8Array | undefined | null, to?: Uint8Array | undefined | null",
        ts_return_type = "Promise<void>"
    )]
    #[allow(clippy::needless_pass_by_value)] // napi converts each JS argument into an owned value
    pub fn reencrypt(dir: String, from: Option<Buffer>, to: Option<Buffer>) -> AsyncTask<Work<()>> {
        let (from, to) = (key_of("from", from.as_deref()), key_of("to", to.as_deref()));
        work(move || {
            Ok(rabosh_memory::reencrypt_with(&dir, from?.as_ref(), to?.as_ref(), crate::backends::URL_BACKENDS)?)
        })
    }

    /// Release the lock and every file; idempotent.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn close<'env>(&self, env: &'env Env) -> napi::Result<Object<'env>> {
        self.off_thread(env, |s| Ok(s.close()?))
    }

    /// Make every commit so far durable (for `buffered`).
    #[napi(ts_return_type = "Promise<void>")]
    pub fn sync<'env>(&self, env: &'env Env) -> napi::Result<Object<'env>> {
        self.off_thread(env, |s| Ok(s.sync()?))
    }

    /// A durable, openable copy of the current state in `dir` (empty or absent).
    #[napi(ts_return_type = "Promise<CheckpointInfo>")]
    pub fn checkpoint<'env>(&self, env: &'env Env, dir: String) -> napi::Result<Object<'env>> {
        self.off_thread(env, move |s| Ok(CheckpointInfo::from(s.checkpoint(&dir)?)))
    }

    #[napi(ts_return_type = "Promise<CompactInfo>")]
    pub fn compact<'env>(&self, env: &'env Env) -> napi::Result<Object<'env>> {
        self.off_thread(env, |s| Ok(CompactInfo::from(s.compact()?)))
    }

    /// Read every record and check every checksum.
    #[napi(ts_return_type = "Promise<VerifyReport>")]
    pub fn verify<'env>(&self, env: &'env Env) -> napi::Result<Object<'env>> {
        self.off_thread(env, |s| Ok(VerifyReport::from(s.verify()?)))
    }

    /// Counters kept in memory; no disk access, so answered on the calling thread.
    #[napi]
    pub fn stats(&self, env: Env) -> napi::Result<StoreCounters> {
        on_js_thread(env, || Ok(StoreCounters::from(self.inner.stats())))
    }

    /// Pin a consistent view, on the calling thread: it never waits for another process's
    /// commit lock there (shared mode: `RABOSH_STORE_BUSY` at once in the rare case only that
    /// would answer — see `snapshot_without_waiting`).
    #[napi]
    pub fn snapshot(&self, env: Env) -> napi::Result<NativeSnapshot> {
        on_js_thread(env, || {
            let snap = self.inner.snapshot()?;
            Ok(NativeSnapshot { seq: snap.seq() as f64, inner: Some(snap), store: self.inner.clone() })
        })
    }
}

/// A pinned read view. `release` unpins it (idempotent); garbage collection also unpins.
#[napi]
pub struct NativeSnapshot {
    seq: f64,
    inner: Option<rabosh_memory::Snapshot>,
    /// To close, on release, what another process retired while this was held.
    store: Arc<Store>,
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
        if self.inner.take().is_some() {
            // Best effort: a failure here (a closed store) leaves it to the next read.
            let _ = self.store.release_retired();
        }
    }
}
