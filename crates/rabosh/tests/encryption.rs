//! Encryption at rest: the key checks at open, what reaches the disk, rotation, checkpoints.

use rabosh::{Batch, Encryption, Error, Options, Store};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn key(b: u8) -> Encryption {
    Encryption::new([b; 32])
}

fn enc(b: u8) -> Options {
    Options { encryption: Some(key(b)), segment_bytes: 4096, ..Options::default() }
}

/// Every file under `dir` (recursively), with its bytes.
fn files(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                todo.push(p);
            } else {
                out.insert(p.clone(), std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

fn put(s: &Store, k: &str, v: &str, m: &str) {
    let mut b = Batch::new();
    b.put(k, v, m);
    s.write(b).unwrap();
}

#[test]
fn the_key_is_checked_at_open_and_a_refused_open_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("s");
    let s = Store::open(&dir, enc(1)).unwrap();
    assert!(s.is_encrypted());
    put(&s, "a", "one", "m");
    s.close().unwrap();
    drop(s);
    let before = files(&dir);
    for (opts, want) in
        [(enc(2), "RABOSH_WRONG_KEY"), (Options { segment_bytes: 4096, ..Options::default() }, "RABOSH_KEY_REQUIRED")]
    {
        let e = Store::open(&dir, opts).err().expect("refused");
        assert_eq!(e.code(), want, "{e}");
        assert!(e.to_string().contains(&*dir.to_string_lossy()), "{e}");
        assert_eq!(files(&dir), before, "a refused open changed the store's files ({want})");
    }
    let s = Store::open(&dir, enc(1)).unwrap();
    assert_eq!(s.snapshot().unwrap().get(b"a").unwrap().as_deref(), Some(&b"one"[..]));
    drop(s);

    let plain = tmp.path().join("p");
    Store::open(&plain, Options::default()).unwrap().close().unwrap();
    let before = files(&plain);
    let e = Store::open(&plain, enc(1)).err().expect("a key for a plain store is refused");
    assert!(matches!(e, Error::NotEncrypted { .. }), "{e}");
    assert_eq!(files(&plain), before);
    assert!(!Store::open(&plain, Options::default()).unwrap().is_encrypted());
}

#[test]
fn a_key_must_be_32_bytes_and_is_never_printed() {
    assert!(matches!(Encryption::from_slice(&[1; 31]), Err(Error::InvalidArgument(_))));
    assert!(matches!(Encryption::from_slice(&[1; 33]), Err(Error::InvalidArgument(_))));
    let k = Encryption::from_slice(&[0xAB; 32]).unwrap();
    let shown = format!("{k:?} {:?}", enc(0xAB));
    assert!(!shown.contains("171") && !shown.to_lowercase().contains("ab, ab"), "{shown}");
}

#[test]
fn rotation_rewraps_the_key_and_keeps_the_data() {
    let tmp = tempfile::tempdir().unwrap();
    let s = Store::open(tmp.path(), enc(1)).unwrap();
    put(&s, "a", "one", "");
    let seg_before: Vec<_> =
        files(tmp.path()).into_iter().filter(|(p, _)| p.extension().is_some_and(|e| e == "seg")).collect();
    s.rotate_key(key(3)).unwrap();
    put(&s, "b", "two", "");
    drop(s);
    assert_eq!(Store::open(tmp.path(), enc(1)).err().unwrap().code(), "RABOSH_WRONG_KEY");
    let s = Store::open(tmp.path(), enc(3)).unwrap();
    let snap = s.snapshot().unwrap();
    assert_eq!(snap.get(b"a").unwrap().as_deref(), Some(&b"one"[..]));
    assert_eq!(snap.get(b"b").unwrap().as_deref(), Some(&b"two"[..]));
    drop(snap);
    drop(s);
    // No data was rewritten: the segment holding "a" starts with the same bytes.
    let after = files(tmp.path());
    for (p, mut b) in seg_before {
        // Without the zeros written ahead of the log (cut at close).
        while b.last() == Some(&0) {
            b.pop();
        }
        assert!(b.len() > 40 && after[&p].starts_with(&b), "{} was rewritten", p.display());
    }
    let plain = Store::open(tmp.path().join("p"), Options::default()).unwrap();
    assert!(matches!(plain.rotate_key(key(1)), Err(Error::NotEncrypted { .. })));
}

#[test]
fn shared_handles_need_the_key_and_see_each_others_commits() {
    let tmp = tempfile::tempdir().unwrap();
    let shared = |b: u8| Options { shared: true, ..enc(b) };
    let a = Store::open(tmp.path(), shared(1)).unwrap();
    put(&a, "from-a", "1", "");
    assert_eq!(Store::open(tmp.path(), shared(2)).err().unwrap().code(), "RABOSH_WRONG_KEY");
    let e = Store::open(tmp.path(), Options { shared: true, ..Options::default() }).err().unwrap();
    assert_eq!(e.code(), "RABOSH_KEY_REQUIRED");
    let b = Store::open(tmp.path(), shared(1)).unwrap();
    assert_eq!(b.snapshot().unwrap().get(b"from-a").unwrap().as_deref(), Some(&b"1"[..]));
    put(&b, "from-b", "2", "");
    b.compact().unwrap();
    assert_eq!(a.snapshot().unwrap().get(b"from-b").unwrap().as_deref(), Some(&b"2"[..]));
    put(&a, "from-a-again", "3", "");
    assert_eq!(b.snapshot().unwrap().get(b"from-a-again").unwrap().as_deref(), Some(&b"3"[..]));
}

#[test]
fn a_power_loss_at_any_step_of_a_rotation_leaves_the_old_or_the_new_key() {
    use rabosh_testkit::SimFs;
    let fs = SimFs::new();
    let o = |b: u8, fs: &SimFs| Options {
        vfs: Some(std::sync::Arc::new(fs.clone()) as std::sync::Arc<dyn rabosh::Vfs>),
        ..enc(b)
    };
    let s = Store::open("/r", o(1, &fs)).unwrap();
    put(&s, "k", "v", "");
    fs.set_capture(true);
    s.rotate_key(key(2)).unwrap();
    fs.set_capture(false);
    let mut which = std::collections::BTreeSet::new();
    for c in fs.take_captures() {
        for img in [c.durable_image(), c.image(c.step), c.process_crash_image()] {
            let (st, k) = match Store::open("/r", o(1, &img)) {
                Ok(st) => (st, 1),
                Err(_) => (Store::open("/r", o(2, &img)).expect("neither key opens the store"), 2),
            };
            assert_eq!(st.snapshot().unwrap().get(b"k").unwrap().as_deref(), Some(&b"v"[..]));
            which.insert(k);
        }
    }
    assert_eq!(which.len(), 2, "both outcomes reached: {which:?}");
}

/// A copy of every file of `from` into `to` (flat: a store directory has no subdirectories).
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        std::fs::copy(&p, to.join(p.file_name().unwrap())).unwrap();
    }
}

