//! The write queue over the engine's fault-injecting filesystem on top of its power-loss
//! simulation: commands queued behind a held fsync form one batch that ONE fsync covers; when that
//! fsync fails every command of the batch fails and none is acknowledged; after a power cut the
//! store holds every acknowledged command and nothing that was not durable.

use std::sync::mpsc::{Receiver, channel};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rabosh_memory::{Create, Durability, EmbeddedOptions, EmbeddedStore, Memories, MemoryOptions, View};
use rabosh_testkit::{FaultFs, IoKind, SimFs, Vfs};

use super::{Command, WriteQueue};
use crate::fault::{FaultResult, guard};

/// A hang guard only: every wait is for a state a correct queue reaches at once.
const HANG: Duration = Duration::from_secs(20);
const DIR: &str = "/store";

/// A store on a simulated filesystem behind a fault-injecting one, its memories, and a write
/// queue that settles on its own thread.
fn queue_over_faults() -> (SimFs, FaultFs, Arc<EmbeddedStore>, Arc<Memories>, Arc<WriteQueue>) {
    let sim = SimFs::new();
    let fs = FaultFs::new(Arc::new(sim.clone()));
    let (store, m) = open(&sim, Some(&fs));
    let q = WriteQueue::settling_with(&store, |settle| settle());
    (sim, fs, store, Arc::new(m), q)
}

fn open(sim: &SimFs, fs: Option<&FaultFs>) -> (Arc<EmbeddedStore>, Memories) {
    let vfs: Arc<dyn Vfs> = match fs {
        Some(fs) => Arc::new(fs.clone()),
        None => Arc::new(sim.clone()),
    };
    let options = EmbeddedOptions { durability: Durability::Sync, vfs: Some(vfs), ..Default::default() };
    let store = EmbeddedStore::open(DIR, options).unwrap();
    let m = Memories::new(store.clone(), MemoryOptions::default()).unwrap();
    (store, m)
}

/// A create on the queue, as memories.rs builds one, whose settled outcome is sent to `done`.
fn create(m: &Arc<Memories>, i: usize, done: &std::sync::mpsc::Sender<(usize, FaultResult<Create>)>) -> Command {
    let (m, done) = (m.clone(), done.clone());
    Box::new(move |refused| {
        let result = match refused {
            Some(fault) => Err(fault),
            None => guard(move || Ok(m.create(&format!("/memories/n{i}"), &format!("note {i}\n"))?)),
        };
        Box::new(move |durable| done.send((i, super::after_fsync(result, durable))).unwrap())
    })
}

fn queued(q: &WriteQueue) -> usize {
    q.lock().commands.len()
}

/// Queues `n` creates behind a first one whose fsync is held, so all `n` form one batch;
/// `before_release` runs while they wait. Returns the outcomes, by index (the first is `n`).
fn batch_behind_held_fsync(
    sim: &SimFs,
    fs: &FaultFs,
    m: &Arc<Memories>,
    q: &Arc<WriteQueue>,
    n: usize,
    before_release: impl FnOnce(),
) -> Vec<FaultResult<Create>> {
    let (tx, rx) = channel();
    let _release = fs.release_on_drop(HANG);
    fs.hold_syncs();
    q.submit(create(m, n, &tx));
    assert!(fs.wait_held(1, HANG), "the first command never reached its fsync");
    for i in 0..n {
        q.submit(create(m, i, &tx));
    }
    assert_eq!(queued(q), n, "the writer thread took commands while its fsync was held");
    before_release();
    fs.release_syncs();
    let _ = sim;
    collect(&rx, n + 1)
}

fn collect(rx: &Receiver<(usize, FaultResult<Create>)>, n: usize) -> Vec<FaultResult<Create>> {
    let got = Mutex::new((0..n).map(|_| None).collect::<Vec<_>>());
    for _ in 0..n {
        let (i, r) = rx.recv_timeout(HANG).expect("a command never settled");
        got.lock().unwrap()[i] = Some(r);
    }
    got.into_inner().unwrap().into_iter().map(Option::unwrap).collect()
}

fn present(m: &Memories, i: usize) -> bool {
    match m.view(&format!("/memories/n{i}")).unwrap() {
        View::File { content, .. } => {
            assert_eq!(content, format!("note {i}\n"));
            true
        }
        View::NotFound => false,
        other => panic!("n{i}: {other:?}"),
    }
}

#[test]
fn one_fsync_covers_64_queued_commands_and_a_power_cut_keeps_every_acknowledged_one() {
    let (sim, fs, store, m, q) = queue_over_faults();
    let before = store.stats().fsyncs;
    let got = batch_behind_held_fsync(&sim, &fs, &m, &q, 64, || {});
    assert!(got.iter().all(|r| matches!(r, Ok(Create::Created))), "{got:?}");
    // The first command's fsync, then ONE for the 64 queued behind it (the libuv pool's 4
    // threads could share at most 4 commits per fsync: 16 at least).
    assert_eq!(store.stats().fsyncs - before, 2);

    // Power cut right after the acknowledgements: every acknowledged create is on disk.
    for image in [sim.crash_durable(), sim.crash(1), sim.crash(2)] {
        let (_, m) = open(&image, None);
        for i in 0..=64 {
            assert!(present(&m, i), "acknowledged n{i} lost in a power cut");
        }
    }
}

