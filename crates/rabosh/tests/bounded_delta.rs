//! Issue 36 §1: the key directory's delta (what was committed over the hints) must not grow with
//! every key a process ever wrote. Each seal turns the sealed segment's hint into a run and lets
//! the delta go of that segment's keys, so the delta holds only the active segment's: an import
//! into a fresh store, or a long-running writer, keeps a bounded directory in memory.

use rabosh::{Batch, Encryption, Options, Store};

/// Ten keys of 100-byte values a commit: a commit is over 1,000 bytes, so a 4 KiB segment
/// holds at most four of them (40 keys).
const PER_COMMIT: u32 = 10;
const ACTIVE_KEYS_MAX: usize = 40;

fn opts(encrypted: bool) -> Options {
    Options { segment_bytes: 4096, encryption: encrypted.then(|| Encryption::new([7; 32])), ..Options::default() }
}

fn key(i: u32) -> Vec<u8> {
    format!("d{:03}/f{i:05}", i % 37).into_bytes()
}

fn put_range(store: &Store, from: u32, to: u32, round: u8) {
    for start in (from..to).step_by(PER_COMMIT as usize) {
        let mut b = Batch::new();
        for i in start..(start + PER_COMMIT).min(to) {
            b.put(key(i), vec![round; 100], vec![round]);
        }
        store.write(b).unwrap();
    }
}

fn delta_len(store: &Store) -> usize {
    store.snapshot().unwrap().delta_len().expect("an unbuilt key directory")
}

fn check_bounded(store: &Store, what: &str) {
    let d = delta_len(store);
    assert!(d <= ACTIVE_KEYS_MAX, "{what}: the delta holds {d} keys, more than the active segment's");
}

#[test]
fn a_fresh_store_keeps_only_the_active_segments_keys() {
    for encrypted in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), opts(encrypted)).unwrap();
        assert!(!store.snapshot().unwrap().is_built(), "a fresh store starts unbuilt");
        put_range(&store, 0, 2000, 1);
        check_bounded(&store, "after 2,000 puts");
        let snap = store.snapshot().unwrap();
        assert_eq!(snap.len(), 2000);
        assert_eq!(store.stats().keys, 2000);
        // Deletes of keys in sealed segments, then overwrites: bounded too, and read back.
        let mut b = Batch::new();
        for i in (0..2000).step_by(2) {
            b.delete(key(i));
            if b.len() == PER_COMMIT as usize {
                store.write(std::mem::take(&mut b)).unwrap();
            }
        }
        put_range(&store, 0, 300, 2);
        check_bounded(&store, "after deletes and overwrites");
        let now = store.snapshot().unwrap();
        assert_eq!(now.len(), 1000 + 150);
        assert_eq!(store.stats().keys, 1150);
        for i in 0..2000 {
            let want = if i < 300 {
                Some(vec![2])
            } else if i % 2 == 0 {
                None
            } else {
                Some(vec![1])
            };
            assert_eq!(now.meta(&key(i)).unwrap(), want, "key {i}");
        }
        // The snapshot taken before those seals still sees its own version.
        assert_eq!(snap.len(), 2000);
        assert_eq!(snap.meta(&key(0)).unwrap(), Some(vec![1]));
        let listed: Vec<Vec<u8>> = now.try_range(b"", None).unwrap().map(|(k, _)| k.to_vec()).collect();
        let mut want: Vec<Vec<u8>> = (0..2000).filter(|&i| i < 300 || i % 2 == 1).map(key).collect();
        want.sort();
        assert_eq!(listed, want);
        store.verify().unwrap();
        store.close().unwrap();
    }
}

#[test]
fn a_reopened_store_keeps_only_the_active_segments_keys() {
    let dir = tempfile::tempdir().unwrap();
    {
        let store = Store::open(dir.path(), opts(false)).unwrap();
        put_range(&store, 0, 500, 1);
        store.close().unwrap();
    }
    let store = Store::open(dir.path(), opts(false)).unwrap();
    put_range(&store, 250, 1500, 3);
    check_bounded(&store, "after 1,250 writes over a reopened store");
    assert_eq!(store.snapshot().unwrap().len(), 1500);
    assert_eq!(store.stats().keys, 1500);
    assert_eq!(store.snapshot().unwrap().meta(&key(100)).unwrap(), Some(vec![1]));
    assert_eq!(store.snapshot().unwrap().meta(&key(300)).unwrap(), Some(vec![3]));
    store.close().unwrap();
    drop(store);
    let store = Store::open(dir.path(), opts(false)).unwrap();
    assert_eq!(store.stats().keys, 1500);
    store.verify().unwrap();
}
