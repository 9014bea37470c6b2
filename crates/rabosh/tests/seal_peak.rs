//! Issue 36 §1: sealing a segment must not hold the whole segment in memory at once. The seal
//! streams the segment's records, in key order, from the key directory into the hint's pages and
//! the file; what it keeps is the hint's directory (a first key a page) and a block of pages. A
//! counting allocator measures the most heap the commit that seals adds over what was live before
//! it: it must not grow with the number of keys in the segment.
//!
//! One test in this binary: the allocator's counts are global to the process.

// A global allocator is an `unsafe impl` passing each call on to the system's.
#![allow(unsafe_code)]

use rabosh::{Batch, Encryption, Options, Store};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(by: usize) {
    let now = LIVE.fetch_add(by, Ordering::Relaxed) + by;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

// SAFETY: every call is passed on to the system allocator unchanged; only counts are kept.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract, passed on.
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            if new_size >= layout.size() {
                grew(new_size - layout.size());
            } else {
                LIVE.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
            }
        }
        p
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

const PER_COMMIT: u32 = 100;
const VALUE: usize = 100;

fn hints(dir: &std::path::Path) -> usize {
    let files = std::fs::read_dir(dir).unwrap().filter_map(Result::ok);
    files.filter(|e| e.file_name().to_string_lossy().ends_with(".hint")).count()
}

/// The largest heap a commit that sealed a segment took above what was live before it, over a
/// run of commits that fills segments of about `keys` keys (each commit also writes zeros ahead
/// of the log, up to 1 MiB: the segments are larger than that, so every seal's commit does).
fn seal_peak(keys: u32, encrypted: bool) -> usize {
    let dir = tempfile::tempdir().unwrap();
    // A put of a 13-byte key and a 100-byte value takes under 160 bytes of frame.
    let opts = Options {
        segment_bytes: u64::from(keys) * 160,
        encryption: encrypted.then(|| Encryption::new([9; 32])),
        ..Options::default()
    };
    let store = Store::open(dir.path(), opts).unwrap();
    let (mut largest, mut seals) = (0, 0);
    for start in (0..keys * 2).step_by(PER_COMMIT as usize) {
        let mut b = Batch::new();
        for i in start..start + PER_COMMIT {
            b.put(format!("k/{i:09}").into_bytes(), vec![7; VALUE], vec![1]);
        }
        let before = LIVE.load(Ordering::Relaxed);
        PEAK.store(before, Ordering::Relaxed);
        store.write(b).unwrap();
        let peak = PEAK.load(Ordering::Relaxed).saturating_sub(before);
        if hints(dir.path()) > seals {
            seals += 1;
            largest = largest.max(peak);
        }
    }
    assert!(seals >= 1, "the run sealed no segment");
    store.close().unwrap();
    largest
}

#[test]
fn a_seal_holds_no_more_for_a_larger_segment() {
    for encrypted in [false, true] {
        let small = seal_peak(10_000, encrypted);
        let large = seal_peak(80_000, encrypted);
        eprintln!(
            "encrypted {encrypted}: a seal's commit peaked {small} B above before at 10,000 keys, {large} B at 80,000"
        );
        // Gathering the segment's records whole cost a few hundred bytes a key; what a seal
        // keeps that grows with the segment (the hint's directory and the run read back: a
        // first key and a few words a page of 64 records) is a few bytes a key.
        let more = large.saturating_sub(small);
        assert!(
            more < 70_000 * 8,
            "encrypted {encrypted}: a seal of 80,000 keys took {more} B more at its peak than one of 10,000 ({large} against {small})"
        );
    }
}
