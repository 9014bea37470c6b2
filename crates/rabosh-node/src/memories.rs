//! `NativeMemories`: the six commands over one scope. Paths arrive normalised by the facade.

use std::sync::Arc;

use napi::Env;
use napi::bindgen_prelude::{AsyncTask, Either, Object, ToNapiValue, TypeName};
use napi_derive::napi;
use rabosh_memory::{Memories, MemoryOptions, Workers};

use crate::completion;
use crate::fault::{Fault, guard, on_js_thread};
use crate::outcome::{NativeCreate, NativeDelete, NativeInsert, NativeRename, NativeStrReplace, NativeView};
use crate::render::{Range, Text};
use crate::reports::ScopeUsage;
use crate::store::{NativeSnapshot, NativeStore};
use crate::work::{Work, run_off_thread, work};
use crate::write_queue::{WriteQueue, after_fsync};

/// The largest memory a view reads on the calling thread, in bytes, and the longest listing it
/// answers there, in lines as the index bounds them (each name counted twice: as a memory and
/// as a directory, so 16,384 is a directory of 8,192 memories): bounded work measured at well
/// under a millisecond (see handler.ts); anything larger goes to the pool.
const CHEAP_BYTES: u64 = 64 * 1024;
const CHEAP_LINES: u64 = 16_384;

#[napi(object)]
pub struct NativeMemoryOptions {
    pub scope: String,
    pub max_memory_bytes: f64,
    pub create_overwrites: bool,
    pub track_access: bool,
    pub listing_index: bool,
    /// Who this handler's versions name as their author.
    pub actor: Option<crate::history_options::NativeActor>,
}

#[napi]
pub struct NativeMemories {
    pub(crate) inner: Arc<Memories>,
    /// Reads are in process memory (embedded), so a bounded view may run on the JS thread; on
    /// PostgreSQL every read is a network round trip and goes to the pool.
    cheap_views: bool,
    /// Embedded: the store's write queue, which commands that commit join; PostgreSQL: none
    /// (each command is its own SQL transaction on the store's worker threads).
    writes: Option<Arc<WriteQueue>>,
    /// PostgreSQL: the store's own threads, where every call of this handler runs (never the
    /// libuv pool, which the process's `fs` and `dns` share); embedded: none.
    workers: Option<Arc<Workers>>,
}

impl NativeMemories {
    /// Runs `job` off the JS thread: on the store's own threads when it has them, else the
    /// libuv pool.
    pub(crate) fn off_thread<'env, T, F>(&self, env: &'env Env, job: F) -> napi::Result<Object<'env>>
    where
        T: ToNapiValue + TypeName + Send + 'static,
        F: FnOnce(&Arc<Memories>) -> Result<T, Fault> + Send + 'static,
    {
        let m = self.inner.clone();
        run_off_thread(env, self.workers.as_ref(), move || job(&m))
    }

    /// The store's own threads (PostgreSQL), for an object made here that runs calls later.
    pub(crate) fn workers(&self) -> Option<Arc<Workers>> {
        self.workers.clone()
    }

    /// A command that commits: on the store's write queue (one fsync per batch of commands,
    /// settled through the environment's completion channel), or on PostgreSQL the store's own
    /// threads (settled through the same channel).
    pub(crate) fn committing<'env, F, T, O>(&self, env: &'env Env, f: F) -> napi::Result<Object<'env>>
    where
        F: FnOnce(&Memories) -> rabosh_memory::Result<T> + Send + 'static,
        T: Into<O>,
        O: ToNapiValue + TypeName + Send + 'static,
    {
        let Some(queue) = &self.writes else {
            return self.off_thread(env, move |m| -> Result<O, Fault> { Ok(f(m)?.into()) });
        };
        let m = self.inner.clone();
        let job = move || -> Result<O, Fault> { Ok(f(&m)?.into()) };
        let (pending, promise) = completion::promise(env)?;
        queue.submit(Box::new(move |refused| {
            // The handler (and with it the store) is let go here, before the command settles.
            let result = match refused {
                Some(fault) => Err(fault),
                None => guard(job),
            };
            Box::new(move |durable| pending.settle(after_fsync(result, durable)))
        }));
        Ok(Object::from_raw(env.raw(), promise))
    }
}

/// `view_range` as `[start, end]` when the facade found two integers, and the character budget.
pub(crate) fn view_shape(range: Option<Vec<f64>>, max_chars: f64) -> (Range, usize) {
    let range = range.and_then(|r| match r[..] {
        [start, end] => Some((start, end)),
        _ => None,
    });
    // A positive safe integer by the facade's check; the cast saturates anything else.
    (range, crate::js_number::to_unsigned(max_chars) as usize)
}

/// A JS number that must be a positive integer to be a byte limit.
fn positive_integer(option: &'static str, v: f64) -> Result<u64, Fault> {
    if v.fract() == 0.0 && (1.0..=9_007_199_254_740_991.0).contains(&v) {
        Ok(crate::js_number::to_unsigned(v))
    } else {
        Err(Fault::invalid_option(option, v.to_string()))
    }
}

#[napi]
impl NativeMemories {
    /// A handler over `store` for one scope; validates the options (no disk access).
    #[napi(constructor)]
    pub fn new(env: Env, store: &NativeStore, options: NativeMemoryOptions) -> napi::Result<NativeMemories> {
        on_js_thread(env, || {
            let opts = MemoryOptions {
                scope: options.scope,
                max_memory_bytes: positive_integer("maxMemoryBytes", options.max_memory_bytes)?,
                create_overwrites: options.create_overwrites,
                track_access: options.track_access,
                listing_index: options.listing_index,
            };
            let cheap_views = store.reads_in_process();
            let memories =
                crate::history_options::configure(Memories::new(store.memory_store(), opts)?, options.actor)?;
            Ok(NativeMemories {
                inner: Arc::new(memories),
                cheap_views,
                writes: store.write_queue(),
                workers: store.workers(),
            })
        })
    }

