//! One writer thread per embedded store, and a queue every command in flight can join.
//!
//! On the libuv pool (4 threads) a durable command's thread sleeps until its group commit is on
//! disk, so at most 4 commits could share one fsync however many callers waited. Here the writer
//! thread takes every command queued so far, runs them one after another (each its own atomic
//! commit, appended without waiting), then ONE fsync covers the batch and every command in it is
//! settled. Commands that arrive during that fsync form the next batch. None is acknowledged
//! before the fsync covering it returned; a failed fsync fails every command of its batch.
//!
//! After a batch the writer stays awake for [`SPIN`], yielding its core, before it sleeps. A
//! caller awaiting its command sends the next one a few tens of microseconds after the settle;
//! found by a writer still awake, that command costs no futex wake of a sleeping thread, which
//! on a virtual machine (an idle vCPU halted and woken by an interrupt) was the largest part of
//! a durable command's time beyond its fdatasync (docs/investigations/durable-commands.md: one caller's durable
//! `str_replace` 0.29 → 0.23 ms, medians of five bench invocations).
//!
//! Shared mode: a batch first takes the cross-process commit lock, waiting for it at most the
//! lock timeout counted from when its oldest command was queued. When that passes (another
//! process holds the lock and moves nothing), no command of the batch runs: those that waited
//! their whole timeout are answered `RABOSH_STORE_BUSY`, the others go back to the head of the
//! queue and the next batch waits for them, each answered within its own timeout. Run, a
//! command would wait a timeout of its own for the lock; one that got it would commit what its
//! answer, failed with the batch, would deny.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};

use rabosh_memory::EmbeddedStore;

use crate::fault::{Fault, FaultResult};

/// How a command is settled once its batch's fsync is known: given that fsync's result.
pub type Settle = Box<dyn FnOnce(&FaultResult<()>) + Send>;
/// A command: decides and appends (catching its own panics), then says how to settle it. Given a
/// fault, it does not run: it settles with that fault (its batch never got the commit lock).
pub type Command = Box<dyn FnOnce(Option<Fault>) -> Settle + Send>;

/// A command and when it was queued (what its wait for the commit lock counts from).
struct Queued {
    since: Instant,
    command: Command,
}

/// An idle writer thread lingers this long for the next command before it exits; it holds no
/// store, so a lingering thread never keeps a store's lock.
const LINGER: Duration = Duration::from_secs(2);

/// How long a writer that ran out of commands stays awake for the next before it sleeps. It
/// yields its core all along (`sched_yield`), so another thread runnable on that core (the JS
/// thread its settle just woke may be queued there) runs first; a spin on `pause` alone made one
/// run in four 2-3x slower than no spin. 50 and 100 µs caught fewer next commands than 200 on a
/// 2-vCPU box (docs/investigations/durable-commands.md); a store left idle pays at most this much CPU per batch.
const SPIN: Duration = Duration::from_micros(200);

#[derive(Default)]
struct State {
    commands: Vec<Queued>,
    /// A writer thread exists (running a batch, or lingering).
    serving: bool,
    /// The writer waits on `wake`: only then does a submit need to wake it.
    sleeping: bool,
    /// Waits that timed out with commands queued: a wake-up was missed (tests assert none).
    #[cfg(test)]
    woken_late: usize,
    /// Times the writer went to sleep.
    #[cfg(test)]
    sleeps: usize,
}

pub struct WriteQueue {
    /// Weak: the queue lives as long as its handlers, the store only as long as its users.
    store: Weak<EmbeddedStore>,
    state: Mutex<State>,
    /// Set by a submit (under the lock), cleared when the writer takes the batch: what a spinning
    /// writer polls without taking the lock the JS thread submits under.
    queued: AtomicBool,
    /// [`SPIN`]; tests set their own.
    spin: Duration,
    wake: Condvar,
    /// Runs a batch's settles: in a JS environment through the completion channel, delivering
    /// them together ([`crate::completion::together`]).
    settling: fn(Box<dyn FnOnce() + '_>),
}

impl WriteQueue {
    pub fn new(store: &Arc<EmbeddedStore>) -> Arc<WriteQueue> {
        WriteQueue::settling_with(store, |settle| crate::completion::together(settle))
    }

