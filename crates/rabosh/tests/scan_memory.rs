//! Issue 36: a scan of every key kept every hint page it opened, decoded, for the life of the
//! store (about the hints' size again in the heap), and the mapped hint pages it read stayed
//! counted in the process's resident memory. A walk now holds a few decoded pages at a time
//! within the page cache's budget, and lets the mapped pages go as it reads. Measured as the
//! process's resident growth across one scan (Linux), in a test binary of its own with one
//! test, so nothing else moves it meanwhile.

#[cfg(target_os = "linux")]
#[path = "common/resident.rs"]
mod resident;

#[cfg(target_os = "linux")]
use resident::{opts, rss_kb};

#[cfg(target_os = "linux")]
const TEST: &str = "a_scan_of_everything_leaves_little_resident";

#[cfg(target_os = "linux")]
#[test]
fn a_scan_of_everything_leaves_little_resident() {
    // The child this test starts to write a store does only that.
    if resident::seed_if_child(60) {
        return;
    }
    check(false);
    check(true);
}

/// Resident KiB of the mapped hint files.
#[cfg(target_os = "linux")]
fn hint_rss_kb() -> u64 {
    let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
    let mut in_hint = false;
    let mut kb = 0;
    for line in smaps.lines() {
        if let Some(kb_field) = line.strip_prefix("Rss:") {
            if in_hint {
                kb += kb_field.trim().trim_end_matches("kB").trim().parse::<u64>().unwrap();
            }
        } else if line
            .split_whitespace()
            .next()
            .is_some_and(|t| t.contains('-') && t.chars().all(|c| c.is_ascii_hexdigit() || c == '-'))
        {
            // A mapping's first line: its address range, then what it maps.
            in_hint = line.trim_end().ends_with(".hint");
        }
    }
    kb
}

#[cfg(target_os = "linux")]
fn check(encrypted: bool) {
    let (dir, hint_kb) = resident::seeded_store(TEST, encrypted);
    assert!(hint_kb > 15_000, "the hints are large enough to see: {hint_kb} KiB");
    // A budget well under the hints' size, so what the scan keeps is told apart from them.
    rabosh::set_page_cache_bytes(2 << 20);
    let store = rabosh::Store::open(dir.path(), opts(encrypted)).unwrap();
    let snap = store.snapshot().unwrap();
    let before = rss_kb();
    let mut n = 0usize;
    snap.try_visit(b"", None, true, &mut |_, meta| {
        assert_eq!(meta.len(), 300);
        n += 1;
        std::ops::ControlFlow::Continue(())
    })
    .unwrap();
    assert_eq!(n, 60_000);
    let grown = rss_kb().saturating_sub(before);
    // A short listing (under the bytes a run reads between two releases) ends with the mapped
    // pages it read let go as well: none of the hints stays in place.
    let mut short = 0usize;
    snap.try_visit(b"key/00030000", Some(b"key/00032000"), true, &mut |_, _| {
        short += 1;
        std::ops::ControlFlow::Continue(())
    })
    .unwrap();
    assert_eq!(short, 2000);
    assert_eq!(hint_rss_kb(), 0, "encrypted {encrypted}: a listing left hint pages in place");
    // And so does a point read that opened a page.
    assert_eq!(snap.meta(b"key/00045678").unwrap(), Some(vec![45678u32 as u8; 300]));
    assert_eq!(hint_rss_kb(), 0, "encrypted {encrypted}: a point read left hint pages in place");
    // The cache's budget and a few MB of mapped hint between two releases may stay.
    assert!(grown < hint_kb / 2, "encrypted {encrypted}: a scan left {grown} KiB resident over {hint_kb} KiB of hints");
}
