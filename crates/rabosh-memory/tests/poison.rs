//! A commit whose outcome is unknown poisons the store (issue 9 case 1, issue 10): after a failed
//! fsync, or a panic while committing, every command answers Poisoned until the store is
//! reopened, and nothing answers from the commit that failed. Also: an expiry whose compaction
//! fails reports both its committed count and the failure (issue 9 case 5).

mod common;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use common::Fixture;
use rabosh_memory::{
    Backend, Clock, Create, Durability, EmbeddedOptions, EmbeddedStore, Error, Memories, MemoryOptions, View,
};
use rabosh_testkit::{FaultFs, IoKind};

/// Every command and bulk call of `m`, each of which must answer Poisoned.
fn assert_every_command_is_poisoned(m: &Memories) {
    let results: Vec<(&str, Result<(), Error>)> = vec![
        ("view file", m.view("/memories/failed").map(drop)),
        ("view dir", m.view("/memories").map(drop)),
        ("view_if_cheap", m.view_if_cheap("/memories/failed", u64::MAX, u64::MAX).map(drop)),
        ("create", m.create("/memories/failed", "again").map(drop)),
        ("create other", m.create("/memories/other", "x").map(drop)),
        ("str_replace", m.str_replace("/memories/failed", "doomed", "x").map(drop)),
        ("insert", m.insert("/memories/failed", Some(0), "x").map(drop)),
        ("delete", m.delete("/memories/kept").map(drop)),
        ("rename", m.rename("/memories/failed", "/memories/moved").map(drop)),
        ("usage", m.usage().map(drop)),
        ("expire", m.expire_before(i64::MAX).map(drop)),
        ("export", m.export_all().map(drop)),
        ("import", m.import_all(&[("/memories/imp".into(), "x".into())], false).map(drop)),
    ];
    for (what, result) in results {
        assert!(matches!(result, Err(Error::Poisoned(_))), "{what}: {result:?}");
    }
}

fn handlers(backend: &Arc<dyn Backend>) -> [Memories; 2] {
    let scan = MemoryOptions { listing_index: false, ..Default::default() };
    let indexed = MemoryOptions { listing_index: true, ..Default::default() };
    [Memories::new(backend.clone(), scan).unwrap(), Memories::new(backend.clone(), indexed).unwrap()]
}

fn a_panic_while_committing_poisons(f: &Fixture) {
    let [scan, indexed] = handlers(&f.backend);
    scan.create("/memories/kept", "kept").unwrap();
    assert!(matches!(indexed.view("/memories").unwrap(), View::Dir { .. }));
    let panicked = catch_unwind(AssertUnwindSafe(|| {
        f.backend.transact(&mut |_, ws| {
            ws.put(b"m:default:/memories/failed".to_vec(), b"doomed".to_vec(), vec![0; 40]);
            panic!("mid-commit");
        })
    }));
    assert!(panicked.is_err());
    assert_every_command_is_poisoned(&scan);
    assert_every_command_is_poisoned(&indexed);
}

#[test]
fn a_failed_fsync_of_a_create_poisons_every_command_until_reopen() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    let fs = FaultFs::std();
    let options =
        EmbeddedOptions { durability: Durability::Sync, vfs: Some(Arc::new(fs.clone())), ..Default::default() };
    let store = EmbeddedStore::open(&dir, options).unwrap();
    let backend: Arc<dyn Backend> = store.clone();
    let [scan, indexed] = handlers(&backend);
    scan.create("/memories/kept", "kept").unwrap();
    assert!(matches!(indexed.view("/memories").unwrap(), View::Dir { .. }));

    fs.fail_nth(IoKind::Sync, 1);
    let failed = scan.create("/memories/failed", "doomed content");
    assert_eq!(fs.fired(), 1);
    assert!(matches!(failed, Err(Error::Io(_))), "{failed:?}");
    assert_every_command_is_poisoned(&scan);
    assert_every_command_is_poisoned(&indexed);
    assert!(store.stats().poisoned);
    assert!(matches!(store.sync(), Err(Error::Poisoned(_))));
    assert!(matches!(store.snapshot(), Err(Error::Poisoned(_))));
    drop([scan, indexed]);
    drop(backend);
    store.close().ok();
    drop(store);

    // After reopen: the acknowledged memory is there; the failed create is either absent or
    // whole (its bytes may have reached the disk before the fsync failed), never half.
    let store = EmbeddedStore::open(&dir, EmbeddedOptions::default()).unwrap();
    let [m, _] = handlers(&(store.clone() as Arc<dyn Backend>));
    assert_eq!(m.view("/memories/kept").unwrap(), common::file("kept"));
    match m.view("/memories/failed").unwrap() {
        View::NotFound => assert_eq!(m.create("/memories/failed", "again").unwrap(), Create::Created),
        View::File { content, .. } => assert_eq!(content, "doomed content"),
        other => panic!("{other:?}"),
    }
    store.verify().unwrap();
}

