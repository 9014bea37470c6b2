//! Engine benchmark (not a test): `cargo run --release -p rabosh --example bench [dir]`.
//! Durable commit latency against a raw append+fdatasync loop on the same disk in the same run,
//! get and scan throughput, open time and resident memory per key.

use rabosh::{Batch, Options, Store};
use std::io::Write;
use std::time::{Duration, Instant};

fn stats(mut v: Vec<Duration>) -> (Duration, Duration, Duration) {
    v.sort();
    (v[v.len() / 2], v[0], v[v.len() - 1])
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// Resident set in bytes (Linux); None elsewhere.
fn rss() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = s.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

/// Child mode: open a store in a fresh process and report resident growth per key.
fn measure_open(dir: &str) {
    let before = rss().unwrap_or(0);
    let t = Instant::now();
    let store = Store::open(dir, Options::default()).unwrap();
    let el = t.elapsed();
    let after = rss().unwrap_or(0);
    let keys = store.stats().keys;
    println!(
        "fresh-process open: {:.1} ms, resident growth {:.1} MiB = {:.0} B/key ({keys} keys)",
        us(el) / 1e3,
        (after - before) as f64 / 1048576.0,
        (after - before) as f64 / keys as f64
    );
}

fn main() {
    if std::env::args().nth(1).as_deref() == Some("--measure-open") {
        return measure_open(&std::env::args().nth(2).unwrap());
    }
    let base = std::env::args().nth(1).map(std::path::PathBuf::from);
    let tmp = tempfile::tempdir_in(base.as_deref().unwrap_or(&std::env::temp_dir())).unwrap();
    let n: usize = std::env::var("RABOSH_BENCH_COMMITS").ok().and_then(|s| s.parse().ok()).unwrap_or(500);

    // 1. Durable single-put commits (~300 B value), strictly alternating with raw appends of the
    //    same frame size to a file on the same disk, so both see the same device weather.
    let store = Store::open(tmp.path().join("commit"), Options::default()).unwrap();
    let value = vec![b'x'; 300];
    let mut eng = Vec::with_capacity(n);
    let mut raw = Vec::with_capacity(n);
    let mut rawf = std::fs::File::create(tmp.path().join("raw.log")).unwrap();
    let rawbuf = vec![7u8; 380];
    for i in 0..n {
        let t = Instant::now();
        rawf.write_all(&rawbuf).unwrap();
        rawf.sync_data().unwrap();
        raw.push(t.elapsed());
        let mut b = Batch::new();
        b.put(format!("memories/notes/{i}.md").into_bytes(), value.clone(), [1; 40]);
        let t = Instant::now();
        store.write(b).unwrap();
        eng.push(t.elapsed());
    }
    let (em, emin, emax) = stats(eng);
    let (rm, rmin, rmax) = stats(raw);
    println!("durable commit (1 put, 300 B): median {:.0} µs (min {:.0}, max {:.0})", us(em), us(emin), us(emax));
    println!("raw append+fdatasync (380 B):  median {:.0} µs (min {:.0}, max {:.0})", us(rm), us(rmin), us(rmax));
    println!("ratio engine/raw (median): {:.2}", em.as_secs_f64() / rm.as_secs_f64());
    drop(store);

    // 2. 50,000 × 4 KiB: load (buffered + sync), then get/scan throughput, open time, memory.
    let keys = 50_000usize;
    let dir = tmp.path().join("big");
    let t = Instant::now();
    {
        let store =
            Store::open(&dir, Options { durability: rabosh::Durability::Buffered, ..Options::default() }).unwrap();
        let v = vec![b'y'; 4096];
        for chunk in 0..keys / 500 {
            let mut b = Batch::new();
            for j in 0..500 {
                b.put(
                    format!("m:default:/memories/dir{:03}/file{:05}.md", (chunk * 500 + j) % 200, chunk * 500 + j)
                        .into_bytes(),
                    v.clone(),
                    [2; 40],
                );
            }
            store.write(b).unwrap();
        }
        store.sync().unwrap();
        store.close().unwrap();
    }
    println!("load {keys} × 4 KiB (buffered, 500/batch, then sync): {:.2} s", t.elapsed().as_secs_f64());

    let mut opens = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        let s = Store::open(&dir, Options::default()).unwrap();
        opens.push(t.elapsed());
        drop(s);
    }
    let (om, omin, omax) = stats(opens);
    println!(
        "open {keys} × 4 KiB: median {:.1} ms (min {:.1}, max {:.1})",
        us(om) / 1e3,
        us(omin) / 1e3,
        us(omax) / 1e3
    );

    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--measure-open", dir.to_str().unwrap()])
        .output()
        .unwrap();
    print!("{}", String::from_utf8_lossy(&out.stdout));
    let store = Store::open(&dir, Options::default()).unwrap();
    let snap = store.snapshot().unwrap();
    let all: Vec<Vec<u8>> = snap.range(b"", None).map(|(k, _)| k.to_vec()).collect();
    let t = Instant::now();
    let mut bytes = 0;
    for i in 0..20_000 {
        bytes += snap.get(&all[(i * 7919) % all.len()]).unwrap().unwrap().len();
    }
    let el = t.elapsed();
    println!(
        "get 4 KiB (page cache): {:.0} /s ({:.1} µs each, {} MiB)",
        20_000.0 / el.as_secs_f64(),
        us(el) / 20_000.0,
        bytes >> 20
    );
    let t = Instant::now();
    let mut listed = 0;
    for d in 0..200 {
        listed += snap.scan_prefix(format!("m:default:/memories/dir{d:03}/").as_bytes()).count();
    }
    let el = t.elapsed();
    println!(
        "prefix scan: {:.1} M entries/s (200 scans, {listed} entries, values read {})",
        listed as f64 / el.as_secs_f64() / 1e6,
        store.stats().values_read
    );
    let t = Instant::now();
    let c = store.compact().unwrap();
    println!("compact 200 MB live: {:.2} s ({} → {} bytes)", t.elapsed().as_secs_f64(), c.bytes_before, c.bytes_after);
}
