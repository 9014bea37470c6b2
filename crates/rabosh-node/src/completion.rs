//! One completion channel per JS environment: promises made here are settled from any thread by
//! pushing onto one queue that ONE threadsafe function drains, settling every promise that is
//! ready in one JS callback. A napi `Deferred` per promise would make a threadsafe function, a
//! cleanup hook and an event-loop wake-up per command: under 64 writers that is 64 of each per
//! group commit, here it is one.
//!
//! The binding's one module with `unsafe` of its own: raw napi calls and the pointers they carry.
#![allow(unsafe_code)]

use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::c_void;
use std::ptr;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};

use napi::bindgen_prelude::ToNapiValue;
use napi::{Env, JsError, sys};

use crate::fault::{Fault, FaultResult};

/// Builds a settled promise's value (or its error) on the JS thread.
type Outcome = Box<dyn FnOnce(sys::napi_env) -> Result<sys::napi_value, napi::Error> + Send>;

struct Ready {
    deferred: sys::napi_deferred,
    outcome: Outcome,
}

#[derive(Default)]
struct State {
    ready: Vec<Ready>,
    /// A call of the threadsafe function is queued and has not started draining yet.
    scheduled: bool,
    /// Promises made and not yet settled in JS (JS thread only): the channel keeps the event
    /// loop alive while there are any.
    unsettled: usize,
    /// Promises whose outcome has not been posted yet: work still running on some thread.
    running: usize,
    /// Cleanup hooks waiting on `idle` (a teardown): only then is it worth a wake-up call.
    awaiting_idle: usize,
}

pub struct Channel {
    tsfn: sys::napi_threadsafe_function,
    state: Mutex<State>,
    idle: Condvar,
}

// The threadsafe function is made to be called from any thread; the deferreds are only touched
// on the JS thread that made them (in `drain`).
unsafe impl Send for Channel {}
unsafe impl Sync for Channel {}
unsafe impl Send for Ready {}

impl Channel {
    fn lock(&self) -> MutexGuard<'_, State> {
        // Nothing panics while holding it; a poisoned lock still holds a consistent queue.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A promise made on the JS thread, to be settled once from any thread. Dropped unsettled (its
/// work was lost), it rejects with `RABOSH_PANIC` rather than leaving the caller waiting forever.
pub struct Pending {
    channel: Arc<Channel>,
    deferred: sys::napi_deferred,
    settled: bool,
}

unsafe impl Send for Pending {}

impl Pending {
    /// Posts the outcome; the promise settles on the JS thread at the channel's next drain.
    pub fn settle<T: ToNapiValue + Send + 'static>(mut self, result: FaultResult<T>) {
        self.settled = true;
        self.post(Box::new(move |env| match result {
            Ok(value) => unsafe { T::to_napi_value(env, value) },
            Err(fault) => Err(fault.into_napi(&Env::from_raw(env))),
        }));
    }

    fn post(&self, outcome: Outcome) {
        let ready = Ready { deferred: self.deferred, outcome };
        let held = HELD.with(|h| match h.borrow_mut().as_mut() {
            Some(held) => {
                held.push((self.channel.clone(), ready));
                None
            }
            None => Some(ready),
        });
        if let Some(ready) = held {
            deliver(&self.channel, vec![ready]);
        }
    }
}

/// Outcomes posted under [`together`], each with its channel.
type Held = Vec<(Arc<Channel>, Ready)>;

thread_local! {
    /// Set by [`together`]: outcomes posted on this thread wait here to be delivered at once.
    static HELD: RefCell<Option<Held>> = const { RefCell::new(None) };
}

/// Runs `f`, delivering the outcomes it posts together at its end: one lock of each channel and
/// one wake-up of its JS thread for a whole batch, rather than one per promise (the JS thread
/// takes the same lock to make each promise, and a writer preempted while holding it would
/// stall the event loop).
pub fn together(f: impl FnOnce()) {
    /// Delivers what was held even when `f` unwinds.
    struct Flush;
    impl Drop for Flush {
        fn drop(&mut self) {
            let mut held = HELD.with(|h| h.borrow_mut().take()).unwrap_or_default();
            while let Some((channel, _)) = held.first() {
                let channel = channel.clone();
                let (mine, rest): (Vec<_>, Vec<_>) = held.into_iter().partition(|(c, _)| Arc::ptr_eq(c, &channel));
                deliver(&channel, mine.into_iter().map(|(_, r)| r).collect());
                held = rest;
            }
        }
    }
    HELD.with(|h| *h.borrow_mut() = Some(Vec::new()));
    let _flush = Flush;
    f();
}