    fn settling_with(store: &Arc<EmbeddedStore>, settling: fn(Box<dyn FnOnce() + '_>)) -> Arc<WriteQueue> {
        WriteQueue::spinning(store, settling, SPIN)
    }

    fn spinning(store: &Arc<EmbeddedStore>, settling: fn(Box<dyn FnOnce() + '_>), spin: Duration) -> Arc<WriteQueue> {
        Arc::new(WriteQueue {
            store: Arc::downgrade(store),
            state: Mutex::default(),
            queued: AtomicBool::new(false),
            spin,
            wake: Condvar::new(),
            settling,
        })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // Commands run outside the lock and catch their panics: a poisoned lock is consistent.
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Queues `command` for the writer thread, starting one when there is none. When no thread
    /// can be started, runs it here as a batch of one rather than lose it.
    pub fn submit(self: &Arc<Self>, command: Command) {
        let mut s = self.lock();
        s.commands.push(Queued { since: Instant::now(), command });
        self.queued.store(true, Ordering::Release);
        if s.serving {
            // A writer running a batch finds the command itself when it is done: no wake-up
            // call (std's notify is a futex syscall, waiter or not: under 64 callers, one per
            // command on the JS thread). A sleeping one is woken after the lock is let go:
            // woken under it, it would run only to block on this lock and sleep again until
            // this thread lets go (two wake-ups, not one).
            let sleeping = s.sleeping;
            drop(s);
            if sleeping {
                self.wake.notify_one();
            }
            return;
        }
        let queue = self.clone();
        let started = std::thread::Builder::new().name("rabosh-writer".into()).spawn(move || queue.serve());
        if started.is_ok() {
            s.serving = true;
            return;
        }
        let mut batch = std::mem::take(&mut s.commands);
        drop(s);
        while !batch.is_empty() {
            batch = self.run(batch);
        }
    }

    fn serve(self: Arc<Self>) {
        let mut s = self.lock();
        loop {
            if !s.commands.is_empty() {
                let batch = std::mem::take(&mut s.commands);
                self.queued.store(false, Ordering::Relaxed);
                drop(s);
                let left = self.run(batch);
                s = self.lock();
                if !left.is_empty() {
                    // Still within their timeout: first in the next batch, ahead of newer ones.
                    let newer = std::mem::replace(&mut s.commands, left);
                    s.commands.extend(newer);
                    continue;
                }
                drop(s);
                self.spin_for_more();
                s = self.lock();
                continue;
            }
            // Checked empty under this same hold of the lock: a submit from now on sees
            // `sleeping` and wakes this thread.
            s.sleeping = true;
            #[cfg(test)]
            {
                s.sleeps += 1;
            }
            let (next, waited) = self.wake.wait_timeout(s, LINGER).unwrap_or_else(std::sync::PoisonError::into_inner);
            s = next;
            s.sleeping = false;
            #[cfg(test)]
            if waited.timed_out() && !s.commands.is_empty() {
                s.woken_late += 1;
            }
            if waited.timed_out() && s.commands.is_empty() {
                s.serving = false;
                return;
            }
        }
    }

    /// Stays awake until a command is queued or [`SPIN`] has passed. Not `sleeping` meanwhile,
    /// so a submit queues without a wake-up call and the loop finds the command under the lock.
    fn spin_for_more(&self) {
        let until = Instant::now() + self.spin;
        while !self.queued.load(Ordering::Acquire) && Instant::now() < until {
            std::thread::yield_now();
        }
    }

    /// Runs `batch` (oldest first) and settles it; returns the commands to run again: none,
    /// unless the commit lock could not be had (see the module comment).
    fn run(&self, batch: Vec<Queued>) -> Vec<Queued> {
        let Some(store) = self.store.upgrade() else {
            // Unreachable while a command holds a handler (and so the store). Were it reached,
            // each command runs as on the pool: its transaction waits for its own durability.
            let settles = batch.into_iter().map(|q| (q.command)(None)).collect();
            (self.settling)(Box::new(|| settle(settles, &Ok(()))));
            return Vec::new();
        };
        let started = batch.first().map_or_else(Instant::now, |q| q.since);
        let mut pending = Some(batch);
        let ran = store.appending(started, || run_commands(pending.take().unwrap_or_default()));
        let (settles, durable, left) = match ran {
            Ok((settles, appended)) => (settles, store.wait_durable(appended).map_err(Fault::from), Vec::new()),
            Err(busy) => {
                let (settles, left) =
                    refuse_expired(pending.take().unwrap_or_default(), &busy.into(), store.lock_timeout());
                (settles, Ok(()), left)
            }
        };
        // The store is let go before any command settles: once the last one has, a torn-down JS
        // environment may expect its store closed and its lock free.
        drop(store);
        (self.settling)(Box::new(|| settle(settles, &durable)));
        left
    }
}

/// Runs each command, in order, catching a panic in one so the others still run.
fn run_commands(batch: Vec<Queued>) -> Vec<Settle> {
    batch
        .into_iter()
        .filter_map(|q| std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (q.command)(None))).ok())
        .collect()
}

/// After a batch gave up on the commit lock: `busy` for each command that has waited `timeout`
/// (the oldest, whose wait the batch's was, at least), and the others to wait on.
fn refuse_expired(batch: Vec<Queued>, busy: &Fault, timeout: Duration) -> (Vec<Settle>, Vec<Queued>) {
    let oldest = batch.first().map(|q| q.since);
    let (expired, left): (Vec<Queued>, Vec<Queued>) =
        batch.into_iter().partition(|q| Some(q.since) == oldest || q.since.elapsed() >= timeout);
    (expired.into_iter().map(|q| (q.command)(Some(busy.clone()))).collect(), left)
}

pub fn settle(settles: Vec<Settle>, durable: &FaultResult<()>) {
    for settle in settles {
        // A settle only posts an outcome; a panic in one must not strand the others.
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| settle(durable)));
    }
}

/// The command's own result, unless the fsync its batch waited on failed: then that failure,
/// whatever the command decided (it is not durable, so it must not be acknowledged).
pub fn after_fsync<T>(result: FaultResult<T>, durable: &FaultResult<()>) -> FaultResult<T> {
    match (result, durable) {
        (Ok(_), Err(f)) => Err(Fault { code: f.code, message: f.message.clone(), holder: None, expired: None }),
        (result, _) => result,
    }
}

#[cfg(test)]
mod busy_tests;
#[cfg(test)]
mod tests;
