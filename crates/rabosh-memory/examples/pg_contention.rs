//! Contention of concurrent creates in one directory over PostgreSQL: 64 callers (threads, one
//! pooled connection each) each create `PER_CALLER` memories in the same directory, once in a
//! directory one level below the root and once three levels below (where the directory summary
//! shares an aggregate row among all of them). Prints creates per second and the serialization
//! retries the server forced (transactions begun minus commands).
//!
//! `node scripts/with-postgres.mjs "cargo run --release -p rabosh-memory --example pg_contention"`

use std::sync::{Arc, Barrier};
use std::time::Instant;

use rabosh_memory::postgres::{PgBackend, PgOptions};
use rabosh_memory::{Create, Memories, MemoryOptions};

const CALLERS: usize = 64;
const PER_CALLER: usize = 20;

fn main() {
    let url = std::env::var("RABOSH_PG_URL").expect("RABOSH_PG_URL (run through scripts/with-postgres.mjs)");
    for dir in ["/memories/conc", "/memories/a/b/conc"] {
        let schema = format!("bench_contention_{}", std::process::id());
        let options = PgOptions { schema: schema.clone(), pool_size: CALLERS as u32, ..PgOptions::default() };
        let backend = Arc::new(PgBackend::open(&url, options).expect("open"));
        let memories = Arc::new(Memories::new(backend.clone(), MemoryOptions::default()).expect("handler"));
        let start = Arc::new(Barrier::new(CALLERS + 1));
        let threads: Vec<_> = (0..CALLERS)
            .map(|c| {
                let (memories, start) = (memories.clone(), start.clone());
                std::thread::spawn(move || {
                    start.wait();
                    for i in 0..PER_CALLER {
                        let path = format!("{dir}/c{c}_{i}.md");
                        assert_eq!(memories.create(&path, "x").expect("create"), Create::Created);
                    }
                })
            })
            .collect();
        start.wait();
        let t = Instant::now();
        for t in threads {
            t.join().expect("caller");
        }
        let secs = t.elapsed().as_secs_f64();
        let n = CALLERS * PER_CALLER;
        println!(
            "{dir}: {n} creates by {CALLERS} callers in {secs:.2} s = {:.0} creates/s, {} attempts",
            n as f64 / secs,
            backend.attempts()
        );
        drop(memories);
        drop(backend);
        let mut c = postgres::Client::connect(&url, postgres::NoTls).expect("connect");
        c.batch_execute(&format!("DROP SCHEMA \"{schema}\" CASCADE")).expect("drop");
    }
}
