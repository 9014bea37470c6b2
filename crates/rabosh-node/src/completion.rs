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

// SAFETY: `state` and `idle` are a Mutex and a Condvar. Of the raw handles, other threads use
// only `tsfn`, and only in `napi_call_threadsafe_function`, which Node-API lets any thread call
// while the function lives: `deliver` makes that call with its outcomes still counted in
// `running`, and the environment's teardown (which frees the function) waits in the cleanup
// hook until `running` is 0. Its ref/unref calls, and every deferred queued in `state.ready`,
// are used on the JS thread only (`promise`, `channel`, `settle_ready`).
unsafe impl Send for Channel {}
// SAFETY: as for Send: shared references reach the state through its Mutex, and `tsfn` only in
// the any-thread call above; nothing else in `Channel` is used through `&Channel`.
unsafe impl Sync for Channel {}
// SAFETY: `outcome` is Send; `deferred` is an opaque handle that is only carried, never used,
// off the JS thread: `settle_ready` resolves it on the thread of the environment that made it.
unsafe impl Send for Ready {}

impl Channel {
    fn lock(&self) -> MutexGuard<'_, State> {
        // Nothing panics while holding it; a poisoned lock still holds a consistent queue.
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// `posted` outcomes are delivered: no longer running.
    fn count_down(&self, s: &mut State, posted: usize) {
        s.running -= posted;
        // std's Condvar makes a futex call on every notify, waiter or not: one syscall per
        // batch saved when no environment is tearing down.
        if s.running == 0 && s.awaiting_idle > 0 {
            self.idle.notify_all();
        }
    }
}

/// A promise made on the JS thread, to be settled once from any thread. Dropped unsettled (its
/// work was lost), it rejects with `RABOSH_PANIC` rather than leaving the caller waiting forever.
pub struct Pending {
    channel: Arc<Channel>,
    deferred: sys::napi_deferred,
    settled: bool,
}

// SAFETY: `channel` is an Arc of a Send + Sync Channel; `deferred` is only copied into a
// `Ready` (Send, above) and resolved on the JS thread by `settle_ready`.
unsafe impl Send for Pending {}

