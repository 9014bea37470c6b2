//! Golden stores: one directory per format version, written once by `write_golden_v1` and
//! committed. Every later build must open them with exactly these contents.
//! To (re)create a missing golden store: `RABOSH_WRITE_GOLDEN=1 cargo test -p rabosh --test golden`.
//! An existing one is never overwritten.

use rabosh::{Batch, META_LEN, Meta, Options, Store};
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/v1")
}

fn meta(i: u8) -> Meta {
    let mut m = [0u8; META_LEN];
    for (j, b) in m.iter_mut().enumerate() {
        *b = i.wrapping_mul(31).wrapping_add(j as u8);
    }
    m
}

/// The commits of the v1 golden store; the store also holds a compaction after commit 6.
fn commits() -> Vec<Vec<(String, Option<(String, u8)>)>> {
    let mut out = Vec::new();
    for i in 1..=10u8 {
        let mut c = vec![(format!("m:default:/memories/f{}.md", i % 4), Some((format!("content {i}\n").repeat(i as usize * 3), i)))];
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

fn expected() -> BTreeMap<Vec<u8>, (Vec<u8>, Meta)> {
    let mut m = BTreeMap::new();
    for c in commits() {
        for (k, v) in c {
            match v {
                Some((v, i)) => m.insert(k.into_bytes(), (v.into_bytes(), meta(i))),
                None => m.remove(k.as_bytes()),
            };
        }
    }
    m
}

fn write_golden_v1(dir: &Path) {
    let store = Store::open(dir, Options { segment_bytes: 400, ..Options::default() }).unwrap();
    for (n, c) in commits().into_iter().enumerate() {
        let mut b = Batch::new();
        for (k, v) in c {
            match v {
                Some((v, i)) => b.put(k.into_bytes(), v.into_bytes(), meta(i)),
                None => b.delete(k.into_bytes()),
            }
        }
        store.write(b).unwrap();
        if n + 1 == 6 {
            store.compact().unwrap();
        }
    }
    store.close().unwrap();
    drop(store);
    // The lock files are not data.
    let _ = fs::remove_file(dir.join("LOCK"));
    let _ = fs::remove_file(dir.join("LOCK.holder"));
}

#[test]
fn golden_v1_opens_with_exact_contents() {
    let golden = golden_dir();
    if !golden.join("MANIFEST").exists() {
        assert!(
            std::env::var("RABOSH_WRITE_GOLDEN").is_ok(),
            "golden store {} is missing; it is committed, never regenerated silently",
            golden.display()
        );
        fs::create_dir_all(&golden).unwrap();
        write_golden_v1(&golden);
    }
    // Open a copy: opening writes (lock, holder, possibly a fresh active segment).
    let tmp = tempfile::tempdir().unwrap();
    for e in fs::read_dir(&golden).unwrap() {
        let p = e.unwrap().path();
        fs::copy(&p, tmp.path().join(p.file_name().unwrap())).unwrap();
    }
    let names: Vec<String> = fs::read_dir(&golden).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    assert!(names.iter().any(|n| n.ends_with(".hint")), "golden store should include hints: {names:?}");
    let store = Store::open(tmp.path(), Options::default()).unwrap();
    assert_eq!(store.stats().seq, 10);
    let s = store.snapshot().unwrap();
    let got: BTreeMap<Vec<u8>, (Vec<u8>, Meta)> =
        s.range(b"", None).map(|(k, m)| (k.to_vec(), (s.get(k).unwrap().unwrap(), *m))).collect();
    assert_eq!(got, expected());
    store.verify().unwrap();
}
