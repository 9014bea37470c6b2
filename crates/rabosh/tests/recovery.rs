//! Byte-damage sweeps and recovery classification: what `open()` must drop, and what it must report.

mod common;

use common::log_end;
use rabosh::{Batch, Error, Options, Store};
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

fn commit(store: &Store, i: u32) {
    let mut b = Batch::new();
    b.put(
        format!("k{}", i % 4).into_bytes(),
        format!("value-{i}-{}", "x".repeat(i as usize % 7)).into_bytes(),
        [i as u8; 40],
    );
    if i % 3 == 2 {
        b.delete(format!("k{}", (i + 1) % 4).into_bytes());
    }
    store.write(b).unwrap();
}

/// The model after commits 1..=n.
fn model(n: u32) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let mut m = BTreeMap::new();
    for i in 1..=n {
        m.insert(format!("k{}", i % 4).into_bytes(), format!("value-{i}-{}", "x".repeat(i as usize % 7)).into_bytes());
        if i % 3 == 2 {
            m.remove(format!("k{}", (i + 1) % 4).as_bytes());
        }
    }
    m
}

fn contents(store: &Store) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let s = store.snapshot().unwrap();
    s.range(b"", None).map(|(k, _)| (k.to_vec(), s.get(k).unwrap().unwrap())).collect()
}

fn files(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == ext))
        .collect();
    v.sort();
    v
}

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for e in fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        fs::copy(&p, to.join(p.file_name().unwrap())).unwrap();
    }
}

fn opts() -> Options {
    Options::default()
}

/// A store with `n` commits in one active segment; returns the end offset after each commit.
fn build(dir: &Path, n: u32) -> Vec<u64> {
    let store = Store::open(dir, opts()).unwrap();
    let seg = files(dir, "seg").pop().unwrap();
    let mut ends = vec![log_end(&fs::read(&seg).unwrap())];
    for i in 1..=n {
        commit(&store, i);
        ends.push(log_end(&fs::read(&seg).unwrap()));
    }
    drop(store);
    // These tests judge the scan of the active segment (FORMAT.md, rule 6); the hint a clean
    // close leaves would let open skip it (that path: tests/open_hint.rs, tests/corruption.rs).
    let _ = fs::remove_file(seg.with_extension("hint"));
    ends
}

fn expect_corruption(r: rabosh::Result<Store>, file_ends_with: &str) -> (PathBuf, u64, String) {
    match r {
        Err(Error::Corruption { file, offset, reason }) => {
            assert!(
                file.to_string_lossy().ends_with(file_ends_with),
                "{} should end with {file_ends_with}",
                file.display()
            );
            (file, offset, reason)
        }
        Err(e) => panic!("expected corruption in {file_ends_with}, got {e}"),
        Ok(_) => panic!("expected corruption in {file_ends_with}, store opened"),
    }
}

#[test]
fn truncation_at_every_offset_recovers_the_longest_intact_prefix() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    let ends = build(&src, 6);
    let seg_name = files(&src, "seg")[0].file_name().unwrap().to_owned();
    let mut last_recovered = 0;
    for cut in ends[0]..=ends[6] {
        let d = tmp.path().join(format!("cut{cut}"));
        copy_dir(&src, &d);
        let f = fs::OpenOptions::new().write(true).open(d.join(&seg_name)).unwrap();
        f.set_len(cut).unwrap();
        drop(f);
        // As after a power loss that also lost the (unsynced) record of what was synced: only
        // then may a cut be a torn tail. With the record, see the test below.
        forget_synced(&d);
        let store = Store::open(&d, opts()).unwrap();
        let n = ends.iter().rposition(|&e| e <= cut).unwrap() as u32;
        assert_eq!(store.stats().seq, u64::from(n), "cut at {cut}");
        assert!(store.stats().seq >= last_recovered, "recovery must be monotone in surviving bytes");
        last_recovered = store.stats().seq;
        assert_eq!(contents(&store), model(n), "cut at {cut}");
        let len = fs::metadata(d.join(&seg_name)).unwrap().len();
        assert_eq!(len, ends[n as usize], "the torn tail is cut off at open, before any append");
        // The torn tail was cut before appending: the next commit lands on readable bytes.
        // (Checked on a spread of cuts; each costs several fsyncs.)
        if cut % 5 != 0 && cut != ends[6] - 1 {
            drop(store);
            fs::remove_dir_all(&d).unwrap();
            continue;
        }
        commit(&store, n + 1);
        drop(store);
        let store = Store::open(&d, opts()).unwrap();
        assert_eq!(store.stats().seq, u64::from(n) + 1);
        assert_eq!(contents(&store), model(n + 1));
        drop(store);
        fs::remove_dir_all(&d).unwrap();
    }
}

