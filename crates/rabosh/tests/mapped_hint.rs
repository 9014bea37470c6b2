//! Issue 24: a plain store's open maps its hint files instead of reading them (unix). The map
//! is kept until the key directory is built, and the hint is checked exactly as read bytes
//! were: a damaged one is still found at open and its segment scanned. Another process's close
//! rewrites a hint by a rename over it, and compaction unlinks hints: a map of the old file
//! must keep answering as it did.
#![cfg(unix)]

use rabosh::{Batch, Options, Store};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

fn opts() -> Options {
    Options { segment_bytes: 600, ..Options::default() }
}

fn key(i: u32) -> Vec<u8> {
    format!("m:default:/memories/k{i:04}").into_bytes()
}

/// A store of several sealed segments and a clean close: every segment has a hint.
fn seed(dir: &Path) -> Model {
    let store = Store::open(dir, opts()).unwrap();
    let mut model = Model::new();
    for round in 0..2u32 {
        for i in 0..40u32 {
            let mut b = Batch::new();
            if (i + round) % 7 == 0 {
                b.delete(key(i));
                model.remove(&key(i));
            } else {
                let v = format!("value {i} round {round}").into_bytes();
                b.put(key(i), v.clone(), vec![i as u8]);
                model.insert(key(i), v);
            }
            store.write(b).unwrap();
        }
    }
    store.close().unwrap();
    model
}

fn hints(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "hint"))
        .collect();
    v.sort();
    v
}

fn check(store: &Store, model: &Model) {
    let snap = store.snapshot().unwrap();
    for i in 0..45u32 {
        assert_eq!(snap.get(&key(i)).unwrap().as_deref(), model.get(&key(i)).map(|v| &v[..]), "key {i}");
    }
}

#[test]
fn open_maps_every_plain_hint_and_answers_from_the_maps() {
    let dir = tempfile::tempdir().unwrap();
    let model = seed(dir.path());
    let n = hints(dir.path()).len() as u64;
    assert!(n > 3, "the seed spans several segments");
    let before = rabosh_testkit::hints_mapped();
    let store = Store::open(dir.path(), opts()).unwrap();
    assert_eq!(rabosh_testkit::hints_mapped() - before, n, "every hint mapped, none read");
    check(&store, &model);
    assert!(!store.snapshot().unwrap().is_built(), "answered from the mapped hints");
    assert_eq!(store.snapshot().unwrap().scan_prefix(b"m:").count(), model.len());
    check(&store, &model);
    store.close().unwrap();
}

/// Renamed over (as another process's close rewrites the active hint) and unlinked (as
/// compaction retires a segment's hint) while mapped: the map holds the old file's bytes.
#[test]
fn a_mapped_hint_renamed_over_or_removed_still_answers() {
    let dir = tempfile::tempdir().unwrap();
    let model = seed(dir.path());
    let store = Store::open(dir.path(), opts()).unwrap();
    let hs = hints(dir.path());
    let junk = dir.path().join("junk.tmp");
    std::fs::write(&junk, vec![0xA5u8; 4096]).unwrap();
    std::fs::rename(&junk, &hs[0]).unwrap();
    std::fs::remove_file(&hs[1]).unwrap();
    check(&store, &model);
    assert!(!store.snapshot().unwrap().is_built());
    // The build reads every record of every map.
    assert_eq!(store.snapshot().unwrap().scan_prefix(b"m:").count(), model.len());
    check(&store, &model);
    store.close().unwrap();
}

/// One hint damaged on disk (a byte of a record flipped, its checksum left as it was): open
/// still finds it before trusting it, scans that segment, and answers as before.
#[test]
fn a_damaged_mapped_hint_is_found_at_open() {
    let dir = tempfile::tempdir().unwrap();
    let model = seed(dir.path());
    let victim = hints(dir.path())[1].clone();
    let mut buf = std::fs::read(&victim).unwrap();
    // Inside the records (the header is 44 bytes), not the trailing checksum.
    let at = 44 + (buf.len() - 48) / 2;
    buf[at] ^= 0x01;
    std::fs::write(&victim, &buf).unwrap();
    let store = Store::open(dir.path(), opts()).unwrap();
    assert!(store.snapshot().unwrap().is_built(), "a damaged hint falls back to the eager build");
    check(&store, &model);
    store.close().unwrap();
    assert_ne!(std::fs::read(&victim).unwrap(), buf, "the hint is rewritten from the scan");
}
