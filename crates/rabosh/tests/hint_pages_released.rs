//! Issue 36: open reads every byte of a mapped hint to check it, which left the whole of every
//! hint counted in the process's resident memory (270 MB of a million-key store's hints) where
//! reads then touch a few pages; an encrypted store's paged hints were read whole into the heap.
//! Open now lets the checked pages go and maps paged hints too; reads map back what they touch.
//! Measured as the process's resident growth across one open (Linux), in a test binary of its
//! own with one test, so nothing else moves it meanwhile.

#[cfg(target_os = "linux")]
#[path = "common/resident.rs"]
mod resident;

#[cfg(target_os = "linux")]
use resident::{opts, rss_kb};

#[cfg(target_os = "linux")]
const TEST: &str = "open_leaves_the_checked_hints_out_of_resident_memory";

#[cfg(target_os = "linux")]
#[test]
fn open_leaves_the_checked_hints_out_of_resident_memory() {
    // The child this test starts to write a store does only that.
    if resident::seed_if_child(40) {
        return;
    }
    check(false);
    check(true);
}

#[cfg(target_os = "linux")]
fn check(encrypted: bool) {
    // Written by another process: the heap this one has not grown by writing it can only grow
    // by what open keeps.
    let (dir, hint_kb) = resident::seeded_store(TEST, encrypted);
    assert!(hint_kb > 10_000, "the hints are large enough to see: {hint_kb} KiB");
    let before = rss_kb();
    let store = rabosh::Store::open(dir.path(), opts(encrypted)).unwrap();
    let grown = rss_kb().saturating_sub(before);
    assert!(grown < hint_kb / 4, "encrypted {encrypted}: open left {grown} KiB of {hint_kb} KiB of hints resident");
    // Reads still answer from the released pages.
    let snap = store.snapshot().unwrap();
    assert_eq!(snap.meta(b"key/00012345").unwrap(), Some(vec![12345u32 as u8; 300]));
    assert_eq!(snap.range(b"key/0003", Some(b"key/0004")).count(), 10_000);
}