/// The synced record a power loss may leave stale: without it nothing is known synced.
fn forget_synced(dir: &Path) {
    fs::remove_file(dir.join("SYNCED")).unwrap();
}

/// Issue 9, case 2: a cleanly closed store whose last frame lost 1..len bytes has lost an
/// acknowledged commit. That is corruption, not a torn tail.
#[test]
fn a_truncated_last_frame_of_a_cleanly_closed_store_is_corruption() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    let ends = build(&src, 4);
    let seg_name = files(&src, "seg")[0].file_name().unwrap().to_str().unwrap().to_string();
    for cut in ends[3]..ends[4] {
        let d = tmp.path().join(format!("cut{cut}"));
        copy_dir(&src, &d);
        let f = fs::OpenOptions::new().write(true).open(d.join(&seg_name)).unwrap();
        f.set_len(cut).unwrap();
        drop(f);
        let (_, offset, reason) = expect_corruption(Store::open(&d, opts()), &seg_name);
        assert!(offset >= ends[3], "cut at {cut}: {offset} {reason}");
        assert!(reason.contains("synced"), "cut at {cut}: {reason}");
        fs::remove_dir_all(&d).unwrap();
    }
}

#[test]
fn a_flipped_byte_in_an_earlier_record_is_corruption_naming_the_file() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    let ends = build(&src, 3);
    let seg = files(&src, "seg")[0].clone();
    let name = seg.file_name().unwrap().to_str().unwrap().to_string();
    let bytes = fs::read(&seg).unwrap();
    for (frame, range) in [(1, ends[0]..ends[1]), (2, ends[1]..ends[2])] {
        for at in range {
            let d = tmp.path().join(format!("flip{at}"));
            copy_dir(&src, &d);
            let mut b = bytes.clone();
            b[at as usize] ^= 0x40;
            fs::write(d.join(&name), &b).unwrap();
            let (_, offset, reason) = expect_corruption(Store::open(&d, opts()), &name);
            assert_eq!(offset, ends[frame - 1], "names the damaged frame: {reason}");
            fs::remove_dir_all(&d).unwrap();
        }
    }
    // The same flip in the last record of a cleanly closed store (issue 9, case 2): that
    // commit was acknowledged, and the synced record says so. Every byte of the frame.
    let mut b = bytes.clone();
    for at in ends[2]..ends[3] {
        let d = tmp.path().join(format!("flip-last{at}"));
        copy_dir(&src, &d);
        let mut b = bytes.clone();
        b[at as usize] ^= 0x40;
        fs::write(d.join(&name), &b).unwrap();
        let (_, offset, reason) = expect_corruption(Store::open(&d, opts()), &name);
        assert_eq!(offset, ends[2], "names the damaged frame: {reason}");
        fs::remove_dir_all(&d).unwrap();
    }
    // Without the record (a power loss may lose it) the flip is indistinguishable from a torn
    // write: dropped.
    let d = tmp.path().join("flip-last");
    copy_dir(&src, &d);
    b[ends[2] as usize + 20] ^= 0x40;
    fs::write(d.join(&name), &b).unwrap();
    forget_synced(&d);
    let store = Store::open(&d, opts()).unwrap();
    assert_eq!(store.stats().seq, 2);
    // Strict mode refuses even that.
    drop(store);
    let d2 = tmp.path().join("flip-last-strict");
    copy_dir(&src, &d2);
    fs::write(d2.join(&name), &b).unwrap();
    forget_synced(&d2);
    expect_corruption(Store::open(&d2, Options { strict: true, ..opts() }), &name);
}

