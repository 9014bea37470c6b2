//! Bounded waits for shared mode's commit lock: a stopped or stuck holder (a debugger pause, a
//! laptop asleep mid-commit, another program holding `WRITER`) must not freeze every process.
//!
//! The wait itself is the OS's blocking lock, not a poll: a poller only sees the lock free in
//! the gap between a busy process's release and its next take, and would starve behind it. A
//! blocking take has no timeout, so it runs on a helper thread over its own handle on `WRITER`
//! (locks belong to the open file, so that handle excludes this process's other one), and the
//! caller waits for it with a timeout. A helper whose caller gave up stays parked on the lock;
//! the next caller adopts it instead of starting another, and one that gets the lock after
//! everyone gave up lets it go at once.

use crate::error::{Error, LockHolder, Result};
use crate::io::vfs::{CommitLock, Vfs};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// How often a waiter looks at the progress it waits on.
const NAP: Duration = Duration::from_millis(200);

#[derive(Default)]
struct Slot {
    /// What the helper got, for a caller still waiting.
    got: Option<std::io::Result<Box<dyn CommitLock>>>,
    /// A caller is waiting for this helper now.
    wanted: bool,
    /// The helper is finished: its lock went to a caller or was let go.
    done: bool,
}

#[derive(Default)]
pub(crate) struct Waiter {
    slot: Mutex<Slot>,
    moved: Condvar,
}

/// The parked helper of one store handle, if any.
#[derive(Default)]
pub(crate) struct Waiters(Mutex<Option<Arc<Waiter>>>);

/// How long a caller has waited for the commit lock, and whether it may wait on: the timeout
/// runs from when the caller began to wait (a command queued behind others has waited already),
/// and restarts whenever `progress` (what the store's synced record says, moved by every durable
/// commit of any process) changes — many processes taking turns are slow, not stuck, while a
/// stopped holder moves nothing.
pub(crate) struct Patience<'a> {
    started: Instant,
    since: Instant,
    seen: u64,
    timeout: Duration,
    progress: &'a dyn Fn() -> u64,
}

impl<'a> Patience<'a> {
    pub fn new(started: Instant, timeout: Duration, progress: &'a dyn Fn() -> u64) -> Patience<'a> {
        Patience { started, since: started, seen: progress(), timeout, progress }
    }

    /// Time left to wait; zero once the timeout passed with no progress.
    pub fn left(&mut self) -> Duration {
        let now = (self.progress)();
        if now != self.seen {
            (self.seen, self.since) = (now, Instant::now());
        }
        self.timeout.saturating_sub(self.since.elapsed())
    }

    /// This process itself holds the lock meanwhile: its own work, not a stuck holder.
    pub fn moved(&mut self) {
        self.since = Instant::now();
    }

    /// `Busy` for the commit lock at `path`, naming its holder as far as the OS tells.
    pub fn busy(&self, path: &Path) -> Error {
        let dir = path.parent().unwrap_or(path).to_path_buf();
        Error::Busy { dir, holder: holder_of(path), waited_ms: self.started.elapsed().as_millis() as u64 }
    }
}

impl Waiters {
    /// Waits for a handle of its own on the commit lock at `path` as long as `patience` lasts
    /// (`Busy` after that), looking at its progress a few times a second. Called by one thread
    /// of the process at a time (the caller holds the commit gate).
    pub fn wait(&self, vfs: &Arc<dyn Vfs>, path: &Path, patience: &mut Patience<'_>) -> Result<Box<dyn CommitLock>> {
        loop {
            let waiter = self.helper(vfs, path)?;
            let mut slot = waiter.slot.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            slot.wanted = true;
            loop {
                if let Some(got) = slot.got.take() {
                    slot.wanted = false;
                    slot.done = true;
                    return got.map_err(|e| Error::io("lock", path, e));
                }
                if slot.done {
                    // Let go while no one waited (a caller before this one gave up just then):
                    // wait on with a helper of its own.
                    break;
                }
                let left = patience.left();
                if left.is_zero() {
                    slot.wanted = false;
                    return Err(patience.busy(path));
                }
                let nap = left.min(NAP);
                slot = waiter.moved.wait_timeout(slot, nap).unwrap_or_else(std::sync::PoisonError::into_inner).0;
            }
        }
    }

