//! Issue 19: a cheap view on the JS thread of one process waited up to 145 ms while another
//! process compacted. perf's `sched_switch` stacks of that JS thread showed the wait: a `calloc`
//! in the view's napi call blocked on glibc's arena lock (`__lll_lock_wait_private`), held by
//! `malloc_trim`, which walks and madvises every free chunk of each arena under its lock. A
//! shared catch-up that finds the MANIFEST replaced reloads from hints and builds the key
//! directory a moment later on a thread of its own — which then trimmed the heap, while the
//! process serves. The build after a reload must leave the heap alone (open's build still trims:
//! nothing is served yet). Counted, not timed: one test in its own binary, so no other test's
//! open moves the process-wide count meanwhile.

use rabosh::{Batch, Durability, Options, Store};

fn shared() -> Options {
    Options { shared: true, durability: Durability::Sync, segment_bytes: 4096, ..Options::default() }
}

fn put(store: &Store, i: u32, round: u32) {
    let mut b = Batch::new();
    b.put(format!("k{i:04}").into_bytes(), vec![round as u8; 300], &b""[..]);
    store.write(b).unwrap();
}

#[test]
fn the_key_directory_built_after_a_reload_does_not_trim_the_heap() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    let a = Store::open(&dir, shared()).unwrap();
    let b = Store::open(&dir, shared()).unwrap();
    for round in 0..3 {
        for i in 0..100 {
            put(&b, i, round);
        }
    }
    let _ = a.snapshot().unwrap();
    // b compacts: the MANIFEST is replaced, and a's next read reloads what it lists.
    b.compact().unwrap();
    let before = rabosh_testkit::heap_trims();
    let snap = a.snapshot().unwrap();
    assert!(!snap.is_built(), "the reload answers from hints and leaves the map to build");
    assert_eq!(snap.scan_prefix(b"k").count(), 100);
    assert!(!snap.is_built(), "nor does a scan: it merges the hints");
    assert_eq!(snap.get(b"k0007").unwrap().as_deref(), Some(&[2u8; 300][..]));
    assert_eq!(rabosh_testkit::heap_trims(), before, "a build after a reload trimmed the heap");
}
