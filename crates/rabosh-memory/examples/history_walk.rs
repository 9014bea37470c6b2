//! A full walk of a long history, page by page (issue 19 item 9): 50,000 versions in pages of 100,
//! newest first, side by side with the algorithm `versions()` had before (every page scanned the
//! scope's whole history forward, kept what was below the cursor, and took the newest 100),
//! written here over the same public read view.
//!
//! `cargo run --release -p rabosh-memory --example history_walk`

use std::sync::Arc;
use std::time::Instant;

use rabosh_memory::{
    Backend, Durability, EmbeddedOptions, EmbeddedStore, HistoryOptions, Memories, MemoryOptions, VersionQuery,
};

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let options = EmbeddedOptions { durability: Durability::Buffered, ..Default::default() };
    let store = EmbeddedStore::open(dir.path().join("store"), options).unwrap();
    let m = Memories::new(store.clone() as Arc<dyn Backend>, MemoryOptions::default())
        .unwrap()
        .with_history(HistoryOptions::default());
    for n in 0..50_000 {
        m.create(&format!("/memories/{}/{n}.md", n % 100), "x").unwrap();
    }
    for _ in 0..3 {
        let start = Instant::now();
        let view = store.read().unwrap();
        let (mut before, mut seen) = (None::<u128>, 0);
        loop {
            let mut all = Vec::new();
            view.scan_prefix(b"h:default:v:", &mut |k, m| {
                let v = rabosh_memory::Version::decode(k, m).unwrap();
                if before.is_none_or(|b| v.id < b) {
                    all.push(v.id);
                }
                std::ops::ControlFlow::Continue(())
            })
            .unwrap();
            let more = all.len() > 100;
            let page: Vec<u128> = all.into_iter().rev().take(100).collect();
            seen += page.len();
            if !more {
                break;
            }
            before = page.last().copied();
        }
        println!("before (rescan per page): {seen} versions in {:.3} s", start.elapsed().as_secs_f64());
        let start = Instant::now();
        let (mut cursor, mut seen) = (None, 0);
        loop {
            let page = m.versions(&VersionQuery { limit: Some(100), cursor, ..Default::default() }).unwrap();
            seen += page.data.len();
            match page.next_cursor {
                Some(c) => cursor = Some(c),
                None => break,
            }
        }
        println!("after (from the cursor):  {seen} versions in {:.3} s", start.elapsed().as_secs_f64());
    }
}
