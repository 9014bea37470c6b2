//! Encryption cost, side by side in one run (not a test):
//! `cargo run --profile cross -p rabosh --example encryption_bench [dir]`.
//! Each row runs plain then encrypted on the same disk, alternating rounds, and prints the
//! medians and encrypted ÷ plain: a durable commit, a buffered put, a point read of a 1 KiB value,
//! a listing of 5,000 keys' metadata, and open + first read of a 5,000-key store.

use rabosh::{Batch, Durability, Encryption, Options, Store};
use std::time::{Duration, Instant};

const KEYS: usize = 5000;

fn opts(encrypted: bool, durability: Durability) -> Options {
    Options { durability, encryption: encrypted.then(|| Encryption::new([9; 32])), ..Options::default() }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn key(i: usize) -> Vec<u8> {
    format!("m:default:/memories/project-{:02}/note{i:05}.md", i % 37).into_bytes()
}

/// One measurement for each mode: (plain, encrypted).
fn row(name: &str, rounds: usize, mut f: impl FnMut(bool) -> Duration) {
    let (mut p, mut e) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        p.push(f(false));
        e.push(f(true));
    }
    let (p, e) = (median(p), median(e));
    println!(
        "{name:<40} plain {:>9.1} µs   encrypted {:>9.1} µs   ratio {:.2}",
        p.as_secs_f64() * 1e6,
        e.as_secs_f64() * 1e6,
        e.as_secs_f64() / p.as_secs_f64()
    );
}

fn main() {
    let base = std::env::args().nth(1).map(std::path::PathBuf::from);
    let tmp = match &base {
        Some(b) => tempfile::tempdir_in(b).unwrap(),
        None => tempfile::tempdir().unwrap(),
    };
    let value = vec![b'x'; 1024];
    let meta = vec![7u8; 40];
    // Stores of KEYS keys, one per mode.
    for enc in [false, true] {
        let s = Store::open(tmp.path().join(format!("load-{enc}")), opts(enc, Durability::Buffered)).unwrap();
        for i in 0..KEYS {
            let mut b = Batch::new();
            b.put(key(i), value.clone(), meta.clone());
            s.write(b).unwrap();
        }
        s.close().unwrap();
    }
    let commit =
        [false, true].map(|e| Store::open(tmp.path().join(format!("c-{e}")), opts(e, Durability::Sync)).unwrap());
    let mut n = 0;
    row("durable commit (1 put, 300 B)", 201, |e| {
        n += 1;
        let mut b = Batch::new();
        b.put(key(n % KEYS), vec![b'y'; 300], meta.clone());
        let t = Instant::now();
        commit[e as usize].write(b).unwrap();
        t.elapsed()
    });
    let loaded = [false, true]
        .map(|e| Store::open(tmp.path().join(format!("load-{e}")), opts(e, Durability::Buffered)).unwrap());
    row("buffered put (1 KiB), ×100", 31, |e| {
        let t = Instant::now();
        for i in 0..100 {
            let mut b = Batch::new();
            b.put(key(i), value.clone(), meta.clone());
            loaded[e as usize].write(b).unwrap();
        }
        t.elapsed()
    });
    row("point read (1 KiB value), ×1000", 31, |e| {
        let s = loaded[e as usize].snapshot().unwrap();
        let t = Instant::now();
        for i in 0..1000 {
            assert_eq!(s.get(&key(i * 5)).unwrap().unwrap().len(), 1024);
        }
        t.elapsed()
    });
    row("listing 5,000 keys with metadata", 31, |e| {
        let s = loaded[e as usize].snapshot().unwrap();
        let t = Instant::now();
        assert_eq!(s.range(b"", None).count(), KEYS);
        t.elapsed()
    });
    drop(loaded);
    row("open 5,000 keys + first read", 21, |e| {
        let t = Instant::now();
        let s = Store::open(tmp.path().join(format!("load-{e}")), opts(e, Durability::Buffered)).unwrap();
        s.snapshot().unwrap().get(&key(17)).unwrap().unwrap();
        let el = t.elapsed();
        s.close().unwrap();
        el
    });
}