impl Pending {
    /// Posts the outcome; the promise settles on the JS thread at the channel's next drain.
    pub fn settle<T: ToNapiValue + Send + 'static>(mut self, result: FaultResult<T>) {
        self.settled = true;
        self.post(Box::new(move |env| match result {
            // SAFETY: an `Outcome` is called only by `settle_ready`, on the JS thread, with the
            // live environment of the drain it runs in, which made this promise.
            Ok(value) => unsafe { T::to_napi_value(env, value) },
            Err(fault) => Err(fault.into_napi(Env::from_raw(env))),
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
    deliver_with(channel, ready, |tsfn| {
        // SAFETY: Node-API lets any thread call a threadsafe function until it is freed, and
        // it is freed only by the environment's teardown, after the cleanup hook registered in
        // `channel` saw `running` reach 0: `deliver_with` counts these outcomes as running until
        // this call has returned. The data pointer is null (`drain` ignores it); the queue is
        // unbounded, so a nonblocking call never waits.
        unsafe {
            sys::napi_call_threadsafe_function(tsfn, ptr::null_mut(), sys::ThreadsafeFunctionCallMode::nonblocking)
        };
    });
}

/// Queues `ready` and, unless a drain is already scheduled, wakes the JS thread with `wake`
/// (the threadsafe function's call; a stand-in in tests). The outcomes stay counted in
/// `running` until that call has returned: a teardown waiting for `running == 0` then frees the
/// threadsafe function, so counting them down first would let it be freed under the call.
fn deliver_with(channel: &Channel, ready: Vec<Ready>, wake: impl FnOnce(sys::napi_threadsafe_function)) {
    let posted = ready.len();
    let call = {
        let mut s = channel.lock();
        s.ready.extend(ready);
        let call = !std::mem::replace(&mut s.scheduled, true);
        if !call {
            channel.count_down(&mut s, posted);
        }
        call
    };
    if call {
        // Refused (napi_closing) only while the environment tears down; its teardown drops
        // what is queued.
        wake(channel.tsfn);
        channel.count_down(&mut channel.lock(), posted);
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
            self.post(Box::new(move |env| Err(lost.into_napi(Env::from_raw(env)))));
        }
    }
}

/// A new promise of `env`, and the handle that settles it from any thread.
pub fn promise(env: &Env) -> napi::Result<(Pending, sys::napi_value)> {
    let channel = channel(env)?;
    let mut deferred = ptr::null_mut();
    let mut promise = ptr::null_mut();
    // SAFETY: an `Env` is not Send, so this runs on its JS thread, in a call from JS where the
    // environment is live; both out pointers are locals.
    napi::check_status!(unsafe { sys::napi_create_promise(env.raw(), &raw mut deferred, &raw mut promise) })?;
    let first = {
        let mut s = channel.lock();
        s.unsettled += 1;
        s.running += 1;
        s.unsettled == 1
    };
    if first {
        // SAFETY: on `env`'s JS thread (as above); `channel.tsfn` is this environment's
        // threadsafe function, freed only at its teardown.
        napi::check_status!(unsafe { sys::napi_ref_threadsafe_function(env.raw(), channel.tsfn) })?;
    }
    Ok((Pending { channel, deferred, settled: false }, promise))
}

/// The channel of `env`, made at its first use.
fn channel(env: &Env) -> napi::Result<Arc<Channel>> {
    static CHANNELS: OnceLock<Mutex<HashMap<usize, Arc<Channel>>>> = OnceLock::new();
    let channels = CHANNELS.get_or_init(Default::default);
    let key = env.raw() as usize;
    let mut map = channels.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(c) = map.get(&key) {
        return Ok(c.clone());
    }
    let mut name = ptr::null_mut();
    let label = "rabosh-completions";
    // SAFETY: on `env`'s JS thread (an `Env` is not Send); `label` is valid UTF-8 of the length
    // given (which fits an isize); `name` is a local out pointer.
    napi::check_status!(unsafe {
        sys::napi_create_string_utf8(env.raw(), label.as_ptr().cast(), label.len().cast_signed(), &raw mut name)
    })?;
    // The threadsafe function owns one reference to the channel, given back in `finalize`.
    let slot: Arc<Slot> = Arc::new(Mutex::new(None));
    let context = Arc::into_raw(slot.clone()) as *mut c_void;
    let mut tsfn = ptr::null_mut();
    // SAFETY: on `env`'s JS thread. No JS function (allowed with a `call_js_cb`) nor async
    // resource; `name` was just made in `env`; an unbounded queue, one thread reference (never
    // released: the function lives as long as the environment). `context` is the leaked Arc:
    // Node hands it to `drain` and `next_turn` until teardown, then to `finalize`, which
    // reclaims it once; `tsfn` is a local out pointer.
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
            &raw mut tsfn,
        )
    });
    if let Err(e) = made {
        // SAFETY: `context` came from `Arc::into_raw` above; a failed creation made no function
        // (so no `finalize` will run), and this takes back the one reference it was given.
        drop(unsafe { Arc::from_raw(context as *const Slot) });
        return Err(e);
    }
    let channel = Arc::new(Channel { tsfn, state: Mutex::default(), idle: Condvar::new() });
    *slot.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(channel.clone());
    // Idle until a promise is made: an unused channel must not keep the process alive.
    // SAFETY: on `env`'s JS thread; `tsfn` was just made in `env` and lives until its teardown.
    unsafe { sys::napi_unref_threadsafe_function(env.raw(), tsfn) };
    // Registered after the threadsafe function, so it runs before Node tears that down (cleanup
    // hooks run in reverse order): a terminated worker's environment waits here for its commands
    // still running elsewhere, as it waits for its libuv work, so when `terminate()` resolves
    // they have let go of its store and another thread can open it at once.
    env.add_env_cleanup_hook(channel.clone(), move |c: Arc<Channel>| {
        let mut s = c.lock();
        s.awaiting_idle += 1;
        let mut s = c.idle.wait_while(s, |s| s.running > 0).unwrap_or_else(std::sync::PoisonError::into_inner);
        s.awaiting_idle -= 1;
        drop(s);
        channels.lock().unwrap_or_else(std::sync::PoisonError::into_inner).remove(&key);
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
///
/// # Safety
///
/// Called by Node only, as the `call_js_cb` of the threadsafe function made in `channel`, with
/// the `context` given there: either with a live `env` on its JS thread, or with a null `env`
/// after `finalize` (then `context` is freed).
unsafe extern "C" fn drain(env: sys::napi_env, _js: sys::napi_value, context: *mut c_void, _data: *mut c_void) {
    // A null `env`: the environment is going away and Node empties the queue AFTER `finalize`
    // freed the context, so it must not be touched; what is ready goes with the channel.
    if !env.is_null() {
        // SAFETY: a non-null `env` is a live environment on its JS thread, inside a callback
        // Node opened a handle scope for; `context` is the Slot that `finalize` has not freed.
        unsafe { settle_ready(env, context) };
    }
}

/// `setImmediate`'s callback: the next turn's share of what is ready.
///
/// # Safety
///
/// Called by Node only, as the JS function made in `set_immediate`: on the JS thread of the
/// live `env`, with `info` for this call, whose data is the Slot that `finalize` frees.
unsafe extern "C" fn next_turn(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
    let mut context = ptr::null_mut();
    // SAFETY: `env` and `info` are this call's (the fn's contract); the nulls ask for no
    // arguments nor `this`, and `context` is a local out pointer.
    let got = unsafe {
        sys::napi_get_cb_info(env, info, ptr::null_mut(), ptr::null_mut(), ptr::null_mut(), &raw mut context)
    };
    if got == sys::Status::napi_ok {
        // SAFETY: on the JS thread of the live `env`; `context` is the function's data, the Slot
        // given to `set_immediate`. It is not freed yet: `finalize` runs only at the teardown,
        // and a tearing-down environment runs no JS, so no immediate, after it begins.
        unsafe { settle_ready(env, context) };
    }
    ptr::null_mut()
}

/// Settles up to [`PER_TURN`] ready promises in order; leaves the rest to the next turn of the
/// loop, or settles them now if that turn cannot be scheduled.
///
/// # Safety
///
/// On the JS thread of `env`, a live environment inside a callback from Node (a handle scope
/// open); `context` is the Slot given to the threadsafe function of `env`'s channel, which
/// `finalize` has not freed yet.
unsafe fn settle_ready(env: sys::napi_env, context: *mut c_void) {
    // SAFETY: the fn's contract: `context` points to a live Slot (its Arc reference is held by
    // the threadsafe function until `finalize`, which runs only at the environment's teardown,
    // after which neither the threadsafe function nor an immediate calls back).
    let slot = unsafe { &*(context as *const Slot) };
    let Some(channel) = slot.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone() else { return };
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
                .unwrap_or_else(|p| Err(Fault::panic(&*p).into_napi(Env::from_raw(env))));
            // Each deferred is settled here once: a `Pending` posts one `Ready` (settling marks
            // it so its drop does not post another), and draining takes it off the queue.
            match outcome {
                // SAFETY: on `env`'s JS thread; `r.deferred` was made in `env` by `promise` and
                // not settled yet (above); `value` was just made in `env`.
                Ok(value) => unsafe { sys::napi_resolve_deferred(env, r.deferred, value) },
                Err(e) => {
                    // SAFETY: `env` is live and this is its JS thread.
                    let error = unsafe { JsError::from(e).into_value(env) };
                    // SAFETY: as for resolving; `error` was just made in `env`.
                    unsafe { sys::napi_reject_deferred(env, r.deferred, error) }
                }
            };
        }
        let idle = {
            let mut s = channel.lock();
            s.unsettled -= settled;
            s.unsettled == 0
        };
        if idle {
            // SAFETY: on `env`'s JS thread; its channel's threadsafe function lives until the
            // environment's teardown, which has not begun while Node calls back into it.
            unsafe { sys::napi_unref_threadsafe_function(env, channel.tsfn) };
        }
        // SAFETY: this fn's own contract, which `set_immediate` shares.
        if !more || unsafe { set_immediate(env, context) } {
            return;
        }
        limit = usize::MAX;
    }
}