    /// The parked helper, or a new one when there is none (or it finished).
    fn helper(&self, vfs: &Arc<dyn Vfs>, path: &Path) -> Result<Arc<Waiter>> {
        let mut parked = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(w) = &*parked
            && !w.slot.lock().unwrap_or_else(std::sync::PoisonError::into_inner).done
        {
            return Ok(w.clone());
        }
        // Wanted from the start: a helper that gets the lock at once must hand it over, not let
        // it go before this caller said it waits.
        let w = Arc::new(Waiter::default());
        w.slot.lock().unwrap_or_else(std::sync::PoisonError::into_inner).wanted = true;
        spawn_helper(vfs.clone(), path.to_path_buf(), w.clone())?;
        *parked = Some(w.clone());
        Ok(w)
    }
}

fn spawn_helper(vfs: Arc<dyn Vfs>, path: PathBuf, w: Arc<Waiter>) -> Result<()> {
    let spawned = std::thread::Builder::new().name("rabosh-lock-wait".into()).spawn(move || {
        let got = vfs.commit_lock(&path).and_then(|l| l.lock().map(|()| l));
        let mut slot = w.slot.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if slot.wanted {
            slot.got = Some(got);
            w.moved.notify_all();
        } else {
            slot.done = true;
            if let Ok(l) = got {
                l.unlock();
            }
        }
    });
    spawned.map(drop).map_err(|e| Error::io("spawn a lock waiter for", "WRITER", e))
}

/// Who holds the commit lock at `path`, as far as the OS tells: on Linux the `flock` holder's
/// pid from `/proc/locks` (this host: shared mode is local filesystems only); unknown elsewhere.
pub(crate) fn holder_of(path: &Path) -> LockHolder {
    #[cfg(target_os = "linux")]
    if let Some(pid) = flock_holder(path) {
        return LockHolder {
            pid: Some(pid),
            host: std::fs::read_to_string("/proc/sys/kernel/hostname").ok().map(|s| s.trim().to_string()),
            started_at_ms: None,
            is_running: std::path::Path::new(&format!("/proc/{pid}")).exists(),
            this_process: pid == std::process::id(),
        };
    }
    #[cfg(not(target_os = "linux"))]
    let _ = path;
    LockHolder { pid: None, host: None, started_at_ms: None, is_running: false, this_process: false }
}

#[cfg(target_os = "linux")]
fn flock_holder(path: &Path) -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    let ino = std::fs::metadata(path).ok()?.ino();
    let locks = std::fs::read_to_string("/proc/locks").ok()?;
    // "1: FLOCK  ADVISORY  WRITE 4242 08:01:131090 0 EOF"; waiters' lines carry "->".
    locks.lines().filter(|l| !l.contains("->")).find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        let (pid, dev_ino) = (f.get(4)?, f.get(5)?);
        let held_ino: u64 = dev_ino.rsplit(':').next()?.parse().ok()?;
        (held_ino == ino).then(|| pid.parse().ok()).flatten()
    })
}

/// What the thread in the commit gate does there.
#[derive(Clone, Copy, PartialEq, Eq, Default)]
enum InGate {
    #[default]
    Free,
    /// Waits for another process to let the commit lock go.
    Waiting,
    /// Holds the commit lock: this process's own work.
    Holding,
}

/// One thread of the process at a time holds or waits for the commit lock (the OS lock is per
/// open file). Not a plain mutex: a thread behind one that waits for another process's holder
/// must give up by its own timeout, not by the other's (nor wait on while threads that came
/// later barge in ahead of it).
#[derive(Default)]
pub(crate) struct Gate {
    state: Mutex<InGate>,
    freed: Condvar,
}

/// In the gate until dropped.
pub(crate) struct GateGuard<'a>(&'a Gate);

impl Gate {
    fn state(&self) -> std::sync::MutexGuard<'_, InGate> {
        // Held only to read or set the state: never poisoned in a way that matters.
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Enters the gate: behind a thread of this process that holds the commit lock, as long as
    /// that takes (its own work moves); behind one that waits for another process, as long as
    /// `patience` lasts — `Busy` for the commit lock at `path` after that.
    pub fn enter(&self, path: &Path, patience: &mut Patience<'_>) -> Result<GateGuard<'_>> {
        let mut st = self.state();
        loop {
            let nap = match *st {
                InGate::Free => {
                    *st = InGate::Waiting;
                    return Ok(GateGuard(self));
                }
                InGate::Holding => {
                    patience.moved();
                    NAP
                }
                InGate::Waiting => match patience.left() {
                    left if left.is_zero() => return Err(patience.busy(path)),
                    left => left.min(NAP),
                },
            };
            st = self.freed.wait_timeout(st, nap).unwrap_or_else(std::sync::PoisonError::into_inner).0;
        }
    }

    /// The gate if it is free now.
    pub fn try_enter(&self) -> Option<GateGuard<'_>> {
        let mut st = self.state();
        (*st == InGate::Free).then(|| {
            *st = InGate::Waiting;
            GateGuard(self)
        })
    }
}

impl GateGuard<'_> {
    /// This thread holds the commit lock now.
    pub fn holding(&self) {
        *self.0.state() = InGate::Holding;
    }
}

impl Drop for GateGuard<'_> {
    fn drop(&mut self) {
        *self.0.state() = InGate::Free;
        // Every waiter looks: each judges by its own patience.
        self.0.freed.notify_all();
    }
}
