//! What version history costs per durable command, measured without the binding: two embedded
//! stores (history off, history on) in the same directory tree, commands alternating between them
//! so load on the machine hits both alike. `cargo run --release -p rabosh-memory --example
//! history_cost [-- COUNT]`; prints medians and means per command.

use std::time::Instant;

use rabosh_memory::{Durability, EmbeddedOptions, EmbeddedStore, HistoryOptions, Memories, MemoryOptions};

fn main() {
    let count: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(1500);
    for durability in [Durability::Sync, Durability::Buffered] {
        let dir = tempfile::tempdir().expect("temp dir");
        let handlers: Vec<Memories> = [false, true]
            .into_iter()
            .map(|history| {
                let options = EmbeddedOptions { durability, ..Default::default() };
                let store = EmbeddedStore::open(dir.path().join(format!("h{history}")), options).expect("open");
                let m = Memories::new(store, MemoryOptions::default()).expect("handler");
                if history { m.with_history(HistoryOptions::default()) } else { m }
            })
            .collect();
        let content = "x".repeat(4095);
        let mut micros = [[Vec::new(), Vec::new()], [Vec::new(), Vec::new()]];
        for i in 0..count {
            let path = format!("/memories/n{i}.md");
            // Alternate which handler goes first so neither always follows the other's fsync.
            let order: Vec<usize> = if i % 2 == 0 { vec![0, 1] } else { vec![1, 0] };
            for &h in &order {
                let t = Instant::now();
                handlers[h].create(&path, &format!("{i}\n{content}")).expect("create");
                micros[h][0].push(t.elapsed().as_secs_f64() * 1e6);
            }
            for &h in &order {
                let t = Instant::now();
                handlers[h].str_replace(&path, &format!("{i}\n"), "edited\n").expect("str_replace");
                micros[h][1].push(t.elapsed().as_secs_f64() * 1e6);
            }
        }
        for (k, name) in ["create", "str_replace"].into_iter().enumerate() {
            let median = |v: &[f64]| {
                let mut v = v.to_vec();
                v.sort_by(f64::total_cmp);
                v[v.len() / 2]
            };
            let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
            let (off, on) = (&micros[0][k], &micros[1][k]);
            println!(
                "{durability:?} {name} 4 KiB: median {:.0} -> {:.0} us ({:.2}x), mean {:.0} -> {:.0} us ({:.2}x)",
                median(off),
                median(on),
                median(on) / median(off),
                mean(off),
                mean(on),
                mean(on) / mean(off)
            );
        }
    }
}