/// `setImmediate(next_turn)`; false when it could not be called.
///
/// # Safety
///
/// As [`settle_ready`]: on the JS thread of the live `env`, in a callback; `context` is the Slot
/// of `env`'s channel, not yet freed by `finalize` (`next_turn` gets it back as its data).
unsafe fn set_immediate(env: sys::napi_env, context: *mut c_void) -> bool {
    const OK: sys::napi_status = sys::Status::napi_ok;
    let name = "setImmediate";
    // Each call below runs on `env`'s JS thread in a callback (this fn's contract), with local
    // out pointers, and takes only napi_values made in `env` by the calls before it.
    let mut global = ptr::null_mut();
    // SAFETY: see above.
    if unsafe { sys::napi_get_global(env, &raw mut global) } != OK {
        return false;
    }
    let mut set = ptr::null_mut();
    // SAFETY: see above; the property name is a NUL-terminated C string literal.
    if unsafe { sys::napi_get_named_property(env, global, c"setImmediate".as_ptr(), &raw mut set) } != OK {
        return false;
    }
    let mut f = ptr::null_mut();
    // SAFETY: see above; `name` is UTF-8 of the length given; `context` stays valid for as long
    // as the function can be called (see `next_turn`).
    let made = unsafe {
        sys::napi_create_function(
            env,
            name.as_ptr().cast(),
            name.len().cast_signed(),
            Some(next_turn),
            context,
            &raw mut f,
        )
    };
    if made != OK {
        return false;
    }
    let mut ignored = ptr::null_mut();
    // SAFETY: see above; `argv` points to the one argument counted.
    unsafe { sys::napi_call_function(env, global, set, 1, &raw const f, &raw mut ignored) == OK }
}