/// Issue 33, the attack: someone kept a copy of `KEY` from before the rotation and later learns
/// the old host key. After a rewrap (`rotate_key`) that pair still unwraps the data key, which
/// seals everything, including what is written after the rotation. After a re-key (`reencrypt`
/// to a fresh data key) it unwraps a data key that no longer seals anything in the store.
#[test]
fn an_old_key_file_and_the_old_host_key_open_a_rewrapped_store_but_nothing_after_a_rekey() {
    let tmp = tempfile::tempdir().unwrap();
    for rekey in [false, true] {
        let dir = tmp.path().join(if rekey { "rekeyed" } else { "rewrapped" });
        let s = Store::open(&dir, enc(1)).unwrap();
        put(&s, "kept", "written before", "m");
        s.close().unwrap();
        drop(s);
        let leaked = std::fs::read(dir.join("KEY")).unwrap();
        if rekey {
            rabosh::reencrypt(&dir, Some(key(1)), Some(key(2))).unwrap();
        } else {
            let s = Store::open(&dir, enc(1)).unwrap();
            s.rotate_key(key(2)).unwrap();
            s.close().unwrap();
        }
        let s = Store::open(&dir, enc(2)).unwrap();
        put(&s, "after", "written after", "m");
        s.close().unwrap();
        drop(s);
        assert_ne!(std::fs::read(dir.join("KEY")).unwrap(), leaked);

        // The attacker's view: the store's files now, with the old KEY put back.
        let stolen = tmp.path().join(format!("{}-stolen", dir.file_name().unwrap().to_string_lossy()));
        copy_dir(&dir, &stolen);
        std::fs::write(stolen.join("KEY"), &leaked).unwrap();
        let read = Store::open(&stolen, enc(1)).and_then(|s| {
            let snap = s.snapshot()?;
            Ok((snap.get(b"kept")?, snap.get(b"after")?))
        });
        if rekey {
            // The old data key opens no segment: the open (or the first read) is refused.
            let e = read.expect_err("the old KEY and the old host key read a re-keyed store");
            assert_eq!(e.code(), "RABOSH_CORRUPTION", "{e}");
        } else {
            let (kept, after) = read.expect("a rewrapped store opens with its old KEY and old host key");
            assert_eq!(kept.as_deref(), Some(&b"written before"[..]));
            assert_eq!(after.as_deref(), Some(&b"written after"[..]));
        }
        // The store itself opens with the new key, whole.
        let s = Store::open(&dir, enc(2)).unwrap();
        let snap = s.snapshot().unwrap();
        assert_eq!(snap.get(b"kept").unwrap().as_deref(), Some(&b"written before"[..]));
        assert_eq!(snap.get(b"after").unwrap().as_deref(), Some(&b"written after"[..]));
    }
}
