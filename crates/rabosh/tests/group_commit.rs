//! Group commit: concurrent Sync-mode commits share fsyncs, a commit is visible to readers only
//! once durable, and a failed shared fsync fails every commit it was to cover.

mod common;

use common::{contents, knob, meta, opts};
use rabosh::{Batch, Store, Vfs};
use rabosh_testkit::{FaultFs, IoKind, SimFs, assert_fsyncs_shared};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

const DIR: &str = "/t/store";

fn put(key: &str, value: &str) -> Batch {
    let mut b = Batch::new();
    b.put(key.as_bytes().to_vec(), value.as_bytes().to_vec(), meta(7));
    b
}

/// Every key → value the published state shows.
fn values(store: &Store) -> BTreeMap<String, String> {
    contents(store)
        .unwrap()
        .into_iter()
        .map(|(k, (v, _))| (String::from_utf8(k).unwrap(), String::from_utf8(v).unwrap()))
        .collect()
}

/// A hang guard only: every wait below is for a state that a correct store reaches at once.
const HANG: Duration = Duration::from_secs(20);

/// Spins (yielding) until `n` commits are appended: a state wait, not a timing assumption.
fn wait_appended(store: &Store, n: u64) {
    let start = Instant::now();
    while store.latest_snapshot().unwrap().seq() < n {
        assert!(start.elapsed() < HANG, "commits could not append while an fsync was running");
        std::thread::yield_now();
    }
}

fn wait_held(fs: &FaultFs, n: u64) {
    assert!(fs.wait_held(n, HANG), "{n} fsync(s) never reached the gate: a writer did not wait for durability");
}