    /// `view`; a file view crosses only the lines `range` and `maxChars` let it show.
    #[napi(ts_return_type = "Promise<NativeView>")]
    pub fn view<'env>(
        &self,
        env: &'env Env,
        path: String,
        range: Option<Vec<f64>>,
        max_chars: f64,
    ) -> napi::Result<Object<'env>> {
        let (range, max_chars) = view_shape(range, max_chars);
        self.off_thread(env, move |m| Ok(NativeView::new(&path, m.view(&path)?, range, max_chars)))
    }

    /// `view` on the calling thread when its work is bounded and in memory (a memory of at most
    /// 64 KiB, or a listing of at most 16,384 lines as the index bounds them, from an index
    /// already built), else null. A file view or listing answers its text alone; any other
    /// outcome, the `NativeView`.
    #[napi(ts_return_type = "string | NativeView | null")]
    #[allow(clippy::needless_pass_by_value)] // napi converts each JS argument into an owned value
    pub fn view_if_cheap(
        &self,
        env: Env,
        path: String,
        range: Option<Vec<f64>>,
        max_chars: f64,
    ) -> napi::Result<Option<Either<Text, NativeView>>> {
        let (range, max_chars) = view_shape(range, max_chars);
        on_js_thread(env, || {
            if !self.cheap_views {
                return Ok(None);
            }
            let view = self.inner.view_if_cheap(&path, CHEAP_BYTES, CHEAP_LINES)?;
            Ok(view.map(|v| NativeView::bare(&path, v, range, max_chars)))
        })
    }

    /// `view` as of `snapshot`: the same answers, from the state the snapshot pinned (a scan;
    /// never records access). A released snapshot rejects.
    #[napi(ts_return_type = "Promise<NativeView>")]
    pub fn view_at(
        &self,
        snapshot: &NativeSnapshot,
        path: String,
        range: Option<Vec<f64>>,
        max_chars: f64,
    ) -> AsyncTask<Work<NativeView>> {
        let (range, max_chars) = view_shape(range, max_chars);
        let (m, snap) = (self.inner.clone(), snapshot.pinned());
        work(move || {
            let snap = snap.ok_or_else(|| Fault {
                code: crate::fault_codes::INVALID_ARGUMENT,
                message: "view at a snapshot that was released".into(),
                holder: None,
                expired: None,
            })?;
            Ok(NativeView::new(&path, m.view_at(&snap, &path)?, range, max_chars))
        })
    }

    // The five commands that commit join the store's write queue (write_queue.rs).
    #[napi(ts_return_type = "Promise<NativeCreate>")]
    pub fn create<'env>(&self, env: &'env Env, path: String, file_text: String) -> napi::Result<Object<'env>> {
        self.committing::<_, _, NativeCreate>(env, move |m| m.create(&path, &file_text))
    }

    #[napi(ts_return_type = "Promise<NativeStrReplace>")]
    pub fn str_replace<'env>(
        &self,
        env: &'env Env,
        path: String,
        old_str: String,
        new_str: String,
    ) -> napi::Result<Object<'env>> {
        self.committing::<_, _, NativeStrReplace>(env, move |m| m.str_replace(&path, &old_str, &new_str))
    }

    /// `insert_line` is null when the model sent something that is not an integer.
    #[napi(ts_return_type = "Promise<NativeInsert>")]
    pub fn insert<'env>(
        &self,
        env: &'env Env,
        path: String,
        insert_line: Option<i64>,
        insert_text: String,
    ) -> napi::Result<Object<'env>> {
        self.committing::<_, _, NativeInsert>(env, move |m| m.insert(&path, insert_line, &insert_text))
    }

    #[napi(ts_return_type = "Promise<NativeDelete>")]
    pub fn delete<'env>(&self, env: &'env Env, path: String) -> napi::Result<Object<'env>> {
        self.committing::<_, _, NativeDelete>(env, move |m| m.delete(&path))
    }

    #[napi(ts_return_type = "Promise<NativeRename>")]
    pub fn rename<'env>(&self, env: &'env Env, old_path: String, new_path: String) -> napi::Result<Object<'env>> {
        self.committing::<_, _, NativeRename>(env, move |m| m.rename(&old_path, &new_path))
    }

    #[napi(ts_return_type = "Promise<ScopeUsage>")]
    pub fn usage<'env>(&self, env: &'env Env) -> napi::Result<Object<'env>> {
        self.off_thread(env, |m| Ok(ScopeUsage::from(m.usage()?)))
    }

    /// Deletes what was last updated (or accessed) before `instant_ms`, then compacts; the count.
    /// When compaction fails after the deletions committed, rejects with `RABOSH_IO` whose message
    /// says how many were expired and whose `expired` property holds that count.
    #[napi(ts_return_type = "Promise<number>")]
    pub fn expire_before<'env>(&self, env: &'env Env, instant_ms: f64) -> napi::Result<Object<'env>> {
        self.off_thread(env, move |m| {
            if !instant_ms.is_finite() {
                return Err(Fault::invalid_argument(format!("expireBefore needs a finite instant, got {instant_ms}")));
            }
            let expired = m.expire_before(instant_ms as i64)?;
            match expired.reclaim_error {
                None => Ok(expired.count as f64),
                Some(e) => Err(Fault::expired_but_not_reclaimed(expired.count, &e)),
            }
        })
    }
}
