//! Issue 9, case 7: a store directory removed while open must not acknowledge another commit,
//! and an older MANIFEST put back must be noticed on open, not roll the store back silently.

use rabosh::{Batch, Error, Options, Store};
use std::path::Path;

fn put(i: u32) -> Batch {
    let mut b = Batch::new();
    b.put(format!("k{i}").into_bytes(), vec![b'v'; 200], vec![i as u8]);
    b
}

#[cfg(unix)]
#[test]
fn a_commit_into_a_removed_store_directory_fails_and_poisons() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("s");
    let store = Store::open(&dir, Options::default()).unwrap();
    store.write(put(1)).unwrap();
    std::fs::remove_dir_all(&dir).unwrap(); // rm -rf while open
    match store.write(put(2)) {
        Err(Error::Io { .. }) => {}
        other => panic!("a commit into a removed store was answered {other:?}"),
    }
    assert!(matches!(store.write(put(3)), Err(Error::Poisoned { .. })));
    assert!(store.stats().poisoned);
}

fn rolled_back(r: rabosh::Result<Store>, dir: &Path) {
    match r {
        Err(Error::Corruption { file, reason, .. }) => {
            assert_eq!(file, dir.join("MANIFEST"), "{reason}");
        }
        Err(e) => panic!("expected corruption naming the MANIFEST, got {e}"),
        Ok(s) => panic!("an older MANIFEST rolled the store back silently to seq {}", s.stats().seq),
    }
}

#[test]
fn an_older_manifest_put_back_is_corruption() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("s");
    let o = Options { segment_bytes: 1024, ..Options::default() };
    let store = Store::open(&dir, o.clone()).unwrap();
    for i in 0..6 {
        store.write(put(i)).unwrap();
    }
    let old = std::fs::read(dir.join("MANIFEST")).unwrap();
    for i in 6..20 {
        store.write(put(i)).unwrap();
    }
    store.close().unwrap();
    drop(store);
    std::fs::write(dir.join("MANIFEST"), &old).unwrap();
    let before: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
    rolled_back(Store::open(&dir, o.clone()), &dir);
    // Even without the synced record (lost to a power loss), the newer segments show it.
    std::fs::remove_file(dir.join("SYNCED")).unwrap();
    rolled_back(Store::open(&dir, o.clone()), &dir);
    // And nothing was swept as a leftover on the way.
    let mut after: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
    after.push("SYNCED".into());
    for n in &before {
        assert!(after.contains(n), "{n:?} was removed by a refused open");
    }
}

/// Issue 33: a checkpoint's MANIFEST lists the sealed segments but not the active one it left
/// behind, and its counter is already past that segment: put back over the store, it named no
/// segment "newer", and the commits written after the checkpoint were swept as a leftover.
#[test]
fn a_checkpoints_manifest_put_back_keeps_or_reports_later_commits() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("s");
    let o = Options::default();
    let store = Store::open(&dir, o.clone()).unwrap();
    for i in 0..5 {
        store.write(put(i)).unwrap();
    }
    store.checkpoint(tmp.path().join("cp")).unwrap();
    for i in 5..9 {
        store.write(put(i)).unwrap();
    }
    store.close().unwrap();
    drop(store);
    std::fs::copy(tmp.path().join("cp/MANIFEST"), dir.join("MANIFEST")).unwrap();
    // Recovered: the segment the checkpoint left active continues the MANIFEST's last commit
    // exactly, so it is listed again (and stays listed: a second open finds the same).
    for _ in 0..2 {
        let s = Store::open(&dir, o.clone()).expect("the later commits are recovered");
        let snap = s.snapshot().unwrap();
        for i in 0..9 {
            assert!(snap.get(format!("k{i}").as_bytes()).unwrap().is_some(), "k{i} was dropped silently");
        }
        assert!(s.verify().is_ok());
        s.close().unwrap();
    }
}
