//! A sealed hint's page is checked only when opened. When one is found damaged after open and
//! its segment does not scan either (a frame of it damaged too), nothing can build the key
//! directory: everything that needs it (a listing, the count, compaction, verify, a commit)
//! answers Corruption naming the segment, never a panic (a panic in a binding's worker leaves
//! its promise unsettled). Point reads of keys in the undamaged pages still answer.

use rabosh::{Batch, Encryption, Error, Options, StdFs, Store};
use rabosh_testkit::sealed_blobs;
use std::path::Path;

const KEY: [u8; 32] = [5; 32];
const KEYS: u32 = 400;

fn opts() -> Options {
    Options { encryption: Some(Encryption::new(KEY)), segment_bytes: 32 << 10, ..Options::default() }
}

fn key(i: u32) -> Vec<u8> {
    format!("k{i:03}").into_bytes()
}

fn value(i: u32) -> Vec<u8> {
    vec![i as u8; 24]
}

/// One commit per key, in key order: several sealed segments of many frames each, the first
/// segment's first frame holding key 0 (its hint's first page).
fn populate(dir: &Path) {
    let s = Store::open(dir, opts()).unwrap();
    for i in 0..KEYS {
        let mut b = Batch::new();
        b.put(key(i), value(i), vec![1; 8]);
        s.write(b).unwrap();
    }
    s.close().unwrap();
}

/// Flips a byte in the middle of the last sealed blob of `file` (a hint's last page, a segment's
/// last frame).
fn flip_last_blob(dir: &Path, file: &str) {
    let blobs: Vec<_> = sealed_blobs(&StdFs, dir, &Encryption::new(KEY))
        .unwrap()
        .into_iter()
        .filter(|b| b.file == file)
        .map(|b| (b.offset as usize, b.bytes.len()))
        .collect();
    assert!(blobs.len() >= 3, "{file}: at least three sealed blobs, found {}", blobs.len());
    let (off, len) = *blobs.last().unwrap();
    let path = dir.join(file);
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[off + len / 2] ^= 0x10;
    std::fs::write(&path, &bytes).unwrap();
}

fn assert_names_segment<T: std::fmt::Debug>(r: rabosh::Result<T>, what: &str) {
    match r {
        Err(Error::Corruption { file, .. }) => {
            assert!(file.ends_with("0000000001.seg"), "{what}: Corruption names {}", file.display());
        }
        other => panic!("{what}: expected Corruption naming the segment, got {other:?}"),
    }
}

fn damaged_store() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    populate(tmp.path());
    assert!(tmp.path().join("0000000002.seg").exists(), "segment 1 is sealed");
    flip_last_blob(tmp.path(), "0000000001.hint");
    flip_last_blob(tmp.path(), "0000000001.seg");
    tmp
}

#[test]
fn a_damaged_page_over_a_damaged_segment_answers_corruption_never_panics() {
    let tmp = damaged_store();
    let s = Store::open(tmp.path(), opts()).expect("open reads only the hints' directories");
    let snap = s.snapshot().unwrap();
    // Key 0 lies in the first page and the first frame, both whole.
    assert_eq!(snap.get(&key(0)).unwrap(), Some(value(0)));
    assert_eq!(snap.meta(&key(0)).unwrap(), Some(vec![1; 8]));
    // A key of another segment: its own hint's page.
    assert_eq!(snap.get(&key(KEYS - 1)).unwrap(), Some(value(KEYS - 1)));

    assert_names_segment(snap.try_range(b"", None).map(std::iter::Iterator::count), "a listing");
    assert_names_segment(snap.try_scan_prefix(b"k0").map(std::iter::Iterator::count), "a prefix listing");
    assert_names_segment(snap.try_len(), "the count");
    let seq = s.stats().seq; // counters have no error to return: they answer, without panicking
    assert_names_segment(s.compact(), "compaction");
    assert_names_segment(s.verify(), "verify");
    let mut b = Batch::new();
    b.put(key(KEYS), value(KEYS), vec![1; 8]);
    assert_names_segment(s.write(b), "a commit over it");
    let stats = s.stats();
    assert_eq!(stats.seq, seq, "the refused commit wrote nothing");
    assert!(!stats.poisoned, "nothing was written, so nothing poisons");

    // Each failure left the store as it was: point reads still answer, from the pages.
    let snap = s.snapshot().unwrap();
    assert_eq!(snap.get(&key(0)).unwrap(), Some(value(0)));
    assert_names_segment(snap.try_len(), "the count, asked again");
    drop(snap);
    s.close().unwrap();
}

/// Re-encryption reads every live value: refused, and the store still opens with its old key.
#[test]
fn reencrypting_over_the_damage_is_refused_and_changes_nothing() {
    let tmp = damaged_store();
    let files = |d: &Path| {
        let mut v: Vec<_> = std::fs::read_dir(d).unwrap().map(|e| e.unwrap().file_name()).collect();
        v.sort();
        v
    };
    let before = files(tmp.path());
    assert_names_segment(rabosh::reencrypt(tmp.path(), Some(Encryption::new(KEY)), None), "decrypting");
    assert_names_segment(
        rabosh::reencrypt(tmp.path(), Some(Encryption::new(KEY)), Some(Encryption::new([6; 32]))),
        "a new data key",
    );
    assert_eq!(files(tmp.path()), before, "no file made or left");
    let s = Store::open(tmp.path(), opts()).unwrap();
    assert_eq!(s.snapshot().unwrap().get(&key(0)).unwrap(), Some(value(0)));
    s.close().unwrap();
}
