//! Golden stores: one directory per format version, written once by `write_golden_vN` and
//! committed. Every later build must open them with exactly these contents.
//! To (re)create a missing golden store: `RABOSH_WRITE_GOLDEN=1 cargo test -p rabosh --test golden`.
//! An existing one is never overwritten.

use rabosh::{Batch, Durability, FORMAT_VERSION, Options, Store};
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

fn golden_dir(version: u32) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/golden/v{version}"))
}

/// v1 and v2 carry a fixed 40 bytes of metadata; from v3 it is opaque, and its length varies
/// (empty, inline, boxed in memory).
fn meta(version: u32, i: u8) -> Vec<u8> {
    let len = if version < 3 { 40 } else { (i as usize * 13) % 70 };
    (0..len).map(|j| i.wrapping_mul(31).wrapping_add(j as u8)).collect()
}

/// The commits of every golden store (v1 also holds a compaction after commit 6).
/// Each commit: (key, Some((value, meta byte))) for a put, None for a delete.
type Commit = Vec<(String, Option<(String, u8)>)>;

fn commits() -> Vec<Commit> {
    let mut out = Vec::new();
    for i in 1..=10u8 {
        let mut c = vec![(
            format!("m:default:/memories/f{}.md", i % 4),
            Some((format!("content {i}\n").repeat(i as usize * 3), i)),
        )];
        if i % 3 == 0 {
            c.push((format!("m:default:/memories/f{}.md", (i + 1) % 4), None));
        }
        if i == 5 {
            c.push(("m:other:/memories/ü-ünïcode.md".into(), Some((String::new(), 99))));
        }
        out.push(c);
    }
    out
}

fn expected(version: u32) -> BTreeMap<Vec<u8>, (Vec<u8>, Vec<u8>)> {
    let mut m = BTreeMap::new();
    for c in commits() {
        for (k, v) in c {
            match v {
                Some((v, i)) => m.insert(k.into_bytes(), (v.into_bytes(), meta(version, i))),
                None => m.remove(k.as_bytes()),
            };
        }
    }
    m
}

fn batch(version: u32, c: Vec<(String, Option<(String, u8)>)>) -> Batch {
    let mut b = Batch::new();
    for (k, v) in c {
        match v {
            Some((v, i)) => b.put(k.into_bytes(), v.into_bytes(), meta(version, i)),
            None => b.delete(k.into_bytes()),
        }
    }
    b
}

/// The lock files are not data.
fn drop_lock_files(dir: &Path) {
    let _ = fs::remove_file(dir.join("LOCK"));
    let _ = fs::remove_file(dir.join("LOCK.holder"));
}

fn write_golden_v1(dir: &Path) {
    let store = Store::open(dir, Options { segment_bytes: 400, ..Options::default() }).unwrap();
    for (n, c) in commits().into_iter().enumerate() {
        store.write(batch(1, c)).unwrap();
        if n + 1 == 6 {
            store.compact().unwrap();
        }
    }
    store.close().unwrap();
    drop(store);
    drop_lock_files(dir);
}

/// v2: commits 1–4 in Sync mode (a compaction after 3), then 5–10 buffered (sync after 6 and
/// 8, close at the end), so its log segments hold both kinds of commit frame and synced markers.
fn write_golden_v2(dir: &Path) {
    write_mixed(dir, 2);
}

/// v3: the same history as v2, with opaque metadata of varying length.
fn write_golden_v3(dir: &Path) {
    write_mixed(dir, 3);
}

fn write_mixed(dir: &Path, version: u32) {
    assert_eq!(version, FORMAT_VERSION, "a golden store is written only by the build of its version");
    let o = Options { segment_bytes: 1500, ..Options::default() };
    let mut all = commits().into_iter();
    let store = Store::open(dir, o.clone()).unwrap();
    for (i, c) in (1..).zip(all.by_ref().take(4)) {
        store.write(batch(version, c)).unwrap();
        if i == 3 {
            store.compact().unwrap();
        }
    }
    store.close().unwrap();
    drop(store);
    let store = Store::open(dir, Options { durability: Durability::Buffered, ..o }).unwrap();
    for (i, c) in (5..).zip(all) {
        store.write(batch(version, c)).unwrap();
        if i == 6 || i == 8 {
            store.sync().unwrap();
        }
    }
    store.close().unwrap();
    drop(store);
    drop_lock_files(dir);
}