fn deliver(channel: &Channel, ready: Vec<Ready>) {
    let call = {
        let mut s = channel.lock();
        s.running -= ready.len();
        s.ready.extend(ready);
        // std's Condvar makes a futex call on every notify, waiter or not: one syscall per
        // batch saved when no environment is tearing down.
        if s.running == 0 && s.awaiting_idle > 0 {
            channel.idle.notify_all();
        }
        !std::mem::replace(&mut s.scheduled, true)
    };
    if call {
        // Refused only while the environment tears down; its teardown drops what is queued.
        unsafe {
            sys::napi_call_threadsafe_function(
                channel.tsfn,
                ptr::null_mut(),
                sys::ThreadsafeFunctionCallMode::nonblocking,
            )
        };
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        if !self.settled {
            let lost = Fault {
                code: crate::fault_codes::PANIC,
                message: "internal error: a command was dropped before it ran".into(),
                holder: None,
                expired: None,
            };
            self.post(Box::new(move |env| Err(lost.into_napi(&Env::from_raw(env)))));
        }
    }
}

/// A new promise of `env`, and the handle that settles it from any thread.
pub fn promise(env: &Env) -> napi::Result<(Pending, sys::napi_value)> {
    let channel = channel(env)?;
    let mut deferred = ptr::null_mut();
    let mut promise = ptr::null_mut();
    napi::check_status!(unsafe { sys::napi_create_promise(env.raw(), &mut deferred, &mut promise) })?;
    let first = {
        let mut s = channel.lock();
        s.unsettled += 1;
        s.running += 1;
        s.unsettled == 1
    };
    if first {
        napi::check_status!(unsafe { sys::napi_ref_threadsafe_function(env.raw(), channel.tsfn) })?;
    }
    Ok((Pending { channel, deferred, settled: false }, promise))
}

/// The channel of `env`, made at its first use.
fn channel(env: &Env) -> napi::Result<Arc<Channel>> {
    static CHANNELS: OnceLock<Mutex<HashMap<usize, Arc<Channel>>>> = OnceLock::new();
    let channels = CHANNELS.get_or_init(Default::default);
    let key = env.raw() as usize;
    let mut map = channels.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(c) = map.get(&key) {
        return Ok(c.clone());
    }
    let mut name = ptr::null_mut();
    let label = "rabosh-completions";
    napi::check_status!(unsafe {
        sys::napi_create_string_utf8(env.raw(), label.as_ptr().cast(), label.len() as isize, &mut name)
    })?;
    // The threadsafe function owns one reference to the channel, given back in `finalize`.
    let slot: Arc<Slot> = Arc::new(Mutex::new(None));
    let context = Arc::into_raw(slot.clone()) as *mut c_void;
    let mut tsfn = ptr::null_mut();
    let made = napi::check_status!(unsafe {
        sys::napi_create_threadsafe_function(
            env.raw(),
            ptr::null_mut(),
            ptr::null_mut(),
            name,
            0,
            1,
            context,
            Some(finalize),
            context,
            Some(drain),
            &mut tsfn,
        )
    });
    if let Err(e) = made {
        drop(unsafe { Arc::from_raw(context as *const Slot) });
        return Err(e);
    }
    let channel = Arc::new(Channel { tsfn, state: Mutex::default(), idle: Condvar::new() });
    *slot.lock().unwrap_or_else(|p| p.into_inner()) = Some(channel.clone());
    // Idle until a promise is made: an unused channel must not keep the process alive.
    unsafe { sys::napi_unref_threadsafe_function(env.raw(), tsfn) };
    // Registered after the threadsafe function, so it runs before Node tears that down (cleanup
    // hooks run in reverse order): a terminated worker's environment waits here for its commands
    // still running elsewhere, as it waits for its libuv work, so when `terminate()` resolves
    // they have let go of its store and another thread can open it at once.
    env.add_env_cleanup_hook(channel.clone(), move |c: Arc<Channel>| {
        let mut s = c.lock();
        s.awaiting_idle += 1;
        let mut s = c.idle.wait_while(s, |s| s.running > 0).unwrap_or_else(|p| p.into_inner());
        s.awaiting_idle -= 1;
        drop(s);
        channels.lock().unwrap_or_else(|p| p.into_inner()).remove(&key);
    })?;
    map.insert(key, channel.clone());
    Ok(channel)
}

