//! Where a store's disk goes, by key kind: imports `n` memories of the scale bench's shape
//! (bench/scale-plan.ts `scaleEntries`: directories of 10 subdirectories × 100 files of about
//! 200 B, in chunks of 50,000), closes, then counts every live key's bytes by its key space and
//! what its segment record costs (17 B of op header + key + 4 B meta length + meta + value), beside
//! the files' sizes. `cargo run --release -p rabosh-memory --example disk_bytes -- DIR [N]`.

use std::collections::BTreeMap;
use std::sync::Arc;

use rabosh_memory::{Durability, EmbeddedOptions, EmbeddedStore, Memories, MemoryOptions};

const CHUNK: usize = 50_000;

fn entry(i: usize, filler: &str) -> (String, String) {
    let (d, s, f) = (i / 1_000, (i / 100) % 10, i % 100);
    (format!("/memories/d{d:04}/s{s}/f{f:03}.md"), format!("memory {i}: {filler}\n"))
}

#[derive(Default)]
struct Kind {
    keys: u64,
    key_bytes: u64,
    meta_bytes: u64,
    value_bytes: u64,
}

fn main() {
    let mut args = std::env::args().skip(1);
    let dir = std::path::PathBuf::from(args.next().expect("a directory for the store"));
    let n: usize = args.next().map_or(1_000_000, |s| s.parse().expect("a count"));
    let filler: String = "lorem ipsum dolor sit amet ".repeat(7).chars().take(180).collect();
    let started = std::time::Instant::now();
    {
        let options = EmbeddedOptions { durability: Durability::Sync, ..Default::default() };
        let store = EmbeddedStore::open(&dir, options).expect("open");
        let m =
            Memories::new(store.clone() as Arc<dyn rabosh_memory::Backend>, MemoryOptions::default()).expect("handler");
        let mut i = 0;
        while i < n {
            let chunk: Vec<_> = (i..(i + CHUNK).min(n)).map(|j| entry(j, &filler)).collect();
            m.import_all(&chunk, false).expect("import");
            i += chunk.len();
        }
        store.close().expect("close");
    }
    eprintln!("imported {n} in {:.1} s", started.elapsed().as_secs_f64());
    let store = rabosh::Store::open(&dir, rabosh::Options::default()).expect("open the engine");
    let snap = store.snapshot().expect("snapshot");
    let mut kinds: BTreeMap<String, Kind> = BTreeMap::new();
    let value_of = |key: &[u8]| snap.get(key).expect("get").map_or(0, |v| v.len() as u64);
    let mut rows = Vec::new();
    for (key, meta) in snap.scan_prefix(b"") {
        rows.push((key.to_vec(), meta.len() as u64));
    }
    for (key, meta_len) in rows {
        let colon = key.iter().position(|&b| b == b':').unwrap_or(key.len());
        let name = format!("{}:", String::from_utf8_lossy(&key[..colon]));
        let value = if key.starts_with(b"m:") { value_of(&key) } else { 0 };
        let k = kinds.entry(name).or_default();
        k.keys += 1;
        k.key_bytes += key.len() as u64;
        k.meta_bytes += meta_len;
        k.value_bytes += value;
    }
    store.close().expect("close");
    let mib = |b: u64| b as f64 / (1024.0 * 1024.0);
    println!("| key space | keys | key B | meta B | value B | segment record MiB (17+key+meta+value) |");
    println!("|---|---:|---:|---:|---:|---:|");
    let mut total = 0;
    for (name, k) in &kinds {
        let record = 17 * k.keys + k.key_bytes + k.meta_bytes + k.value_bytes;
        total += record;
        println!(
            "| `{name}` | {} | {:.1} | {:.1} | {:.1} | {:.1} |",
            k.keys,
            k.key_bytes as f64 / k.keys as f64,
            k.meta_bytes as f64 / k.keys as f64,
            k.value_bytes as f64 / k.keys as f64,
            mib(record)
        );
    }
    println!("| all live records | | | | | {:.1} |", mib(total));
    let (mut seg, mut hint, mut other) = (0, 0, 0);
    for e in std::fs::read_dir(&dir).expect("read the store directory") {
        let e = e.expect("entry");
        let len = e.metadata().expect("metadata").len();
        let name = e.file_name().to_string_lossy().into_owned();
        if name.ends_with(".seg") {
            seg += len;
        } else if name.ends_with(".hint") {
            hint += len;
        } else {
            other += len;
        }
    }
    println!(
        "\nfiles: segments {:.1} MiB, hints {:.1} MiB, other {:.1} MiB, total {:.1} MiB",
        mib(seg),
        mib(hint),
        mib(other),
        mib(seg + hint + other)
    );
}