#[test]
fn a_missing_commit_in_the_middle_is_a_sequence_gap() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    let ends = build(&src, 3);
    let seg = files(&src, "seg")[0].clone();
    let b = fs::read(&seg).unwrap();
    let mut spliced = b[..ends[1] as usize].to_vec();
    spliced.extend_from_slice(&b[ends[2] as usize..]);
    fs::write(&seg, spliced).unwrap();
    let (_, offset, reason) = expect_corruption(Store::open(&src, opts()), ".seg");
    assert_eq!(offset, ends[1]);
    assert!(reason.contains("gap"), "{reason}");
}

/// A store with several sealed segments.
fn build_sealed(dir: &Path) -> Store {
    let store = Store::open(dir, Options { segment_bytes: 200, ..opts() }).unwrap();
    for i in 1..=12 {
        commit(&store, i);
    }
    assert!(files(dir, "seg").len() >= 4);
    store
}

#[test]
fn damage_in_a_sealed_segment_is_corruption() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    drop(build_sealed(&src));
    let sealed = files(&src, "seg")[1].clone();
    let name = sealed.file_name().unwrap().to_str().unwrap().to_string();
    let bytes = fs::read(&sealed).unwrap();

    // Truncated by one byte (or at a frame boundary: the MANIFEST knows its length).
    for cut in [bytes.len() - 1, 40] {
        let d = tmp.path().join(format!("trunc{cut}"));
        copy_dir(&src, &d);
        fs::write(d.join(&name), &bytes[..cut]).unwrap();
        expect_corruption(Store::open(&d, opts()), &name);
    }
    // A flipped byte: the hint lets open skip the segment, so verify() (and the read) find it…
    let d = tmp.path().join("flip");
    copy_dir(&src, &d);
    let mut b = bytes.clone();
    let at = b.len() - 3; // inside the last value
    b[at] ^= 1;
    fs::write(d.join(&name), &b).unwrap();
    let store = Store::open(&d, opts()).unwrap();
    assert!(matches!(store.verify(), Err(Error::Corruption { ref file, .. }) if file.ends_with(&name)));
    drop(store);
    // …and without the hint, open itself scans the segment and refuses.
    fs::remove_file(d.join(name.replace(".seg", ".hint"))).unwrap();
    expect_corruption(Store::open(&d, opts()), &name);
}

#[test]
fn a_missing_listed_segment_is_corruption() {
    let tmp = tempfile::tempdir().unwrap();
    drop(build_sealed(tmp.path()));
    let victim = files(tmp.path(), "seg")[1].clone();
    fs::remove_file(&victim).unwrap();
    let (_, _, reason) =
        expect_corruption(Store::open(tmp.path(), opts()), victim.file_name().unwrap().to_str().unwrap());
    assert!(reason.contains("missing"), "{reason}");
}

#[test]
fn a_damaged_hint_is_rebuilt_silently() {
    let tmp = tempfile::tempdir().unwrap();
    drop(build_sealed(tmp.path()));
    for (i, h) in files(tmp.path(), "hint").into_iter().enumerate() {
        let mut b = fs::read(&h).unwrap();
        if i % 2 == 0 {
            let mid = b.len() / 2;
            b[mid] ^= 0xff;
            fs::write(&h, b).unwrap();
        } else {
            fs::remove_file(&h).unwrap();
        }
    }
    let store = Store::open(tmp.path(), opts()).unwrap();
    assert_eq!(contents(&store), model(12));
    store.verify().unwrap();
}

/// One past the newest version this build reads (an encrypted store's, above a plain one's).
const NEWER: u32 = rabosh::ENCRYPTED_FORMAT_VERSION + 1;

