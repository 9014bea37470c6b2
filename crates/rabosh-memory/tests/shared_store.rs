//! Shared mode of the embedded store: two handles on one directory (separate OS locks and
//! separate in-memory state, as two processes would have) edit the same memories at once. No
//! update is lost, and each handle's listing index and usage follow the other's commits.

mod common;

use std::sync::Arc;

use common::content;
use rabosh_memory::{EmbeddedOptions, EmbeddedStore, Memories, MemoryOptions, StrReplace, View};

fn open(dir: &std::path::Path) -> Arc<EmbeddedStore> {
    let options = EmbeddedOptions { shared: true, segment_bytes: 16 << 10, ..Default::default() };
    EmbeddedStore::open(dir, options).unwrap()
}

fn handler(store: &Arc<EmbeddedStore>, listing_index: bool) -> Memories {
    Memories::new(store.clone(), MemoryOptions { listing_index, ..MemoryOptions::default() }).unwrap()
}

#[test]
fn two_handles_lose_no_update_and_indexes_follow_each_other() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    let (a, b) = (open(&dir), open(&dir));
    let (ia, ib) = (Arc::new(handler(&a, true)), Arc::new(handler(&b, true)));
    ia.create("/memories/counter", "n").unwrap();
    // Build both indexes before the race, so they must be carried forward, not rebuilt.
    assert!(matches!(ia.view("/memories").unwrap(), View::Dir { .. }));
    assert!(matches!(ib.view("/memories").unwrap(), View::Dir { .. }));
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let m = if t % 2 == 0 { ia.clone() } else { ib.clone() };
            std::thread::spawn(move || {
                for i in 0..40 {
                    let got = m.str_replace("/memories/counter", "n", &format!("{t}n")).unwrap();
                    assert!(matches!(got, StrReplace::Edited { .. }));
                    m.create(&format!("/memories/t{t}/{i}"), "abc").unwrap();
                    if i % 5 == 0 {
                        m.delete(&format!("/memories/t{t}/{}", i / 2)).unwrap();
                    }
                    assert!(matches!(m.view("/memories").unwrap(), View::Dir { .. }));
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(content(&ib, "/memories/counter").unwrap().len(), 161, "an update was lost");
    a.compact().unwrap();
    ia.create("/memories/after-compaction", "x").unwrap();
    let scan = handler(&b, false);
    for path in ["/memories", "/memories/t1", "/memories/t2"] {
        let want = scan.view(path).unwrap();
        assert_eq!(ia.view(path).unwrap(), want, "{path} through the first handle's index");
        assert_eq!(ib.view(path).unwrap(), want, "{path} through the second handle's index");
    }
    assert_eq!(ia.usage().unwrap(), scan.usage().unwrap());
    assert_eq!(ib.usage().unwrap(), scan.usage().unwrap());
    assert_eq!(content(&ib, "/memories/after-compaction").as_deref(), Some("x"));
}

/// The JS thread's cheap view never waits for another process's commit lock: with that
/// process's commit still to catch up on, it declines (the caller then views off-thread), and
/// once caught up it answers again, with the other's change.
#[test]
fn a_cheap_view_declines_while_another_handles_commit_is_unseen() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    let (a, b) = (open(&dir), open(&dir));
    let (ma, mb) = (handler(&a, false), handler(&b, false));
    ma.create("/memories/note", "one").unwrap();
    assert!(ma.view_if_cheap("/memories/note", 1 << 16, 1024).unwrap().is_some(), "own commit");
    assert!(mb.view_if_cheap("/memories/note", 1 << 16, 1024).unwrap().is_none(), "a's commit unseen by b");
    let View::File { content, .. } = mb.view("/memories/note").unwrap() else { panic!("a file") };
    assert_eq!(content, "one");
    assert!(mb.view_if_cheap("/memories/note", 1 << 16, 1024).unwrap().is_some(), "caught up");
}
