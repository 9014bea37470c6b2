//! The key directory's build right after a lazy open, side by side in one run (not a test):
//! what a listing straight after open waits for (issue 21's "listing right after open" row,
//! without the memory layer). `cargo run --release -p rabosh --example keydir_build_bench [rounds]`.
//! A store of 5,000 keys (1 KiB values, 40-byte metadata, one commit each, closed cleanly so
//! its segment has a hint) plain and encrypted; each round opens each (no background build)
//! and times the first listing's build. Rounds alternate the two; prints medians, encrypted ÷
//! plain, and the process's CPU time per build (10 ms ticks, summed over the rounds).

use rabosh::testing::set_background_build;
use rabosh::{Batch, Durability, Encryption, Options, Store};
use std::path::Path;
use std::time::{Duration, Instant};

const KEYS: usize = 5000;

fn opts(encrypted: bool) -> Options {
    Options {
        durability: Durability::Buffered,
        encryption: encrypted.then(|| Encryption::new([9; 32])),
        ..Options::default()
    }
}

fn key(i: usize) -> Vec<u8> {
    format!("m:default:/memories/project-{:02}/note{i:05}.md", i % 37).into_bytes()
}

fn seed(dir: &Path, encrypted: bool) {
    let s = Store::open(dir, opts(encrypted)).unwrap();
    let (value, meta) = (vec![b'x'; 1024], vec![7u8; 40]);
    for i in 0..KEYS {
        let mut b = Batch::new();
        b.put(key(i), value.clone(), meta.clone());
        s.write(b).unwrap();
    }
    s.close().unwrap();
}

/// This process's user + system CPU time (every thread).
fn cpu() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let fields: Vec<&str> = stat.rsplit(')').next().unwrap_or("").split_whitespace().collect();
    let ticks = |i: usize| fields.get(i).and_then(|f| f.parse::<u64>().ok()).unwrap_or(0);
    // utime and stime are fields 14 and 15 of stat, 12 and 13 after the command's ')'.
    Duration::from_millis((ticks(11) + ticks(12)) * 10)
}

/// Opens `dir` and times its first listing's build (wall, CPU).
fn build(dir: &Path, encrypted: bool) -> (Duration, Duration) {
    set_background_build(false);
    let s = Store::open(dir, opts(encrypted)).unwrap();
    let snap = s.snapshot().unwrap();
    assert!(!snap.is_built(), "opened lazily from the hint");
    let (t, c) = (Instant::now(), cpu());
    assert_eq!(snap.range(b"", None).count(), KEYS);
    let took = (t.elapsed(), cpu() - c);
    drop(snap);
    s.close().unwrap();
    took
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let rounds: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(101);
    let tmp = tempfile::tempdir().unwrap();
    let (plain, enc) = (tmp.path().join("plain"), tmp.path().join("enc"));
    seed(&plain, false);
    seed(&enc, true);
    let modes: [(&str, &Path, bool); 2] = [("plain", &plain, false), ("encrypted", &enc, true)];
    let mut wall = vec![Vec::new(); 2];
    let mut cpus = [Duration::ZERO; 2];
    for r in 0..rounds {
        for k in 0..2 {
            let m = (k + r) % 2;
            let (w, c) = build(modes[m].1, modes[m].2);
            wall[m].push(w);
            cpus[m] += c;
        }
    }
    let plain_wall = median(wall[0].clone());
    for (m, (name, ..)) in modes.iter().enumerate() {
        let w = median(wall[m].clone());
        println!(
            "{name:<24} build {:>8.1} µs (median of {rounds})   ÷ plain {:.2}   CPU {:>8.1} µs a build",
            w.as_secs_f64() * 1e6,
            w.as_secs_f64() / plain_wall.as_secs_f64(),
            cpus[m].as_secs_f64() * 1e6 / rounds as f64
        );
    }
}