#[test]
fn concurrent_commits_share_fsyncs_and_all_land() {
    let tmp = tempfile::tempdir().unwrap();
    let store = Arc::new(Store::open(tmp.path(), rabosh::Options::default()).unwrap());
    let threads = knob("RABOSH_GC_THREADS", 8);
    let each = knob("RABOSH_GC_COMMITS", 40);
    let before = store.stats();
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let store = store.clone();
            std::thread::spawn(move || {
                for i in 0..each {
                    store.write(put(&format!("t{t}/{i}"), &format!("v{t}.{i}"))).unwrap();
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    assert_fsyncs_shared(&before, &store.stats(), threads * each);
    let want: BTreeMap<String, String> =
        (0..threads).flat_map(|t| (0..each).map(move |i| (format!("t{t}/{i}"), format!("v{t}.{i}")))).collect();
    assert_eq!(values(&store), want);
    drop(store);
    let reopened = Store::open(tmp.path(), rabosh::Options::default()).unwrap();
    assert_eq!(values(&reopened), want);
}

/// While the leader's fsync is held, N more commits append; one more fsync covers them all.
#[test]
fn commits_appended_behind_a_running_fsync_share_the_next_one() {
    let fs = FaultFs::std();
    let tmp = tempfile::tempdir().unwrap();
    let store = Arc::new(Store::open(tmp.path(), opts(Arc::new(fs.clone()), 64 << 20)).unwrap());
    let n = 6;
    let before = store.stats().fsyncs;
    let _release = fs.release_on_drop(HANG);
    fs.hold_syncs();
    let handles: Vec<_> = (0..n)
        .map(|t| {
            let store = store.clone();
            std::thread::spawn(move || store.write(put(&format!("k{t}"), "v")).unwrap())
        })
        .collect();
    wait_held(&fs, 1);
    wait_appended(&store, n);
    fs.release_syncs();
    let mut seqs: Vec<u64> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    seqs.sort_unstable();
    assert_eq!(seqs, (1..=n).collect::<Vec<_>>());
    let fsyncs = store.stats().fsyncs - before;
    assert!(fsyncs <= 2, "{fsyncs} fsyncs for {n} commits appended behind one held fsync");
    assert_eq!(values(&store).len(), n as usize);
}

#[test]
fn a_commit_is_invisible_to_readers_until_its_fsync_is_done() {
    let fs = FaultFs::std();
    let tmp = tempfile::tempdir().unwrap();
    let store = Arc::new(Store::open(tmp.path(), opts(Arc::new(fs.clone()), 64 << 20)).unwrap());
    store.write(put("a", "1")).unwrap();
    let _release = fs.release_on_drop(HANG);
    fs.hold_syncs();
    let writer = {
        let store = store.clone();
        std::thread::spawn(move || store.write(put("b", "2")).unwrap())
    };
    wait_held(&fs, 1);
    let published = store.snapshot().unwrap();
    let latest = store.latest_snapshot().unwrap();
    assert_eq!((published.seq(), latest.seq()), (1, 2));
    assert!(!published.contains(b"b").unwrap(), "a reader sees a commit whose fsync has not finished");
    assert!(latest.contains(b"b").unwrap());
    assert!(!writer.is_finished(), "the writer returned before its commit was durable");
    fs.release_syncs();
    assert_eq!(writer.join().unwrap(), 2);
    assert!(store.snapshot().unwrap().contains(b"b").unwrap());
}

/// Compaction and checkpoint while a commit is appended but not yet durable: they settle it
/// first, and the slower leader must not publish its older version over theirs.
#[test]
fn compaction_and_checkpoint_settle_a_pending_commit() {
    let fs = FaultFs::std();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("s");
    let store = Arc::new(Store::open(&dir, opts(Arc::new(fs.clone()), 4096)).unwrap());
    for i in 0..40 {
        store.write(put(&format!("k{}", i % 7), &format!("{i:0>200}"))).unwrap();
    }
    let _release = fs.release_on_drop(HANG);
    fs.hold_syncs();
    let writer = {
        let store = store.clone();
        std::thread::spawn(move || store.write(put("late", "x")).unwrap())
    };
    wait_held(&fs, 1);
    // compact() settles the pending commit with an fsync of its own: hold both, then let them
    // race the publication.
    let compactor = {
        let store = store.clone();
        std::thread::spawn(move || store.compact().unwrap())
    };
    wait_held(&fs, 2);
    fs.release_syncs();
    compactor.join().unwrap();
    let seq = writer.join().unwrap();
    store.checkpoint(tmp.path().join("cp")).unwrap();
    let want = values(&store);
    assert_eq!(want.get("late").map(String::as_str), Some("x"));
    assert_eq!(store.snapshot().unwrap().seq(), seq);
    store.verify().unwrap();
    drop(store);
    for d in [dir, tmp.path().join("cp")] {
        let s = Store::open(&d, rabosh::Options::default()).unwrap();
        assert_eq!(values(&s), want, "{}", d.display());
    }
}

#[test]
fn a_failed_shared_fsync_fails_every_waiter_and_keeps_exactly_the_acked_prefix() {
    let sim = SimFs::new();
    let fs = FaultFs::new(Arc::new(sim.clone()));
    let store = Arc::new(Store::open(DIR, opts(Arc::new(fs.clone()) as Arc<dyn Vfs>, 64 << 20)).unwrap());
    let acked = 3;
    for i in 1..=acked {
        store.write(put(&format!("k{i}"), "durable")).unwrap();
    }
    let n = 5;
    let _release = fs.release_on_drop(HANG);
    fs.hold_syncs();
    let handles: Vec<_> = (0..n)
        .map(|t| {
            let store = store.clone();
            std::thread::spawn(move || store.write(put(&format!("lost{t}"), "x")))
        })
        .collect();
    wait_held(&fs, 1);
    wait_appended(&store, acked + n);
    fs.fail_nth(IoKind::Sync, 1);
    fs.release_syncs();
    for h in handles {
        assert!(h.join().unwrap().is_err(), "a commit was acked although its fsync failed");
    }
    assert!(store.stats().poisoned);
    assert_eq!(store.stats().seq, acked);
    assert!(matches!(store.snapshot(), Err(rabosh::Error::Poisoned { .. })));
    assert!(store.write(put("after", "x")).is_err());
    let image = sim.crash_durable();
    drop(store);
    let reopened = Store::open(Path::new(DIR), opts(Arc::new(image) as Arc<dyn Vfs>, 64 << 20)).unwrap();
    assert_eq!(reopened.snapshot().unwrap().seq(), acked);
    let want: BTreeMap<String, String> = (1..=acked).map(|i| (format!("k{i}"), "durable".into())).collect();
    assert_eq!(values(&reopened), want);
}

/// Power loss while a group is in flight: the frames appended behind a pending fsync reach the
/// disk in any order, so a later one may survive an earlier torn one. That must read as a torn
/// tail (nothing acknowledged is behind it), never as damage that refuses to open.
#[test]
fn a_power_loss_mid_group_opens_with_every_acked_commit() {
    let sim = SimFs::new();
    let fs = FaultFs::new(Arc::new(sim.clone()));
    let store = Arc::new(Store::open(DIR, opts(Arc::new(fs.clone()) as Arc<dyn Vfs>, 64 << 20)).unwrap());
    let acked = 2;
    for i in 1..=acked {
        store.write(put(&format!("k{i}"), "durable")).unwrap();
    }
    let _release = fs.release_on_drop(HANG);
    fs.hold_syncs();
    let n = 6;
    let handles: Vec<_> = (0..n)
        .map(|t| {
            let store = store.clone();
            std::thread::spawn(move || {
                let _ = store.write(put(&format!("g{t}"), &"x".repeat(3000)));
            })
        })
        .collect();
    wait_held(&fs, 1);
    wait_appended(&store, acked + n);
    for seed in 0..knob("RABOSH_GC_CRASH_IMAGES", 300) {
        let image = sim.crash(seed);
        let reopened = Store::open(Path::new(DIR), opts(Arc::new(image) as Arc<dyn Vfs>, 64 << 20))
            .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        let s = reopened.snapshot().unwrap();
        assert!(s.seq() >= acked, "seed {seed}: acked commits lost");
        for i in 1..=acked {
            assert!(s.contains(format!("k{i}").as_bytes()).unwrap(), "seed {seed}");
        }
    }
    fs.release_syncs();
    for h in handles {
        h.join().unwrap();
    }
}