/// A copy of the golden store (opening writes: lock, holder, possibly a fresh active segment).
fn golden_copy(version: u32, write: fn(&Path)) -> tempfile::TempDir {
    let golden = golden_dir(version);
    if !golden.join("MANIFEST").exists() {
        assert!(
            std::env::var("RABOSH_WRITE_GOLDEN").is_ok(),
            "golden store {} is missing; it is committed, never regenerated silently",
            golden.display()
        );
        fs::create_dir_all(&golden).unwrap();
        write(&golden);
    }
    let tmp = tempfile::tempdir().unwrap();
    for e in fs::read_dir(&golden).unwrap() {
        let p = e.unwrap().path();
        fs::copy(&p, tmp.path().join(p.file_name().unwrap())).unwrap();
    }
    let names: Vec<String> =
        fs::read_dir(&golden).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    assert!(names.iter().any(|n| n.ends_with(".hint")), "golden store should include hints: {names:?}");
    tmp
}

fn check_contents(store: &Store, version: u32) {
    assert_eq!(store.stats().seq, 10);
    let s = store.snapshot().unwrap();
    let got: BTreeMap<Vec<u8>, (Vec<u8>, Vec<u8>)> =
        s.range(b"", None).map(|(k, m)| (k.to_vec(), (s.get(k).unwrap().unwrap(), m.to_vec()))).collect();
    assert_eq!(got, expected(version));
    store.verify().unwrap();
}

/// Per segment file: (header version, frames with the buffered flag, synced markers).
fn segment_census(dir: &Path) -> BTreeMap<String, (u32, usize, usize)> {
    let mut out = BTreeMap::new();
    for e in fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_str().unwrap().to_string();
        if !name.ends_with(".seg") {
            continue;
        }
        let b = fs::read(&p).unwrap();
        let version = u32::from_le_bytes(b[8..12].try_into().unwrap());
        let (mut flagged, mut markers, mut at) = (0, 0, 40);
        while at + 12 <= b.len() {
            let word = u32::from_le_bytes(b[at + 4..at + 8].try_into().unwrap());
            flagged += (word >> 31) as usize;
            markers += usize::from(b[at + 12] == 3);
            at += 12 + (word & 0x7fff_ffff) as usize;
        }
        out.insert(name, (version, flagged, markers));
    }
    out
}

#[test]
fn golden_v1_opens_with_exact_contents() {
    let tmp = golden_copy(1, write_golden_v1);
    let store = Store::open(tmp.path(), Options::default()).unwrap();
    check_contents(&store, 1);
}

#[test]
fn golden_v2_opens_with_exact_contents() {
    check_mixed(2, write_golden_v2);
}

#[test]
fn golden_v3_opens_with_exact_contents() {
    check_mixed(3, write_golden_v3);
}

fn check_mixed(version: u32, write: fn(&Path)) {
    let tmp = golden_copy(version, write);
    let census = segment_census(tmp.path());
    assert!(census.values().all(|c| c.0 == version), "every segment has a v{version} header: {census:?}");
    assert!(census.values().any(|c| c.1 > 0) && census.values().any(|c| c.2 > 0), "{census:?}");
    let store = Store::open(tmp.path(), Options::default()).unwrap();
    check_contents(&store, version);
    drop(store);
    // Without hints open scans the sealed segments, markers and flags included.
    let tmp = golden_copy(version, write);
    for e in fs::read_dir(tmp.path()).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "hint") {
            fs::remove_file(p).unwrap();
        }
    }
    check_contents(&Store::open(tmp.path(), Options::default()).unwrap(), version);
}

/// A v1 store taken over in Buffered mode: the v1 active segment is sealed untouched (a v1
/// reader would misread a buffered frame or a v3 put) and commits go into a new segment of the
/// current version.
#[test]
fn a_v1_store_written_buffered_keeps_v1_segments_free_of_v2_frames() {
    let tmp = golden_copy(1, write_golden_v1);
    let before = segment_census(tmp.path());
    let store = Store::open(tmp.path(), Options { durability: Durability::Buffered, ..Options::default() }).unwrap();
    let mut extra = Batch::new();
    extra.put(b"m:default:/memories/new.md".to_vec(), b"after the upgrade".to_vec(), meta(FORMAT_VERSION, 7));
    assert_eq!(store.write(extra).unwrap(), 11);
    store.close().unwrap();
    drop(store);
    let after = segment_census(tmp.path());
    for (name, c) in &before {
        assert_eq!(after.get(name), Some(c), "v1 segment {name} changed");
    }
    let new: Vec<_> = after.iter().filter(|(n, _)| !before.contains_key(*n)).collect();
    assert!(new.len() == 1 && new[0].1.0 == FORMAT_VERSION && new[0].1.1 == 1 && new[0].1.2 == 1, "{new:?}");
    let store = Store::open(tmp.path(), Options::default()).unwrap();
    assert_eq!(store.stats().seq, 11);
    assert_eq!(store.snapshot().unwrap().get(b"m:default:/memories/new.md").unwrap().unwrap(), b"after the upgrade");
    store.verify().unwrap();
}
