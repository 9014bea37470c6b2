//! What the PostgreSQL tests share: the server's URL (required, never skipped) and a schema of
//! their own per test, so tests run in parallel on one server without seeing each other.

#![allow(dead_code)]

use std::sync::atomic::{AtomicU32, Ordering};

use rabosh_memory::postgres::{PgBackend, PgOptions};

/// The server the tests use. Absent, the tests fail: they are part of the suite, not optional.
pub fn url() -> String {
    std::env::var("RABOSH_PG_URL").unwrap_or_else(|_| {
        panic!(
            "RABOSH_PG_URL is not set. The PostgreSQL tests need a server: run them through \
             `node scripts/with-postgres.mjs \"cargo test …\"` (npm test does), which starts a \
             throwaway one, or set RABOSH_PG_URL=postgres://user:password@host:port/database"
        )
    })
}

/// A schema name no other test (or earlier run) uses; dropped when the guard drops.
pub struct Schema {
    pub name: String,
}

impl Schema {
    pub fn new(tag: &str) -> Schema {
        static N: AtomicU32 = AtomicU32::new(0);
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().subsec_nanos();
        let name = format!("t_{tag}_{}_{}_{nanos}", std::process::id(), N.fetch_add(1, Ordering::Relaxed));
        Schema { name }
    }

    pub fn options(&self) -> PgOptions {
        PgOptions { schema: self.name.clone(), ..PgOptions::default() }
    }

    pub fn open(&self) -> PgBackend {
        PgBackend::open(&url(), self.options()).expect("open the PostgreSQL backend")
    }

    /// A direct client for inspecting what the backend wrote.
    pub fn client(&self) -> postgres::Client {
        postgres::Client::connect(&url(), postgres::NoTls).expect("connect for inspection")
    }
}

impl Drop for Schema {
    fn drop(&mut self) {
        if let Ok(mut c) = postgres::Client::connect(&url(), postgres::NoTls) {
            let _ = c.batch_execute(&format!("DROP SCHEMA IF EXISTS \"{}\" CASCADE", self.name));
        }
    }
}
