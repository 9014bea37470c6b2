//! A store's own worker threads: where a store whose calls wait on something outside the process
//! (PostgreSQL's network round trips, its conflict retries' backoff) runs them, so that they never
//! occupy a thread of the caller's shared pool (Node's libuv pool has 4: four calls waiting on a
//! slow server would stall every `fs` and `dns` call of the process).
//!
//! Threads start on demand, up to `size`, and exit after lingering idle; jobs beyond `size` queue
//! in order. A job's panic is caught so the thread lives on (the caller's job settles its own
//! outcome and catches its own panics first; this is the last line).

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

/// One call to run on a worker thread.
pub type Job = Box<dyn FnOnce() + Send>;

/// An idle thread waits this long for the next job before it exits.
const LINGER: Duration = Duration::from_secs(2);

#[derive(Default)]
struct State {
    jobs: VecDeque<Job>,
    threads: usize,
    idle: usize,
}

pub struct Workers {
    name: &'static str,
    size: usize,
    state: Mutex<State>,
    wake: Condvar,
}

impl Workers {
    /// At most `size` threads (at least one), named `name`.
    #[must_use]
    pub fn new(name: &'static str, size: usize) -> Arc<Workers> {
        Arc::new(Workers { name, size: size.max(1), state: Mutex::default(), wake: Condvar::new() })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // Jobs run outside the lock: a poisoned lock still holds a consistent queue.
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Queues `job`; a thread takes it as soon as one is free. When no thread runs and none can
    /// be started, runs it here rather than lose it.
    pub fn submit(self: &Arc<Self>, job: Job) {
        let mut s = self.lock();
        s.jobs.push_back(job);
        if s.idle >= s.jobs.len() {
            self.wake.notify_one();
            return;
        }
        if s.threads < self.size {
            let me = self.clone();
            if std::thread::Builder::new().name(self.name.into()).spawn(move || me.serve()).is_ok() {
                s.threads += 1;
                return;
            }
        }
        if s.threads == 0 {
            let job = s.jobs.pop_back();
            drop(s);
            if let Some(job) = job {
                job();
            }
        }
    }

    /// Threads running now (for tests).
    pub fn threads(&self) -> usize {
        self.lock().threads
    }

    fn serve(self: Arc<Self>) {
        let mut s = self.lock();
        loop {
            if let Some(job) = s.jobs.pop_front() {
                drop(s);
                let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
                s = self.lock();
                continue;
            }
            s.idle += 1;
            let (next, waited) = self.wake.wait_timeout(s, LINGER).unwrap_or_else(std::sync::PoisonError::into_inner);
            s = next;
            s.idle -= 1;
            if waited.timed_out() && s.jobs.is_empty() {
                s.threads -= 1;
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Barrier;
    use std::sync::mpsc;

    #[test]
    fn jobs_run_on_up_to_size_threads_of_their_own() {
        let workers = Workers::new("rabosh-test-worker", 3);
        let caller = std::thread::current().id();
        let barrier = Arc::new(Barrier::new(4));
        let (tx, rx) = mpsc::channel();
        for _ in 0..3 {
            let (barrier, tx) = (barrier.clone(), tx.clone());
            // All three wait together: only possible when each runs on a thread of its own.
            workers.submit(Box::new(move || {
                barrier.wait();
                tx.send(std::thread::current().id()).unwrap();
            }));
        }
        barrier.wait();
        let ran: Vec<_> = (0..3).map(|_| rx.recv().unwrap()).collect();
        assert!(ran.iter().all(|id| *id != caller));
        assert_eq!(workers.threads(), 3);
        // A fourth job beyond the size queues and still runs, on one of the three.
        for _ in 0..10 {
            let tx = tx.clone();
            workers.submit(Box::new(move || tx.send(std::thread::current().id()).unwrap()));
        }
        for _ in 0..10 {
            rx.recv().unwrap();
        }
        assert!(workers.threads() <= 3);
    }

    #[test]
    fn a_panicking_job_does_not_take_its_thread_or_the_queue_with_it() {
        let workers = Workers::new("rabosh-test-worker", 1);
        workers.submit(Box::new(|| panic!("job failed")));
        let (tx, rx) = mpsc::channel();
        workers.submit(Box::new(move || tx.send(7).unwrap()));
        assert_eq!(rx.recv_timeout(Duration::from_secs(10)).unwrap(), 7);
    }
}