#[test]
fn a_failed_fsync_fails_every_command_waiting_on_it_and_acknowledges_none() {
    const N: usize = 16;
    let (sim, fs, _store, m, q) = queue_over_faults();
    assert_eq!(m.create("/memories/kept", "kept").unwrap(), Create::Created);
    // The held fsync (the first command's) passes; the next one, the batch's, fails.
    let got = batch_behind_held_fsync(&sim, &fs, &m, &q, N, || fs.fail_nth(IoKind::Sync, 2));
    assert_eq!(fs.fired(), 1, "the batch's fsync was not the one that failed");
    assert!(matches!(got[N], Ok(Create::Created)), "the first command: {:?}", got[N]);
    for (i, r) in got[..N].iter().enumerate() {
        let fault = r.as_ref().expect_err(&format!("n{i} acknowledged though its fsync failed"));
        assert_eq!(fault.code, "RABOSH_IO", "n{i}: {}", fault.message);
    }
    // The store is poisoned as after any failed fsync: later commands are refused.
    let (tx, rx) = channel();
    q.submit(create(&m, 0, &tx));
    assert_eq!(rx.recv_timeout(HANG).unwrap().1.unwrap_err().code, "RABOSH_POISONED");

    // Power cut: what was acknowledged is there, none of the failed batch is.
    let (_, reopened) = open(&sim.crash_durable(), None);
    assert!(present(&reopened, N), "the acknowledged first command was lost");
    assert!(matches!(reopened.view("/memories/kept").unwrap(), View::File { .. }));
    for i in 0..N {
        assert!(!present(&reopened, i), "n{i} survived though its fsync failed");
    }
}

#[test]
fn a_panicking_command_is_a_coded_fault_and_the_rest_of_its_batch_commits() {
    let (_sim, fs, _store, m, q) = queue_over_faults();
    let (tx, rx) = channel();
    let _release = fs.release_on_drop(HANG);
    fs.hold_syncs();
    q.submit(create(&m, 0, &tx));
    assert!(fs.wait_held(1, HANG));
    let panics = tx.clone();
    q.submit(Box::new(move |_| {
        let result = guard::<Create>(|| panic!("planted"));
        Box::new(move |durable| panics.send((1, super::after_fsync(result, durable))).unwrap())
    }));
    q.submit(create(&m, 2, &tx));
    fs.release_syncs();
    let got = collect(&rx, 3);
    assert!(matches!(got[0], Ok(Create::Created)) && matches!(got[2], Ok(Create::Created)), "{got:?}");
    assert_eq!(got[1].as_ref().unwrap_err().code, "RABOSH_PANIC");
}

/// Waits (bounded) until the queue's writer thread sleeps on its condvar.
fn until_sleeping(q: &WriteQueue) {
    let deadline = std::time::Instant::now() + HANG;
    while !q.lock().sleeping {
        assert!(std::time::Instant::now() < deadline, "the writer thread never went to sleep");
        std::thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn a_command_sent_while_the_writer_sleeps_wakes_it_and_one_sent_while_it_runs_is_found() {
    let (_sim, _fs, _store, m, q) = queue_over_faults();
    let (tx, rx) = channel();
    // Starts the writer thread.
    q.submit(create(&m, 10, &tx));
    assert!(matches!(rx.recv_timeout(HANG).expect("the first command never settled").1, Ok(Create::Created)));
    for round in 0..5 {
        // Only the submit's wake-up can start this command before the writer's linger runs out.
        until_sleeping(&q);
        q.submit(create(&m, 2 * round, &tx));
        let (i, r) = rx.recv_timeout(HANG).expect("a command sent to a sleeping writer never settled");
        assert_eq!(i, 2 * round);
        assert!(matches!(r, Ok(Create::Created)), "{r:?}");
        // At once after a settle: the writer may still be in its batch (it settles before it
        // looks for the next), or already asleep.
        q.submit(create(&m, 2 * round + 1, &tx));
        let (i, r) = rx.recv_timeout(HANG).expect("a command sent right after a settle never settled");
        assert_eq!(i, 2 * round + 1);
        assert!(matches!(r, Ok(Create::Created)), "{r:?}");
    }
    for i in 0..=10 {
        assert!(present(&m, i), "n{i} missing");
    }
    // Each ran because the submit woke the writer or the writer found it, not because its
    // lingering wait ran out with the command queued.
    assert_eq!(q.lock().woken_late, 0, "a submit did not wake the sleeping writer");
}

#[test]
fn a_command_sent_while_the_writer_spins_after_a_batch_runs_without_the_writer_sleeping() {
    let sim = SimFs::new();
    let (store, m) = open(&sim, None);
    let m = Arc::new(m);
    // A spin far longer than the pause below, so the outcome does not hang on timing.
    let q = WriteQueue::spinning(&store, |settle| settle(), Duration::from_secs(5));
    let (tx, rx) = channel();
    q.submit(create(&m, 0, &tx));
    assert!(matches!(rx.recv_timeout(HANG).expect("the first command never settled").1, Ok(Create::Created)));
    // A caller's next command comes a while after the settle; the writer is still awake.
    std::thread::sleep(Duration::from_millis(50));
    q.submit(create(&m, 1, &tx));
    assert!(matches!(rx.recv_timeout(HANG).expect("the second command never settled").1, Ok(Create::Created)));
    assert!(present(&m, 0) && present(&m, 1));
    assert_eq!(q.lock().sleeps, 0, "the writer slept between two commands 50 ms apart");
}
