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

use crate::vfs::{CommitLock, Vfs};
use crate::{Error, LockHolder, Result};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

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

impl Waiters {
    /// Waits for a handle of its own on the commit lock at `path`, until `timeout` passes with no
    /// progress: `progress` (what the store's synced record says, moved by every durable commit
    /// of any process) is looked at a few times a second, and each change restarts the timeout —
    /// many processes taking turns are slow, not stuck, while a stopped holder moves nothing.
    /// Called by one thread of the process at a time (the caller holds the commit gate).
    pub fn wait(
        &self,
        vfs: &Arc<dyn Vfs>,
        path: &Path,
        timeout: Duration,
        progress: &dyn Fn() -> u64,
    ) -> Result<Box<dyn CommitLock>> {
        let started = Instant::now();
        let mut since = started;
        let mut seen = progress();
        let waiter = {
            let mut parked = self.0.lock().unwrap_or_else(|p| p.into_inner());
            match &*parked {
                Some(w) if !w.slot.lock().unwrap_or_else(|p| p.into_inner()).done => w.clone(),
                _ => {
                    // Wanted from the start: a helper that gets the lock at once must hand it
                    // over, not let it go before this caller said it waits.
                    let w = Arc::new(Waiter::default());
                    w.slot.lock().unwrap_or_else(|p| p.into_inner()).wanted = true;
                    spawn_helper(vfs.clone(), path.to_path_buf(), w.clone())?;
                    *parked = Some(w.clone());
                    w
                }
            }
        };
        let mut slot = waiter.slot.lock().unwrap_or_else(|p| p.into_inner());
        slot.wanted = true;
        loop {
            if let Some(got) = slot.got.take() {
                slot.wanted = false;
                slot.done = true;
                return got.map_err(|e| Error::io("lock", path, e));
            }
            if slot.done {
                // Let go while no one waited (a caller before this one gave up just then).
                drop(slot);
                let left = timeout.saturating_sub(since.elapsed());
                return self.wait(vfs, path, left.max(Duration::from_millis(1)), progress);
            }
            let now = progress();
            if now != seen {
                (seen, since) = (now, Instant::now());
            }
            let left = timeout.saturating_sub(since.elapsed());
            if left.is_zero() {
                slot.wanted = false;
                let dir = path.parent().unwrap_or(path).to_path_buf();
                return Err(Error::Busy {
                    dir,
                    holder: holder_of(path),
                    waited_ms: started.elapsed().as_millis() as u64,
                });
            }
            let nap = left.min(Duration::from_millis(200));
            slot = waiter.moved.wait_timeout(slot, nap).unwrap_or_else(|p| p.into_inner()).0;
        }
    }
}

fn spawn_helper(vfs: Arc<dyn Vfs>, path: PathBuf, w: Arc<Waiter>) -> Result<()> {
    let spawned = std::thread::Builder::new().name("rabosh-lock-wait".into()).spawn(move || {
        let got = vfs.commit_lock(&path).and_then(|l| l.lock().map(|()| l));
        let mut slot = w.slot.lock().unwrap_or_else(|p| p.into_inner());
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
    let mut h = LockHolder { pid: None, host: None, started_at_ms: None, is_running: false, this_process: false };
    #[cfg(target_os = "linux")]
    if let Some(pid) = flock_holder(path) {
        h.pid = Some(pid);
        h.host = std::fs::read_to_string("/proc/sys/kernel/hostname").ok().map(|s| s.trim().to_string());
        h.is_running = std::path::Path::new(&format!("/proc/{pid}")).exists();
        h.this_process = pid == std::process::id();
    }
    #[cfg(not(target_os = "linux"))]
    let _ = path;
    h
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
