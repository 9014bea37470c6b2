//! Fault injection through the Vfs seam on the real filesystem: fail the Nth IO step of a kind
//! during commits, compaction and checkpoint; the store must refuse, poison where memory may be
//! wrong, and a reopen must hold every acknowledged commit. The exhaustive enumeration (every
//! step of every operation, with crash images of the aftermath) runs on `SimFs` in `fault_enum.rs`;
//! this one proves the same on real files for the first steps of each kind.

use rabosh::{Batch, Error, Options, Store};
use rabosh_testkit::{FaultFs, IoKind};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

fn ops(i: u64) -> Batch {
    let mut b = Batch::new();
    b.put(format!("k{}", i % 5).into_bytes(), format!("v{i}").repeat(1 + i as usize % 4).into_bytes(), [i as u8; 40]);
    if i.is_multiple_of(4) {
        b.delete(format!("k{}", (i + 2) % 5).into_bytes());
    }
    b
}

fn model(n: u64) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let mut m = BTreeMap::new();
    for i in 1..=n {
        m.insert(format!("k{}", i % 5).into_bytes(), format!("v{i}").repeat(1 + i as usize % 4).into_bytes());
        if i % 4 == 0 {
            m.remove(format!("k{}", (i + 2) % 5).as_bytes());
        }
    }
    m
}

fn contents(store: &Store) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let s = store.snapshot().unwrap();
    s.range(b"", None).map(|(k, _)| (k.to_vec(), s.get(k).unwrap().unwrap())).collect()
}

fn opts(fs: Option<&FaultFs>) -> Options {
    Options { segment_bytes: 300, vfs: fs.map(|f| Arc::new(f.clone()) as Arc<dyn rabosh::Vfs>), ..Options::default() }
}

fn reopen_and_check(dir: &Path, acked: u64) -> u64 {
    let store = Store::open(dir, opts(None)).unwrap();
    let seq = store.stats().seq;
    assert!(seq >= acked && seq <= acked + 1, "recovered {seq}, acked {acked}");
    assert_eq!(contents(&store), model(seq));
    store.verify().unwrap();
    seq
}

#[test]
fn a_failed_fsync_on_commit_refuses_it_and_poisons() {
    let tmp = tempfile::tempdir().unwrap();
    let fs = FaultFs::std();
    let store = Store::open(tmp.path(), opts(Some(&fs))).unwrap();
    for i in 1..=3 {
        store.write(ops(i)).unwrap();
    }
    let before = store.snapshot().unwrap();
    fs.fail_nth(IoKind::Sync, 1);
    let e = store.write(ops(4)).unwrap_err();
    assert_eq!(fs.fired(), 1);
    assert!(matches!(e, Error::Io { op: "fsync", .. }), "{e}");
    assert_eq!(store.stats().seq, 3, "the failed commit is not visible");
    assert!(store.stats().poisoned);
    assert!(matches!(store.write(ops(4)), Err(Error::Poisoned { .. })));
    assert!(matches!(store.sync(), Err(Error::Poisoned { .. })));
    assert!(matches!(store.snapshot(), Err(Error::Poisoned { .. })), "no new view of a poisoned store");
    // A view taken before the failure still reads what it saw.
    assert_eq!(before.get(b"k1").unwrap(), model(3).get(b"k1".as_slice()).cloned());
    drop(before);
    drop(store);
    reopen_and_check(tmp.path(), 3);
}

#[test]
fn a_torn_write_on_commit_is_dropped_on_reopen() {
    let tmp = tempfile::tempdir().unwrap();
    let fs = FaultFs::std();
    let store = Store::open(tmp.path(), Options { segment_bytes: 1 << 20, ..opts(Some(&fs)) }).unwrap();
    for i in 1..=3 {
        store.write(ops(i)).unwrap();
    }
    fs.fail_nth(IoKind::Write, 1);
    assert!(matches!(store.write(ops(4)), Err(Error::Io { op: "write", .. })));
    assert_eq!(fs.fired(), 1);
    assert!(matches!(store.write(ops(4)), Err(Error::Poisoned { .. })));
    drop(store);
    assert_eq!(reopen_and_check(tmp.path(), 3), 3, "half a frame is a torn tail");
}

#[derive(Debug, Clone, Copy)]
enum Action {
    Commits,
    Compact,
    Checkpoint,
}

/// Fail the nth step of `kind` during `action`; returns whether the fault fired.
fn scenario(kind: IoKind, n: u64, action: Action) -> bool {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("s");
    let fs = FaultFs::std();
    let store = Store::open(&dir, opts(Some(&fs))).unwrap();
    let mut acked = 0;
    for i in 1..=8 {
        acked = store.write(ops(i)).unwrap();
    }
    fs.fail_nth(kind, n);
    let cp = tmp.path().join("cp");
    let failed = match action {
        Action::Commits => {
            let mut failed = false;
            for i in 9..=14 {
                if let Ok(s) = store.write(ops(i)) {
                    acked = s;
                } else {
                    failed = true;
                    break;
                }
            }
            failed
        }
        Action::Compact => store.compact().is_err(),
        Action::Checkpoint => store.checkpoint(&cp).is_err(),
    };
    fs.disarm();
    let fired = fs.fired() == 1;
    if kind == IoKind::Link {
        // A refused hard link falls back to a copy: no error, the checkpoint is still whole.
        assert!(!failed, "{kind:?} #{n} during {action:?}");
    } else if fs.fired_at().is_some_and(|p| p.ends_with("SYNCED")) {
        // The unsynced synced record: a failed update only makes recovery more lenient.
        assert!(!failed, "{kind:?} #{n} during {action:?}");
    } else {
        assert_eq!(failed, fired, "{kind:?} #{n} during {action:?}: an injected fault must surface as an error");
    }
    if store.stats().poisoned {
        assert!(matches!(store.write(ops(99)), Err(Error::Poisoned { .. })));
    } else if !matches!(action, Action::Checkpoint) || !failed {
        // Not poisoned: the store still works.
        acked = store.write(ops(acked + 1)).unwrap();
    }
    if !store.stats().poisoned {
        assert_eq!(contents(&store), model(store.stats().seq));
    }
    drop(store);
    reopen_and_check(&dir, acked);
    if let Action::Checkpoint = action {
        if !failed {
            let c = Store::open(&cp, opts(None)).unwrap();
            assert_eq!(contents(&c), model(8));
        } else if cp.join("MANIFEST").exists() {
            // The MANIFEST is written last: if it exists, the checkpoint is whole.
            if let Ok(c) = Store::open(&cp, opts(None)) {
                assert_eq!(contents(&c), model(8));
            }
        } else if cp.exists() && std::fs::read_dir(&cp).unwrap().next().is_some() {
            assert!(Store::open(&cp, opts(None)).is_err(), "a half-made checkpoint is not a store");
        }
    }
    fired
}

#[test]
fn every_early_fault_in_commit_compact_and_checkpoint_loses_nothing_acked() {
    let kinds = [IoKind::Create, IoKind::Write, IoKind::Sync, IoKind::SyncDir, IoKind::Rename, IoKind::Link];
    let mut fired = 0;
    for action in [Action::Commits, Action::Compact, Action::Checkpoint] {
        for kind in kinds {
            for n in 1..=3 {
                if scenario(kind, n, action) {
                    fired += 1;
                } else {
                    break; // fewer than n steps of this kind: later n cannot fire either
                }
            }
        }
    }
    assert!(fired >= 25, "the seam must reach the engine's IO: only {fired} faults fired");
}
