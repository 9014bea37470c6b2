//! Shared mode within one process, two handles standing in for two processes:
//! - reads that must not wait: `snapshot_if_current` answers `None` exactly when a read would
//!   first have to catch up on another handle's commits (taking the commit lock, which that
//!   handle may hold through its fsync), and never for this handle's own commits;
//! - the batch: the commit lock held across several commits, one fsync for all of them before it
//!   is let go — group commit without another process ever finding a commit that is not durable.

use rabosh::{Batch, Durability, Options, Store};

fn shared() -> Options {
    Options { shared: true, durability: Durability::Sync, ..Options::default() }
}

fn put(store: &Store, key: &[u8], value: &[u8]) {
    let mut b = Batch::new();
    b.put(key, value, &b""[..]);
    store.write(b).unwrap();
}

/// Two shared handles on one fresh store (the directory lives as long as the first value).
fn two_handles() -> (tempfile::TempDir, Store, Store) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    let a = Store::open(&dir, shared()).unwrap();
    let b = Store::open(&dir, shared()).unwrap();
    (tmp, a, b)
}

#[test]
fn another_handles_commit_makes_a_read_decline_until_caught_up() {
    let (_tmp, a, b) = two_handles();
    put(&a, b"k", b"1");
    assert!(a.snapshot_if_current().unwrap().is_some(), "a's own commit is no change to catch up on");
    let _ = b.snapshot().unwrap();
    assert!(b.snapshot_if_current().unwrap().is_some());
    put(&a, b"k", b"2");
    assert!(b.snapshot_if_current().unwrap().is_none(), "b has a's commit to catch up on");
    assert_eq!(b.snapshot().unwrap().get(b"k").unwrap().as_deref(), Some(&b"2"[..]));
    let now = b.snapshot_if_current().unwrap().expect("caught up");
    assert_eq!(now.get(b"k").unwrap().as_deref(), Some(&b"2"[..]));
}

#[test]
fn own_commit_under_a_held_lock_does_not_make_other_threads_wait() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    let a = Store::open(&dir, shared()).unwrap();
    put(&a, b"k", b"1");
    std::thread::scope(|s| {
        let (appended_tx, appended_rx) = std::sync::mpsc::channel();
        let (go_on_tx, go_on_rx) = std::sync::mpsc::channel::<()>();
        let a = &a;
        s.spawn(move || {
            let guard = a.commit_guard().unwrap();
            let mut b = Batch::new();
            b.put(&b"k"[..], &b"2"[..], &b""[..]);
            a.append(b).unwrap();
            appended_tx.send(()).unwrap();
            go_on_rx.recv().unwrap();
            drop(guard);
        });
        appended_rx.recv().unwrap();
        // The lock is still held by the other thread: a read that thought it must catch up
        // would wait for it (or, here, decline).
        let snap = a.snapshot_if_current().unwrap();
        go_on_tx.send(()).unwrap();
        assert!(snap.is_some(), "a read declined (would have waited) on this handle's own commit");
    });
}

fn batch(i: u32) -> Batch {
    let mut b = Batch::new();
    b.put(format!("k{i}").into_bytes(), i.to_string().into_bytes(), Vec::new());
    b
}

#[test]
fn a_batch_of_commits_shares_one_fsync_and_is_durable_before_the_lock_goes() {
    let (_tmp, a, b) = two_handles();
    let before = a.stats().fsyncs;
    let mut last = 0;
    {
        let _guard = a.batch_guard().unwrap();
        for i in 0..10 {
            last = a.append(batch(i)).unwrap();
        }
        assert_eq!(a.stats().fsyncs, before, "no commit of the batch synced on its own");
        a.wait_durable(last).unwrap();
    }
    assert_eq!(a.stats().fsyncs, before + 1, "one fsync for the batch");
    let snap = b.snapshot().unwrap();
    assert_eq!(snap.seq(), last);
    for i in 0..10 {
        assert_eq!(snap.get(format!("k{i}").as_bytes()).unwrap(), Some(i.to_string().into_bytes()));
    }
}

#[test]
fn a_batch_guard_dropped_without_waiting_still_syncs_before_letting_go() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    let a = Store::open(&dir, shared()).unwrap();
    let before = a.stats().fsyncs;
    let last = {
        let _guard = a.batch_guard().unwrap();
        a.append(batch(1)).unwrap();
        a.append(batch(2)).unwrap()
    };
    assert_eq!(a.stats().fsyncs, before + 1);
    assert!(a.snapshot().unwrap().seq() >= last, "published once durable");
}

/// Descriptors of this process open on `path` after it was deleted (Linux).
#[cfg(target_os = "linux")]
fn open_deleted(path: &std::path::Path) -> usize {
    let want = format!("{} (deleted)", path.display());
    std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
        .filter(|t| t.to_string_lossy() == want)
        .count()
}

/// Issue 33: a snapshot held by one handle while another compacts keeps the retired segment open;
/// once released, `release_retired` catches up at once and the descriptor closes, not at a later
/// read (which may never come).
#[cfg(target_os = "linux")]
#[test]
fn release_retired_closes_what_another_handle_retired_while_a_snapshot_held_it() {
    let (tmp, a, b) = two_handles();
    put(&a, b"k", b"old");
    let seg = tmp.path().join("store").join("0000000001.seg");
    let snap = a.snapshot().unwrap();
    put(&b, b"k", b"new");
    b.compact().unwrap();
    assert!(open_deleted(&seg) > 0, "a's snapshot still reads segment 1");
    assert_eq!(snap.get(b"k").unwrap().as_deref(), Some(&b"old"[..]));
    drop(snap);
    a.release_retired().unwrap();
    assert_eq!(open_deleted(&seg), 0, "segment 1 stayed open after the last snapshot holding it was released");
    assert_eq!(a.snapshot().unwrap().get(b"k").unwrap().as_deref(), Some(&b"new"[..]));
}
