//! What the listing index costs, measured without the binding: live heap bytes the index adds
//! for the bench's nested shape (a counting global allocator), and the work of deleting
//! 1,000-memory subtrees with the index on and off (run under
//! `valgrind --tool=callgrind --toggle-collect='*delete_subtrees*'` for instruction counts).
//! `cargo run --release -p rabosh-memory --example index_cost [-- COUNT [off|on] | list]`: the delete
//! part with the index off, on, or (by default) both.
//!
//! `unsafe`: the counting allocator is a `GlobalAlloc` over the system one.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use rabosh_memory::{Durability, EmbeddedOptions, EmbeddedStore, Memories, MemoryOptions};

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(by: usize) {
    let now = LIVE.fetch_add(by, Ordering::Relaxed) + by;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

/// Resident set size from /proc (Linux), 0 elsewhere.
fn rss() -> usize {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    statm.split_whitespace().nth(1).and_then(|p| p.parse::<usize>().ok()).unwrap_or(0) * 4096
}

// SAFETY: every call forwards to the system allocator unchanged; only the byte count is added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        grew(layout.size());
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        grew(new_size);
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// The bench's nested layout (bench/workload.ts): 500 leaf directories, 10 × 10 × 5.
fn nested_path(i: usize) -> String {
    let leaf = i % 500;
    format!("/memories/d{}/e{}/f{}/note{i:05}.md", leaf / 50, (leaf / 5) % 10, leaf % 5)
}

fn handler(dir: &std::path::Path, listing_index: bool) -> Memories {
    let options = EmbeddedOptions { durability: Durability::Buffered, ..Default::default() };
    let store = EmbeddedStore::open(dir, options).expect("open");
    Memories::new(store, MemoryOptions { listing_index, ..Default::default() }).expect("handler")
}

#[inline(never)]
fn delete_subtrees(m: &Memories, trees: usize) {
    for j in 0..trees {
        m.delete(&format!("/memories/t{j}")).expect("delete");
    }
}

#[inline(never)]
fn list_flat(m: &Memories, times: usize) {
    for _ in 0..times {
        std::hint::black_box(m.view("/memories").expect("list"));
    }
}

fn main() {
    if std::env::args().nth(1).as_deref() == Some("list") {
        // `list`: ten listings of a flat directory of 5,000 (callgrind: --toggle-collect='*list_flat*').
        let tmp = tempfile::tempdir().expect("temp dir");
        let m = handler(tmp.path(), true);
        for i in 0..5000 {
            m.create(&format!("/memories/note{i:05}.md"), "x\n").expect("create");
        }
        list_flat(&m, 1);
        list_flat(&m, 10);
        return;
    }
    let count: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(50_000);
    let body = "x".repeat(63) + "\n";
    let tmp = tempfile::tempdir().expect("temp dir");
    {
        let m = handler(tmp.path(), false);
        for i in 0..count {
            m.create(&nested_path(i), &body).expect("create");
        }
    }
    for listing_index in [true, false] {
        let m = handler(tmp.path(), listing_index);
        m.view("/memories/d0/e0/f0/note00000.md").expect("view");
        let (before, rss_before) = (LIVE.load(Ordering::Relaxed), rss());
        PEAK.store(before, Ordering::Relaxed);
        let t = Instant::now();
        m.view("/memories").expect("list");
        let took = t.elapsed();
        let (live, peak, resident) =
            (LIVE.load(Ordering::Relaxed) - before, PEAK.load(Ordering::Relaxed) - before, rss() - rss_before);
        let per = |b: usize| b as f64 / count as f64;
        println!(
            "first view /memories of {count} nested memories, index {listing_index}: {took:?}; heap {live} B live after \
             ({:.1} B per memory), {peak} B at the peak ({:.1}), RSS +{resident} B ({:.1})",
            per(live),
            per(peak),
            per(resident)
        );
    }

    let trees = 5;
    let modes = match std::env::args().nth(2).as_deref() {
        Some("off") => vec![false],
        Some("on") => vec![true],
        _ => vec![false, true],
    };
    for listing_index in modes {
        let dir = tmp.path().join(format!("subtrees-{listing_index}"));
        let m = handler(&dir, listing_index);
        for j in 0..trees {
            for i in 0..1000 {
                m.create(&format!("/memories/t{j}/g{}/note{i:05}.md", i % 10), &body).expect("create");
            }
        }
        m.view("/memories").expect("list");
        let t = Instant::now();
        delete_subtrees(&m, trees);
        println!("delete of {trees} 1,000-memory subtrees, index {listing_index}: {:?}", t.elapsed());
    }
}
