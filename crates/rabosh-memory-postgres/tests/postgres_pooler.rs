//! Behind `PgBouncer` (scripts/pgbouncer.mjs starts Debian's in front of scripts/with-postgres.mjs's
//! server): a pool in session mode works; one in transaction mode, which does not keep a
//! session's prepared statements and settings with its connection, is refused at open, saying
//! why and what to set (`pooler.rs`).

mod postgres_util;

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Arc;

use postgres_util::Schema;
use rabosh_memory::{Create, Memories, MemoryOptions, StoreOptions};
use rabosh_memory_postgres::{PgError, PgErrorKind, PostgresOpener};

#[test]
fn session_pooling_works_and_transaction_pooling_is_refused_at_open() {
    if cfg!(any(not(target_os = "linux"), target_env = "musl")) {
        // `PgBouncer` comes from Debian's package (scripts/install-postgres.sh installs it);
        // the code under test is the same on every target.
        return;
    }
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scripts/pgbouncer.mjs");
    let mut bouncer = Command::new("node")
        .arg(script)
        .env("RABOSH_PG_URL", postgres_util::url())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("run node scripts/pgbouncer.mjs");
    let mut ready = String::new();
    BufReader::new(bouncer.stdout.take().unwrap()).read_line(&mut ready).unwrap();
    let urls: Vec<&str> = ready.trim().strip_prefix("ready ").expect("pgbouncer ready").split(' ').collect();
    let (transaction, session) = (urls[0], urls[1]);
    let schema = Schema::new("pooler");
    let open = |url: &str| {
        rabosh_memory::open_with(&format!("{url}?schema={}", schema.name), StoreOptions::default(), &[&PostgresOpener])
    };

    let store = open(session).expect("open through a pool in session mode");
    let m = Arc::new(Memories::new(store.backend(), MemoryOptions::default()).unwrap());
    let writers: Vec<_> = (0..8)
        .map(|w| {
            let m = m.clone();
            std::thread::spawn(move || (0..8).map(|i| m.create(&format!("/memories/{w}/{i}"), "x").unwrap()).count())
        })
        .collect();
    for w in writers {
        assert_eq!(w.join().unwrap(), 8);
    }
    assert_eq!(m.create("/memories/0/0", "x").unwrap(), Create::Exists);
    store.close().unwrap();

    let e = open(transaction).err().expect("a pool in transaction mode is refused");
    let pe = PgError::of(&e).unwrap_or_else(|| panic!("{e}"));
    assert_eq!(pe.kind(), PgErrorKind::InvalidUrl, "{e}");
    assert!(pe.message().contains("transaction mode") && pe.message().contains("pool_mode = session"), "{e}");
    drop(bouncer.stdin.take());
    bouncer.wait().unwrap();
}
