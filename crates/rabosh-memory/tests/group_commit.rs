//! Group commit through the memory layer: commands share fsyncs (the write lock is released
//! before the fsync), lose no update, and no view — indexed or scanned — shows a commit before
//! it is durable.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rabosh_memory::{Create, Durability, EmbeddedOptions, EmbeddedStore, Memories, MemoryOptions, StrReplace, View};
use rabosh_testkit::{FaultFs, assert_fsyncs_shared};

/// A hang guard only: every wait below is for a state a correct store reaches at once.
const HANG: Duration = Duration::from_secs(20);

fn sync_store(fs: &FaultFs, dir: &std::path::Path) -> Arc<EmbeddedStore> {
    let options =
        EmbeddedOptions { durability: Durability::Sync, vfs: Some(Arc::new(fs.clone())), ..Default::default() };
    EmbeddedStore::open(dir, options).unwrap()
}

fn handler(store: &Arc<EmbeddedStore>, listing_index: bool) -> Memories {
    let options = MemoryOptions { listing_index, ..MemoryOptions::default() };
    Memories::new(store.clone(), options).unwrap()
}

fn wait_appended(store: &EmbeddedStore, seq: u64) {
    let start = Instant::now();
    while store.appended_seq() < seq {
        assert!(start.elapsed() < HANG, "commands could not append while an fsync was running");
        std::thread::yield_now();
    }
}

fn content(m: &Memories, path: &str) -> String {
    match m.view(path).unwrap() {
        View::File { content, .. } => content,
        other => panic!("{path}: {other:?}"),
    }
}

fn counters_lose_no_update(listing_index: bool) {
    let tmp = tempfile::tempdir().unwrap();
    let fs = FaultFs::std();
    let store = sync_store(&fs, tmp.path());
    let m = Arc::new(handler(&store, listing_index));
    let files = 4;
    for f in 0..files {
        assert_eq!(m.create(&format!("/memories/c{f}"), "n").unwrap(), Create::Created);
    }
    assert!(matches!(m.view("/memories").unwrap(), View::Dir { .. }));
    let threads = 16;
    let each = 12;
    let before = store.stats();
    // Hold the first fsync until more commands have appended behind it, so sharing is certain
    // rather than likely; after that the threads run free.
    let _release = fs.release_on_drop(HANG);
    fs.hold_syncs();
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let m = m.clone();
            std::thread::spawn(move || {
                for i in 0..each {
                    let path = format!("/memories/c{}", (t + i) % files);
                    // Appending through str_replace: a lost update would drop a mark.
                    let got = m.str_replace(&path, "n", &format!("{t}.n")).unwrap();
                    assert!(matches!(got, StrReplace::Edited { .. }), "{got:?}");
                    if i % 4 == 0 {
                        assert!(matches!(m.view("/memories").unwrap(), View::Dir { .. }));
                    }
                }
            })
        })
        .collect();
    assert!(fs.wait_held(1, HANG), "no command reached its fsync");
    wait_appended(&store, before.seq + 3);
    fs.release_syncs();
    for h in handles {
        h.join().unwrap();
    }
    assert_fsyncs_shared(&before, &store.stats(), threads * each);
    let marks: usize = (0..files).map(|f| content(&m, &format!("/memories/c{f}")).matches('.').count()).sum();
    assert_eq!(marks as u64, threads * each, "lost updates");
    let scan = handler(&store, false);
    for path in ["/memories", "/memories/c0"] {
        assert_eq!(m.view(path).unwrap(), scan.view(path).unwrap(), "{path}");
    }
    assert_eq!(m.usage().unwrap(), scan.usage().unwrap());
}

#[test]
fn concurrent_str_replace_counters_share_fsyncs_without_the_index() {
    counters_lose_no_update(false);
}

#[test]
fn concurrent_str_replace_counters_share_fsyncs_with_the_index() {
    counters_lose_no_update(true);
}

#[test]
fn no_view_shows_a_commit_before_it_is_durable() {
    for listing_index in [true, false] {
        let tmp = tempfile::tempdir().unwrap();
        let fs = FaultFs::std();
        let store = sync_store(&fs, tmp.path());
        let m = Arc::new(handler(&store, listing_index));
        m.create("/memories/a", "old").unwrap();
        let before = m.view("/memories").unwrap(); // builds the index when on
        let usage = m.usage().unwrap();
        let _release = fs.release_on_drop(HANG);
        fs.hold_syncs();
        let writer = {
            let m = m.clone();
            std::thread::spawn(move || {
                m.create("/memories/b", "new").unwrap();
                m.str_replace("/memories/a", "old", "newer").unwrap()
            })
        };
        assert!(fs.wait_held(1, HANG), "the create never reached its fsync");
        assert!(!writer.is_finished(), "a command returned before its commit was durable");
        assert_eq!(m.view("/memories").unwrap(), before, "index {listing_index}");
        assert_eq!(m.view("/memories/b").unwrap(), View::NotFound, "index {listing_index}");
        assert_eq!(m.usage().unwrap(), usage, "index {listing_index}");
        // Writers decide on the newest state meanwhile: this create must see b.
        let racer = {
            let m = m.clone();
            std::thread::spawn(move || m.create("/memories/b", "again").unwrap())
        };
        wait_appended(&store, 2);
        fs.release_syncs();
        assert!(matches!(writer.join().unwrap(), StrReplace::Edited { .. }));
        assert_eq!(racer.join().unwrap(), Create::Exists, "index {listing_index}");
        assert_eq!(content(&m, "/memories/b"), "new");
        assert_eq!(content(&m, "/memories/a"), "newer");
        let scan = handler(&store, false);
        assert_eq!(m.view("/memories").unwrap(), scan.view("/memories").unwrap());
    }
}
