//! Open-path profile (not a test): where open time and resident memory go.
//!
//! `cargo run --release -p rabosh --example open_profile -- seed DIR flat|nested COUNT BYTES`
//! writes a store shaped like the project bench's (one commit per memory, `m:default:` keys,
//! 40-byte metadata); `... -- open DIR [ROUNDS]` opens it in this fresh process and prints the
//! open time and the resident growth per key (after the first open, which is what a process
//! that opens once pays).
//!
//! `unsafe`: `TRIM=1` calls glibc's malloc_trim directly, to measure what it gives back.
#![allow(unsafe_code)]

use rabosh::{Batch, Durability, Options, Store};
use std::time::Instant;

fn rss() -> u64 {
    let s = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    s.split_whitespace().nth(1).and_then(|p| p.parse::<u64>().ok()).unwrap_or(0) * 4096
}

/// CPU time this thread has run, in ns (Linux): open's cost without the machine's other load.
fn cpu_ns() -> u64 {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").unwrap_or_default();
    s.split_whitespace().next().and_then(|t| t.parse().ok()).unwrap_or(0)
}

fn path(layout: &str, i: usize) -> String {
    let name = format!("note{i:05}.md");
    match layout {
        "flat" => format!("/memories/{name}"),
        _ => {
            let leaf = i % 500;
            format!("/memories/d{}/e{}/f{}/{name}", leaf / 50, (leaf / 5) % 10, leaf % 5)
        }
    }
}

fn seed(dir: &str, layout: &str, count: usize, bytes: usize) {
    let store = Store::open(dir, Options { durability: Durability::Buffered, ..Options::default() }).unwrap();
    for i in 0..count {
        let mut meta = Vec::with_capacity(40);
        for f in [bytes as u64, (bytes / 64) as u64, 1_700_000_000_000, 1_700_000_000_000, 0] {
            meta.extend_from_slice(&f.to_le_bytes());
        }
        let mut b = Batch::new();
        b.put(format!("m:default:{}", path(layout, i)).into_bytes(), vec![b'x'; bytes], meta);
        store.write(b).unwrap();
    }
    store.close().unwrap();
}

fn open(dir: &str, rounds: usize) {
    for round in 0..rounds {
        let before = rss();
        let (t, cpu) = (Instant::now(), cpu_ns());
        let store = Store::open(dir, Options::default()).unwrap();
        // What the bench's first view needs: one point read (metadata and value).
        let first = b"m:default:/memories/note00000.md";
        let snap = store.snapshot().unwrap();
        let found = snap.meta(first).unwrap().is_some() && snap.get(first).unwrap().is_some();
        let el = t.elapsed();
        let cpu = cpu_ns() - cpu;
        // The key directory, if open left it to build (waits for the thread building it).
        let (tb, cb) = (Instant::now(), cpu_ns());
        // NO_BUILD=1: leave it to the thread open started (profile open alone: `perf report --comm`).
        let keys = if std::env::var_os("NO_BUILD").is_some() { 0 } else { snap.len() };
        let (build_el, build_cpu) = (tb.elapsed(), cpu_ns() - cb);
        drop(snap);
        let mut after = rss();
        // glibc only: musl and Windows have no malloc_trim (this example must still link there,
        // since `cargo test` builds examples).
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        if std::env::var_os("TRIM").is_some() {
            unsafe extern "C" {
                fn malloc_trim(pad: usize) -> i32;
            }
            // SAFETY: glibc's malloc_trim only returns free heap pages to the kernel.
            unsafe { malloc_trim(0) };
            println!("  before trim {:.1} MiB", after.saturating_sub(before) as f64 / 1048576.0);
            after = rss();
        }
        println!(
            "round {round}: open + first get ({found}) {:.2} ms wall, {:.2} ms CPU; then the whole key directory {:.2} ms wall, {:.2} ms CPU on this thread; resident growth {:.1} MiB = {:.0} B/key ({keys} keys)",
            el.as_secs_f64() * 1e3,
            cpu as f64 / 1e6,
            build_el.as_secs_f64() * 1e3,
            build_cpu as f64 / 1e6,
            after.saturating_sub(before) as f64 / 1048576.0,
            after.saturating_sub(before) as f64 / keys.max(1) as f64
        );
        if std::env::var_os("NO_CLOSE").is_some() {
            // As after a crash: the next open finds no hint for the active segment.
            std::process::exit(0);
        }
        store.close().unwrap();
    }
}

fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    match a.first().map(String::as_str) {
        Some("seed") => seed(&a[1], &a[2], a[3].parse().unwrap(), a[4].parse().unwrap()),
        Some("open") => open(&a[1], a.get(2).map_or(1, |r| r.parse().unwrap())),
        _ => eprintln!("usage: open_profile seed DIR flat|nested COUNT BYTES | open DIR [ROUNDS]"),
    }
}
