//! A process killed between creating its next segment and swapping the MANIFEST leaves a file
//! no MANIFEST names. Another process sharing the store allocates the same number next (it only
//! knows the MANIFEST), so rotation and compaction must replace such a leftover, not fail on it.

use rabosh::{Batch, Durability, Options, Store};

fn put(store: &Store, value: &[u8]) {
    let mut b = Batch::new();
    b.put(&b"k"[..], value, &b""[..]);
    store.write(b).unwrap();
}

fn shared() -> Options {
    Options { shared: true, durability: Durability::Sync, ..Options::default() }
}

fn next_segment_path(dir: &std::path::Path) -> std::path::PathBuf {
    let highest = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.unwrap().file_name().into_string().ok())
        .filter_map(|n| n.strip_suffix(".seg").and_then(|d| d.parse::<u64>().ok()))
        .max()
        .unwrap();
    dir.join(format!("{:010}.seg", highest + 1))
}

#[test]
fn compaction_replaces_a_dead_writers_unlisted_segment() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    let store = Store::open(&dir, shared()).unwrap();
    put(&store, b"v1");
    // What a writer killed right after creating its next segment leaves behind.
    std::fs::write(next_segment_path(&dir), b"half a header").unwrap();
    store.compact().unwrap();
    put(&store, b"v2");
    assert_eq!(store.snapshot().unwrap().get(b"k").unwrap().as_deref(), Some(&b"v2"[..]));
    store.verify().unwrap();
    drop(store);
    let reopened = Store::open(&dir, shared()).unwrap();
    assert_eq!(reopened.snapshot().unwrap().get(b"k").unwrap().as_deref(), Some(&b"v2"[..]));
    reopened.verify().unwrap();
}
