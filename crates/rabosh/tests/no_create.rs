//! `Options::create_if_missing = false` (issue 9 "smaller", issue 10): read-only tools must
//! never turn a stray directory into a store. Absent, empty, or MANIFEST-less directories
//! (e.g. left by a killed checkpoint) are `NotAStore`, and nothing is created in them.

use rabosh::{Batch, Error, Options, Store};
use std::path::Path;

fn no_create() -> Options {
    Options { create_if_missing: false, ..Options::default() }
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    v.sort();
    v
}

fn not_a_store(r: rabosh::Result<Store>, dir: &Path) {
    match r {
        Err(Error::NotAStore { dir: d }) => assert_eq!(d, dir),
        Err(e) => panic!("{}: expected NotAStore, got {e}", dir.display()),
        Ok(_) => panic!("{}: opened as a store", dir.display()),
    }
}

#[test]
fn absent_empty_and_manifestless_directories_are_not_stores_and_stay_untouched() {
    let tmp = tempfile::tempdir().unwrap();
    let absent = tmp.path().join("absent");
    not_a_store(Store::open(&absent, no_create()), &absent);
    assert!(!absent.exists(), "nothing may be created");

    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    not_a_store(Store::open(&empty, no_create()), &empty);
    assert!(names(&empty).is_empty(), "nothing may be created: {:?}", names(&empty));

    // A real store opens, and keeps its contents.
    let real = tmp.path().join("real");
    let s = Store::open(&real, Options::default()).unwrap();
    let mut b = Batch::new();
    b.put(b"k".to_vec(), b"v".to_vec(), b"m".to_vec());
    s.write(b).unwrap();
    drop(s);
    let s = Store::open(&real, no_create()).unwrap();
    assert_eq!(s.snapshot().unwrap().get(b"k").unwrap().unwrap(), b"v");
}

#[test]
fn a_checkpoint_killed_before_its_manifest_is_not_a_store() {
    let tmp = tempfile::tempdir().unwrap();
    let s = Store::open(tmp.path().join("src"), Options { segment_bytes: 512, ..Options::default() }).unwrap();
    for i in 0..20u32 {
        let mut b = Batch::new();
        b.put(format!("k{i}").into_bytes(), vec![b'v'; 100], vec![]);
        s.write(b).unwrap();
    }
    // A checkpoint writes its MANIFEST last: killed (SIGKILL) just before, it leaves this.
    let cp = tmp.path().join("cp");
    s.checkpoint(&cp).unwrap();
    std::fs::remove_file(cp.join("MANIFEST")).unwrap();
    let left = names(&cp);
    assert!(left.iter().any(|n| n.ends_with(".seg")), "the half-made target holds data files: {left:?}");
    not_a_store(Store::open(&cp, no_create()), &cp);
    assert_eq!(names(&cp), left, "nothing may be created");
    // With create_if_missing (the default) it is refused too, as damage.
    assert!(matches!(Store::open(&cp, Options::default()), Err(Error::Corruption { .. })));
}

/// Issue 20, cut 2: an open refused because the directory holds something that is not a store
/// writes nothing there — no `LOCK`, `LOCK.holder` or `WRITER` left behind — exclusive or shared.
#[test]
fn a_refused_open_of_a_non_store_directory_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("notes");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("todo.txt"), b"not a store").unwrap();
    let before = names(&dir);
    for shared in [false, true] {
        let r = Store::open(&dir, Options { shared, ..Options::default() });
        assert!(matches!(r, Err(Error::InvalidArgument(_))), "shared={shared}: {:?}", r.err());
        assert_eq!(names(&dir), before, "shared={shared}: a refused open wrote files");
    }
    // A half-made checkpoint (data files, no MANIFEST) is refused as damage, untouched too.
    let cp = tmp.path().join("cp");
    std::fs::create_dir(&cp).unwrap();
    std::fs::write(cp.join("0000000001.seg"), b"half").unwrap();
    let before = names(&cp);
    assert!(matches!(Store::open(&cp, Options::default()), Err(Error::Corruption { .. })));
    assert_eq!(names(&cp), before);
}

/// A regular file (or a path through one) is no store and never becomes one: with or without
/// `create_if_missing` the open answers a bad argument naming the path, not the OS's "Not a
/// directory" on a MANIFEST path the caller never named, and the file is left as it was.
#[test]
fn a_file_is_refused_as_not_a_directory_and_left_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("notes.txt");
    std::fs::write(&file, b"not a store").unwrap();
    for dir in [file.clone(), file.join("below")] {
        for options in [no_create(), Options::default()] {
            match Store::open(&dir, options) {
                Err(Error::InvalidArgument(m)) => {
                    assert_eq!(m, format!("{} is not a directory: a store is a directory", dir.display()));
                }
                Err(e) => panic!("{}: expected InvalidArgument, got {e:?}", dir.display()),
                Ok(_) => panic!("{}: opened as a store", dir.display()),
            }
        }
    }
    assert_eq!(std::fs::read(&file).unwrap(), b"not a store");
    assert_eq!(names(tmp.path()), ["notes.txt"]);
}
