//! The write queue over a shared store whose commit lock another handle holds (its own open file:
//! the OS lock excludes it as it would another process). A batch that cannot get the lock runs no
//! command; each command is answered `RABOSH_STORE_BUSY` once ITS timeout has passed since it was
//! queued (one queued later waits on), none commits; a holder that lets go in time lets it commit.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rabosh_memory::{Create, EmbeddedOptions, EmbeddedStore, Memories, MemoryOptions, View};

use super::{Command, WriteQueue};
use crate::fault::{FaultResult, guard};

const TIMEOUT: Duration = Duration::from_millis(800);
/// How late past its timeout a command may be answered: generous, for a loaded machine.
const LATE: Duration = Duration::from_millis(1500);
const HANG: Duration = Duration::from_secs(30);

struct TempDir(PathBuf);
impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn temp_dir(name: &str) -> TempDir {
    let dir = std::env::temp_dir().join(format!("rabosh-queue-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    TempDir(dir)
}

fn shared(dir: &Path) -> Arc<EmbeddedStore> {
    let options = EmbeddedOptions { shared: true, lock_timeout: TIMEOUT, ..Default::default() };
    EmbeddedStore::open(dir, options).unwrap()
}

/// Another handle holding the commit lock on a thread of its own until `release` is sent.
fn hold(dir: &Path) -> (Sender<()>, JoinHandle<()>) {
    let (held_tx, held_rx) = channel();
    let (release_tx, release_rx) = channel::<()>();
    let other = shared(dir);
    let holder = std::thread::spawn(move || {
        let held = other.appending(Instant::now(), || {
            held_tx.send(()).unwrap();
            let _ = release_rx.recv_timeout(HANG);
        });
        assert!(held.is_ok(), "the holder could not take the lock");
    });
    held_rx.recv_timeout(HANG).expect("the holder never took the lock");
    (release_tx, holder)
}

type Outcomes = Receiver<(usize, FaultResult<Create>, Instant)>;

/// A create on the queue, as memories.rs builds one; its outcome and when it settled go to `done`.
fn create(m: &Arc<Memories>, i: usize, done: &Sender<(usize, FaultResult<Create>, Instant)>) -> Command {
    let (m, done) = (m.clone(), done.clone());
    Box::new(move |refused| {
        let result = match refused {
            Some(fault) => Err(fault),
            None => guard(move || Ok(m.create(&format!("/memories/n{i}"), "x")?)),
        };
        Box::new(move |durable| done.send((i, super::after_fsync(result, durable), Instant::now())).unwrap())
    })
}

fn present(m: &Memories, i: usize) -> bool {
    !matches!(m.view(&format!("/memories/n{i}")).unwrap(), View::NotFound)
}

#[test]
fn a_batch_that_cannot_get_the_lock_runs_nothing_and_each_command_answers_by_its_own_timeout() {
    let dir = temp_dir("busy");
    let store = shared(&dir.0);
    let m = Arc::new(Memories::new(store.clone(), MemoryOptions::default()).unwrap());
    let q = WriteQueue::settling_with(&store, |settle| settle());
    let (release, holder) = hold(&dir.0);
    let (tx, rx): (_, Outcomes) = channel();
    // The first waits alone; the next two queue behind it, half a timeout apart, and so share a
    // batch whose wait ends with the older one's timeout: the younger must wait on.
    let mut queued = Vec::new();
    for (i, pause) in [(0, TIMEOUT / 4), (1, TIMEOUT / 2), (2, Duration::ZERO)] {
        queued.push(Instant::now());
        q.submit(create(&m, i, &tx));
        std::thread::sleep(pause);
    }
    for _ in 0..3 {
        let (i, r, at) = rx.recv_timeout(HANG).expect("a command never settled");
        let fault = r.expect_err(&format!("n{i} went through a held lock"));
        assert_eq!(fault.code, "RABOSH_STORE_BUSY", "n{i}: {}", fault.message);
        let waited = at - queued[i];
        assert!(
            waited >= TIMEOUT.checked_sub(Duration::from_millis(50)).unwrap(),
            "n{i} was refused early, after {waited:?}"
        );
        assert!(waited < TIMEOUT + LATE, "n{i} answered after {waited:?} (timeout {TIMEOUT:?})");
    }
    release.send(()).unwrap();
    holder.join().unwrap();
    for i in 0..3 {
        assert!(!present(&m, i), "n{i} was refused, yet committed");
    }
    // The lock free, the queue commits again.
    q.submit(create(&m, 3, &tx));
    assert!(matches!(rx.recv_timeout(HANG).unwrap().1, Ok(Create::Created)));
    assert!(present(&m, 3));
}

#[test]
fn a_command_whose_holder_lets_go_in_time_commits_soon_after() {
    let dir = temp_dir("in-time");
    let store = shared(&dir.0);
    let m = Arc::new(Memories::new(store.clone(), MemoryOptions::default()).unwrap());
    let q = WriteQueue::settling_with(&store, |settle| settle());
    let (release, holder) = hold(&dir.0);
    let (tx, rx): (_, Outcomes) = channel();
    let sent = Instant::now();
    q.submit(create(&m, 0, &tx));
    std::thread::sleep(TIMEOUT / 4);
    release.send(()).unwrap();
    holder.join().unwrap();
    let (_, r, at) = rx.recv_timeout(HANG).expect("the command never settled");
    assert!(matches!(r, Ok(Create::Created)), "{r:?}");
    assert!(at - sent < TIMEOUT, "it waited past the release: {:?}", at - sent);
    assert!(present(&m, 0));
}