/// Promises settled per turn of the event loop. Each settled command's caller continues at once
/// (formatting its answer, sending its next command); 64 of them in one callback would block the
/// loop for as long as all of that takes, so the rest wait for the next turn (`setImmediate`).
const PER_TURN: usize = 8;

type Slot = Mutex<Option<Arc<Channel>>>;

/// The threadsafe function's callback, on the JS thread: settles what is ready.
unsafe extern "C" fn drain(env: sys::napi_env, _js: sys::napi_value, context: *mut c_void, _data: *mut c_void) {
    // A null `env`: the environment is going away and Node empties the queue AFTER `finalize`
    // freed the context, so it must not be touched; what is ready goes with the channel.
    if !env.is_null() {
        unsafe { settle_ready(env, context) };
    }
}

/// `setImmediate`'s callback: the next turn's share of what is ready.
unsafe extern "C" fn next_turn(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
    let mut context = ptr::null_mut();
    let got =
        unsafe { sys::napi_get_cb_info(env, info, ptr::null_mut(), ptr::null_mut(), ptr::null_mut(), &mut context) };
    if got == sys::Status::napi_ok {
        unsafe { settle_ready(env, context) };
    }
    ptr::null_mut()
}

/// Settles up to [`PER_TURN`] ready promises in order; leaves the rest to the next turn of the
/// loop, or settles them now if that turn cannot be scheduled.
unsafe fn settle_ready(env: sys::napi_env, context: *mut c_void) {
    // Valid until `finalize`, which runs only at the environment's teardown, after which
    // neither the threadsafe function nor an immediate calls back.
    let slot = unsafe { &*(context as *const Slot) };
    let Some(channel) = slot.lock().unwrap_or_else(|p| p.into_inner()).clone() else { return };
    let mut limit = PER_TURN;
    loop {
        let (ready, more) = {
            let mut s = channel.lock();
            let n = limit.min(s.ready.len());
            let ready: Vec<Ready> = s.ready.drain(..n).collect();
            let more = !s.ready.is_empty();
            // While more wait, the turn scheduled below takes what arrives too.
            s.scheduled = more;
            (ready, more)
        };
        let settled = ready.len();
        for r in ready {
            let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (r.outcome)(env)))
                .unwrap_or_else(|p| Err(Fault::panic(p).into_napi(&Env::from_raw(env))));
            unsafe {
                match outcome {
                    Ok(value) => sys::napi_resolve_deferred(env, r.deferred, value),
                    Err(e) => sys::napi_reject_deferred(env, r.deferred, JsError::from(e).into_value(env)),
                };
            }
        }
        let idle = {
            let mut s = channel.lock();
            s.unsettled -= settled;
            s.unsettled == 0
        };
        if idle {
            unsafe { sys::napi_unref_threadsafe_function(env, channel.tsfn) };
        }
        if !more || unsafe { set_immediate(env, context) } {
            return;
        }
        limit = usize::MAX;
    }
}

/// `setImmediate(next_turn)`; false when it could not be called.
unsafe fn set_immediate(env: sys::napi_env, context: *mut c_void) -> bool {
    let name = "setImmediate";
    let (mut global, mut set, mut f, mut ignored) =
        (ptr::null_mut(), ptr::null_mut(), ptr::null_mut(), ptr::null_mut());
    unsafe {
        sys::napi_get_global(env, &mut global) == sys::Status::napi_ok
            && sys::napi_get_named_property(env, global, c"setImmediate".as_ptr(), &mut set) == sys::Status::napi_ok
            && sys::napi_create_function(
                env,
                name.as_ptr().cast(),
                name.len() as isize,
                Some(next_turn),
                context,
                &mut f,
            ) == sys::Status::napi_ok
            && sys::napi_call_function(env, global, set, 1, &f, &mut ignored) == sys::Status::napi_ok
    }
}

unsafe extern "C" fn finalize(_env: sys::napi_env, data: *mut c_void, _hint: *mut c_void) {
    drop(unsafe { Arc::from_raw(data as *const Slot) });
}