fn patch_version(path: &Path, at: usize) {
    let mut b = fs::read(path).unwrap();
    b[at..at + 4].copy_from_slice(&NEWER.to_le_bytes());
    fs::write(path, b).unwrap();
}

#[test]
fn a_newer_format_is_unsupported_not_damage() {
    let tmp = tempfile::tempdir().unwrap();
    let a = tmp.path().join("a");
    drop(build_sealed(&a));
    let b = tmp.path().join("b");
    copy_dir(&a, &b);
    patch_version(&a.join("MANIFEST"), 8);
    match Store::open(&a, opts()) {
        Err(Error::Unsupported { file, version }) => {
            assert!(file.ends_with("MANIFEST"));
            assert_eq!(version, NEWER);
        }
        other => panic!("expected Unsupported, got {:?}", other.err()),
    }
    let seg = files(&b, "seg")[0].clone();
    patch_version(&seg, 8);
    assert!(matches!(Store::open(&b, opts()), Err(Error::Unsupported { ref file, .. }) if *file == seg));
}

#[test]
fn foreign_files_are_ignored_and_own_orphans_swept() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    drop(build_sealed(d));
    for f in [".DS_Store", "._0000000001.seg", "Thumbs.db", "desktop.ini"] {
        fs::write(d.join(f), b"not ours").unwrap();
    }
    for f in ["0000000999.seg", "0000000998.hint", "MANIFEST.tmp", "0000000001.hint.tmp"] {
        fs::write(d.join(f), b"leftover").unwrap();
    }
    let store = Store::open(d, opts()).unwrap();
    assert_eq!(contents(&store), model(12));
    for f in [".DS_Store", "._0000000001.seg", "Thumbs.db", "desktop.ini"] {
        assert!(d.join(f).exists(), "{f} is not ours to delete");
    }
    for f in ["0000000999.seg", "0000000998.hint", "MANIFEST.tmp", "0000000001.hint.tmp"] {
        assert!(!d.join(f).exists(), "{f} should be swept");
    }
}

#[test]
fn a_directory_that_is_not_a_store_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    // A half-made checkpoint: data files, no MANIFEST.
    let src = tmp.path().join("src");
    let store = build_sealed(&src);
    let cp = tmp.path().join("cp");
    let info = store.checkpoint(&cp).unwrap();
    assert_eq!(info.seq, 12);
    fs::remove_file(cp.join("MANIFEST")).unwrap();
    expect_corruption(Store::open(&cp, opts()), "MANIFEST");
    // Unrelated files: never silently initialised.
    let other = tmp.path().join("other");
    fs::create_dir_all(&other).unwrap();
    fs::write(other.join("notes.txt"), b"hello").unwrap();
    assert!(matches!(Store::open(&other, opts()), Err(Error::InvalidArgument(_))));
    assert!(!other.join("MANIFEST").exists());
    // A directory with only foreign files is empty for our purposes.
    let mac = tmp.path().join("mac");
    fs::create_dir_all(&mac).unwrap();
    fs::write(mac.join(".DS_Store"), b"x").unwrap();
    Store::open(&mac, opts()).unwrap();
    // A non-empty checkpoint target is refused.
    assert!(matches!(store.checkpoint(&other), Err(Error::InvalidArgument(_))));
}

#[test]
fn checkpoint_is_isolated_from_later_writes_and_compaction() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    let store = build_sealed(&src);
    let cp = tmp.path().join("cp");
    assert_eq!(store.checkpoint(&cp).unwrap().seq, 12);
    for i in 13..=20 {
        commit(&store, i);
    }
    store.compact().unwrap();
    commit(&store, 21);
    let c = Store::open(&cp, opts()).unwrap();
    assert_eq!(c.stats().seq, 12);
    assert_eq!(contents(&c), model(12));
    c.verify().unwrap();
    assert_eq!(contents(&store), model(21));
    drop(store);
    let s = Store::open(&src, opts()).unwrap();
    assert_eq!(contents(&s), model(21));
}