/// Expires two of three memories with the `n`th file creation of the reclaim failing; returns
/// whether that fault fired.
fn expire_with_failed_reclaim(n: u64) -> bool {
    let tmp = tempfile::tempdir().unwrap();
    let fs = FaultFs::std();
    let options =
        EmbeddedOptions { durability: Durability::Buffered, vfs: Some(Arc::new(fs.clone())), ..Default::default() };
    let store = EmbeddedStore::open(tmp.path().join("store"), options).unwrap();
    let now = Arc::new(AtomicI64::new(100));
    let clock = {
        let now = now.clone();
        Clock::from_fn(move || now.load(Ordering::SeqCst))
    };
    let m = Memories::new(store.clone(), MemoryOptions::default()).unwrap().with_clock(clock);
    m.create("/memories/old1", "x").unwrap();
    m.create("/memories/old2", "y").unwrap();
    now.store(500, Ordering::SeqCst);
    m.create("/memories/new", "z").unwrap();

    // The expiry's own commit creates no file (Buffered, one segment): every Create from here on
    // belongs to the compaction that reclaims its space.
    fs.fail_nth(IoKind::Create, n);
    let expired = m.expire_before(200).unwrap();
    if fs.fired() == 0 {
        assert!(expired.reclaim_error.is_none());
        assert_eq!(expired.count, 2);
        return false;
    }
    assert_eq!(expired.count, 2, "Create #{n}");
    assert!(matches!(expired.reclaim_error, Some(Error::Io(_))), "Create #{n}: {:?}", expired.reclaim_error);
    // The deletions are committed. Commands go on, unless the engine could not tell what the
    // failed step left behind: then every call answers Poisoned, and a reopen shows the deletions.
    match m.usage() {
        Ok(usage) => {
            assert_eq!(usage.memories, 1, "Create #{n}");
            assert_eq!(m.view("/memories/old1").unwrap(), View::NotFound, "Create #{n}");
            match m.create("/memories/after", "ok") {
                Ok(created) => assert_eq!(created, Create::Created),
                Err(e) => assert!(matches!(e, Error::Poisoned(_)), "Create #{n}: {e:?}"),
            }
        }
        Err(Error::Poisoned(_)) => {
            assert!(matches!(m.view("/memories/new"), Err(Error::Poisoned(_))), "Create #{n}");
            drop(m);
            let _ = store.close();
            drop(store);
            let reopened = EmbeddedStore::open(tmp.path().join("store"), EmbeddedOptions::default()).unwrap();
            let m = Memories::new(reopened, MemoryOptions::default()).unwrap();
            assert_eq!(m.usage().unwrap().memories, 1, "Create #{n}: after reopen");
            assert_eq!(m.view("/memories/old1").unwrap(), View::NotFound, "Create #{n}: after reopen");
        }
        Err(e) => panic!("Create #{n}: {e:?}"),
    }
    true
}

#[test]
fn an_expiry_whose_compaction_fails_reports_its_count_and_the_failure() {
    let mut failed_steps = 0;
    for n in 1.. {
        if !expire_with_failed_reclaim(n) {
            break;
        }
        failed_steps += 1;
    }
    assert!(failed_steps >= 2, "compaction created {failed_steps} files");
}

over_backends!(a_panic_while_committing_poisons);
