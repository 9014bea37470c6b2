//! Shared mode's batch: the commit lock held across several commits, one fsync for all of them
//! before it is let go — group commit within one process without another process ever finding
//! a commit that is not durable.

use rabosh::{Batch, Durability, Options, Store};

fn shared() -> Options {
    Options { shared: true, durability: Durability::Sync, ..Options::default() }
}

fn batch(i: u32) -> Batch {
    let mut b = Batch::new();
    b.put(format!("k{i}").into_bytes(), i.to_string().into_bytes(), Vec::new());
    b
}

#[test]
fn a_batch_of_commits_shares_one_fsync_and_is_durable_before_the_lock_goes() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    let a = Store::open(&dir, shared()).unwrap();
    let b = Store::open(&dir, shared()).unwrap();
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
