//! Issue 11: open after a clean close reads the active segment's hint instead of scanning the
//! segment, and falls back to the scan whenever that hint may not describe the file. Work is
//! counted in bytes read through the Vfs, never in time.

use rabosh::{Batch, Durability, Options, Store};
use rabosh_testkit::FaultFs;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

const VALUE: usize = 4096;
const KEYS: usize = 300;

fn value(i: usize, round: u8) -> Vec<u8> {
    vec![(b'a' + (i % 26) as u8) ^ round; VALUE]
}

/// Puts, overwrites and deletes spread over a sealed segment and the active one; returns
/// what the store must hold.
fn populate(dir: &Path, durability: Durability) -> BTreeMap<Vec<u8>, (Vec<u8>, Vec<u8>)> {
    let store = Store::open(dir, Options { durability, segment_bytes: 1 << 20, ..Options::default() }).unwrap();
    let mut model = BTreeMap::new();
    for round in 0..2u8 {
        for i in 0..KEYS {
            let key = format!("m:default:/memories/k{i:04}").into_bytes();
            let mut b = Batch::new();
            if round == 1 && i % 7 == 0 {
                b.delete(key.clone());
                model.remove(&key);
            } else if round == 0 || i % 3 == 0 {
                let meta = vec![round, i as u8, 40];
                b.put(key.clone(), value(i, round), meta.clone());
                model.insert(key, (value(i, round), meta));
            } else {
                continue;
            }
            store.write(b).unwrap();
        }
    }
    store.close().unwrap();
    model
}

fn active(dir: &Path) -> (std::path::PathBuf, u64) {
    let seg = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "seg"))
        .max()
        .unwrap();
    let len = std::fs::metadata(&seg).unwrap().len();
    (seg, len)
}

fn open_counting(dir: &Path) -> (Store, FaultFs) {
    let fs = FaultFs::std();
    let store = Store::open(dir, Options { vfs: Some(Arc::new(fs.clone())), ..Options::default() }).unwrap();
    (store, fs)
}

fn check(store: &Store, model: &BTreeMap<Vec<u8>, (Vec<u8>, Vec<u8>)>) {
    let snap = store.snapshot().unwrap();
    let seen: Vec<_> = snap.scan_prefix(b"m:").map(|(k, m)| (k.to_vec(), m.to_vec())).collect();
    let want: Vec<_> = model.iter().map(|(k, (_, m))| (k.clone(), m.clone())).collect();
    assert_eq!(seen, want);
    for (k, (v, _)) in model {
        assert_eq!(snap.get(k).unwrap().as_ref(), Some(v));
    }
    store.verify().unwrap();
}

#[test]
fn a_clean_close_lets_the_next_open_skip_the_active_segment() {
    for durability in [Durability::Sync, Durability::Buffered] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("s");
        let model = populate(&dir, durability);
        let (_, active_len) = active(&dir);
        assert!(active_len > 100 * VALUE as u64, "the active segment must hold data: {active_len}");

        let (store, fs) = open_counting(&dir);
        let read = fs.bytes_read();
        assert!(read < active_len / 4, "{durability:?}: open read {read} bytes; the active segment is {active_len}");
        let seq = store.stats().seq;
        check(&store, &model);
        // The tail it carried continues the log: the next commit takes the next seq, and a
        // scan of the segment (after a crash: no clean close) agrees with the hint.
        let mut b = Batch::new();
        b.put(b"m:default:/memories/after".to_vec(), b"x".to_vec(), b"m".to_vec());
        assert_eq!(store.write(b).unwrap(), seq + 1);
        // A process crash: the files as they are while the store is still open.
        let image = tmp.path().join("image");
        std::fs::create_dir(&image).unwrap();
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if !p.file_name().unwrap().to_str().unwrap().starts_with("LOCK") {
                std::fs::copy(&p, image.join(p.file_name().unwrap())).unwrap();
            }
        }
        drop(store);
        let store = Store::open(&image, Options::default()).unwrap();
        assert_eq!(store.stats().seq, seq + 1);
        let mut model = model.clone();
        model.insert(b"m:default:/memories/after".to_vec(), (b"x".to_vec(), b"m".to_vec()));
        check(&store, &model);
    }
}

#[test]
fn a_hint_that_may_not_describe_the_active_segment_is_not_used() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("s");
    let model = populate(&dir, Durability::Sync);
    let (seg, len) = active(&dir);
    let hint = seg.with_extension("hint");
    assert!(hint.exists(), "a clean close writes the active segment's hint");
    let pristine = tmp.path().join("pristine");
    std::fs::create_dir(&pristine).unwrap();
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        std::fs::copy(&p, pristine.join(p.file_name().unwrap())).unwrap();
    }
    let restore = || {
        for e in std::fs::read_dir(&pristine).unwrap() {
            let p = e.unwrap().path();
            std::fs::copy(&p, dir.join(p.file_name().unwrap())).unwrap();
        }
    };
    let scanned = |why: &str| {
        let (store, fs) = open_counting(&dir);
        assert!(fs.bytes_read() >= len, "{why}: open must scan the active segment: {} < {len}", fs.bytes_read());
        store
    };

    // Bytes behind the recorded length (a later session's unsynced commit torn by a crash).
    let mut f = std::fs::OpenOptions::new().append(true).open(&seg).unwrap();
    std::io::Write::write_all(&mut f, &[0x52, 0x42, 0x46, 0x52, 9, 9, 9]).unwrap();
    drop(f);
    let store = scanned("a torn tail past the hint");
    check(&store, &model);
    drop(store);
    restore();

    // The synced record lost (power loss before it reached disk).
    std::fs::remove_file(dir.join("SYNCED")).unwrap();
    check(&scanned("no synced record"), &model);
    restore();

    // A damaged hint: its directory (checked at open) ...
    let pristine_hint = std::fs::read(&hint).unwrap();
    let mut h = pristine_hint.clone();
    h[20] ^= 1;
    std::fs::write(&hint, &h).unwrap();
    check(&scanned("a damaged hint"), &model);
    restore();
    // ... or one of its pages (checked when a read opens it): open trusts the directory, the
    // read that opens the page answers from a scan of the segment.
    let mut h = pristine_hint;
    let mid = h.len() / 2;
    h[mid] ^= 1;
    std::fs::write(&hint, &h).unwrap();
    check(&open_counting(&dir).0, &model);
    restore();

    // A hint of a sealed segment (no tail) put in its place: a scan still gives the tail.
    let sealed_hint = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "hint") && *p != hint)
        .min()
        .unwrap();
    std::fs::copy(&sealed_hint, &hint).unwrap();
    check(&scanned("a foreign hint"), &model);
}
