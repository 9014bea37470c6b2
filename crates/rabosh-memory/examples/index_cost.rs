//! What the listing index costs, measured without the binding: live heap bytes the index adds
//! for the bench's nested shape (a counting global allocator), and the work of deleting
//! 1,000-memory subtrees with the index on and off (run under
//! `valgrind --tool=callgrind --toggle-collect='*delete_subtrees*'` for instruction counts).
//! `cargo run --release -p rabosh-memory --example index_cost [-- COUNT [off|on]]`: the delete
//! part with the index off, on, or (by default) both.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use rabosh_memory::{Durability, EmbeddedOptions, EmbeddedStore, Memories, MemoryOptions};

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call forwards to the system allocator unchanged; only the byte count is added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(new_size, Ordering::Relaxed);
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

fn main() {
    let count: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(50_000);
    let body = "x".repeat(63) + "\n";
    let tmp = tempfile::tempdir().expect("temp dir");
    {
        let m = handler(tmp.path(), false);
        for i in 0..count {
            m.create(&nested_path(i), &body).expect("create");
        }
    }
    let m = handler(tmp.path(), true);
    m.view("/memories/d0/e0/f0/note00000.md").expect("view");
    let before = LIVE.load(Ordering::Relaxed);
    let t = Instant::now();
    m.view("/memories").expect("list");
    let built = t.elapsed();
    let index = LIVE.load(Ordering::Relaxed) - before;
    println!(
        "index of {count} nested memories: {index} B live ({:.1} B per memory, {:.2} MiB per 100,000), built in {built:?}",
        index as f64 / count as f64,
        index as f64 / count as f64 * 100_000.0 / 1048576.0
    );
    drop(m);

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
