//! Handlers shared between threads: read-modify-write commands never lose an update, and the
//! shared index ends where a fresh scan does.

mod common;

use std::sync::Arc;

use common::{Fixture, content, fixture};
use rabosh_memory::{Insert, StrReplace, View};

fn concurrent_edits_lose_nothing_and_index_stays_exact(fx: &Fixture) {
    let scan = Arc::new(fx.default_handler());
    let indexed = Arc::new(fx.handler(|o| o.listing_index = true));
    scan.create("/memories/log", "").unwrap();
    scan.create("/memories/counter", "n").unwrap();
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let m = if t % 2 == 0 { scan.clone() } else { indexed.clone() };
            std::thread::spawn(move || {
                for i in 0..60 {
                    assert_eq!(m.insert("/memories/log", Some(0), &format!("{t}-{i}")).unwrap(), Insert::Edited);
                    // Appending through str_replace: a lost update would drop a mark.
                    let got = m.str_replace("/memories/counter", "n", &format!("{t}n")).unwrap();
                    assert!(matches!(got, StrReplace::Edited { .. }));
                    m.create(&format!("/memories/t{t}/deep/x/{i}"), "abc").unwrap();
                    if i % 5 == 0 {
                        m.delete(&format!("/memories/t{t}/deep/x/{}", i / 2)).unwrap();
                    }
                    assert!(matches!(m.view("/memories").unwrap(), View::Dir { .. }));
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(content(&scan, "/memories/log").unwrap().lines().count(), 240);
    assert_eq!(content(&scan, "/memories/counter").unwrap().len(), 241);
    for path in ["/memories", "/memories/t1", "/memories/t2/deep"] {
        assert_eq!(scan.view(path).unwrap(), indexed.view(path).unwrap(), "{path}");
    }
    assert_eq!(scan.usage().unwrap(), indexed.usage().unwrap());
}

#[test]
fn view_at_a_pinned_snapshot_ignores_later_commits() {
    let fx = fixture();
    let m = fx.handler(|o| o.listing_index = true);
    m.create("/memories/a", "old").unwrap();
    let snap = fx.embedded().snapshot().unwrap();
    m.delete("/memories/a").unwrap();
    m.create("/memories/b", "new").unwrap();
    assert_eq!(m.view_at(&snap, "/memories/a").unwrap(), common::file("old"));
    assert_eq!(m.view_at(&snap, "/memories/b").unwrap(), View::NotFound);
    assert_eq!(m.view("/memories/a").unwrap(), View::NotFound);
}

over_backends!(concurrent_edits_lose_nothing_and_index_stays_exact,);

#[test]
fn a_pinned_snapshot_does_not_keep_a_dropped_store_locked() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    let store = rabosh_memory::EmbeddedStore::open(&dir, rabosh_memory::EmbeddedOptions::default()).unwrap();
    let m = rabosh_memory::Memories::new(store.clone(), rabosh_memory::MemoryOptions::default()).unwrap();
    m.create("/memories/a", "pinned").unwrap();
    let snap = store.snapshot().unwrap();
    drop(m);
    drop(store);
    let reopened = rabosh_memory::EmbeddedStore::open(&dir, rabosh_memory::EmbeddedOptions::default()).unwrap();
    let m = rabosh_memory::Memories::new(reopened, rabosh_memory::MemoryOptions::default()).unwrap();
    assert_eq!(m.view_at(&snap, "/memories/a").unwrap(), common::file("pinned"));
    assert_eq!(m.view_at(&snap, "/memories").unwrap(), m.view("/memories").unwrap());
}