/// The threadsafe function's finalizer: gives back its reference to the Slot.
///
/// # Safety
///
/// Called by Node only, once, at the environment's teardown, as the `thread_finalize_cb` of
/// the threadsafe function made in `channel`, with its `thread_finalize_data`.
unsafe extern "C" fn finalize(_env: sys::napi_env, data: *mut c_void, _hint: *mut c_void) {
    // SAFETY: `data` is the pointer `channel` made with `Arc::into_raw` and gave to the
    // threadsafe function, and this single call takes back that one reference; no callback
    // reads it afterwards (`drain` is then called with a null `env` and does not).
    drop(unsafe { Arc::from_raw(data as *const Slot) });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ready() -> Ready {
        Ready { deferred: ptr::null_mut(), outcome: Box::new(|_| Ok(ptr::null_mut())) }
    }

    /// A teardown waits in the cleanup hook for `running == 0`, then Node frees the threadsafe
    /// function: the outcomes must still count as running while the wake-up call uses it.
    #[test]
    fn outcomes_count_as_running_until_the_wake_up_call_returns() {
        let channel = Channel { tsfn: ptr::null_mut(), state: Mutex::default(), idle: Condvar::new() };
        channel.lock().running = 3;
        let mut calls = 0;
        deliver_with(&channel, vec![ready(), ready()], |_| {
            calls += 1;
            assert_eq!(channel.lock().running, 3, "counted down before the call returned");
        });
        assert_eq!((calls, channel.lock().running), (1, 1));
        // A drain is already scheduled: no call, counted down at once.
        deliver_with(&channel, vec![ready()], |_| calls += 1);
        let s = channel.lock();
        assert_eq!((calls, s.running, s.ready.len()), (1, 0, 3));
    }
}
