//! Contention of concurrent creates in one directory over PostgreSQL: 64 callers (threads, one
//! pooled connection each) each create `PER_CALLER` memories in the same directory, once in a
//! directory one level below the root and once three levels below (where the directory summary
//! shares an aggregate row among all of them). Each is run two ways, side by side, `ROUNDS`
//! times: the create decided by a unique insert at commit (`WriteSet::write_new`, what `create`
//! does) and by a read of the target in the body (what `create` did, and still does with
//! `create_overwrites`, which on new paths is the same transaction). Prints creates per second,
//! the serialization failures the server forced, and round trips per create.
//!
//! `node scripts/with-postgres.mjs "cargo run --release -p rabosh-memory --example pg_contention"`

use std::sync::{Arc, Barrier};
use std::time::Instant;

use rabosh_memory::postgres::{PgBackend, PgOptions};
use rabosh_memory::{Create, Memories, MemoryOptions};

const CALLERS: usize = 64;
const PER_CALLER: usize = 20;
const ROUNDS: usize = 3;

fn main() {
    let url = std::env::var("RABOSH_PG_URL").expect("RABOSH_PG_URL (run through scripts/with-postgres.mjs)");
    for round in 1..=ROUNDS {
        for dir in ["/memories/conc", "/memories/a/b/conc"] {
            for (how, create_overwrites) in [("unique insert", false), ("read first", true)] {
                run(&url, round, dir, how, create_overwrites);
            }
        }
    }
}

fn run(url: &str, round: usize, dir: &str, how: &str, create_overwrites: bool) {
    let schema = format!("bench_contention_{}", std::process::id());
    let options = PgOptions { schema: schema.clone(), pool_size: CALLERS as u32, ..PgOptions::default() };
    let backend = Arc::new(PgBackend::open(url, options).expect("open"));
    let memory_options = MemoryOptions { create_overwrites, ..MemoryOptions::default() };
    let memories = Arc::new(Memories::new(backend.clone(), memory_options).expect("handler"));
    let start = Arc::new(Barrier::new(CALLERS + 1));
    let threads: Vec<_> = (0..CALLERS)
        .map(|c| {
            let (memories, start) = (memories.clone(), start.clone());
            let dir = dir.to_string();
            std::thread::spawn(move || {
                start.wait();
                for i in 0..PER_CALLER {
                    let path = format!("{dir}/c{c}_{i}.md");
                    assert_eq!(memories.create(&path, "x").expect("create"), Create::Created);
                }
            })
        })
        .collect();
    let trips = backend.round_trips();
    start.wait();
    let t = Instant::now();
    for t in threads {
        t.join().expect("caller");
    }
    let secs = t.elapsed().as_secs_f64();
    let n = CALLERS * PER_CALLER;
    println!(
        "round {round} {dir} {how}: {n} creates by {CALLERS} callers in {secs:.2} s = {:.0} creates/s, \
         {} serialization failures, {:.2} round trips per create",
        n as f64 / secs,
        backend.conflicts(),
        (backend.round_trips() - trips) as f64 / n as f64
    );
    drop(memories);
    drop(backend);
    let mut c = postgres::Client::connect(url, postgres::NoTls).expect("connect");
    c.batch_execute(&format!("DROP SCHEMA \"{schema}\" CASCADE")).expect("drop");
}
