//! What the PostgreSQL tests share: the server's URL (required, never skipped) and a schema of
//! their own per test, so tests run in parallel on one server without seeing each other.

#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};

use rabosh_memory_postgres::{PgBackend, PgOptions};

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

/// Runs the server command scripts/with-postgres.mjs exports in `var` (`RABOSH_PG_RESTART`,
/// `RABOSH_PG_STOP` or `RABOSH_PG_CONT`: shell commands for the server it started) and panics unless
/// it succeeds. When `RABOSH_PG_CONTROL` (`host:port`) is set, the runner runs it and answers its
/// exit status: a Windows test binary under Wine has no `sh`, and can start a Linux program but
/// not wait for it (scripts/targets/pg-control.mjs).
pub fn server_command(var: &str) {
    if let Ok(addr) = std::env::var("RABOSH_PG_CONTROL") {
        let mut s = TcpStream::connect(&addr).unwrap_or_else(|e| panic!("RABOSH_PG_CONTROL {addr}: {e}"));
        writeln!(s, "{var}").unwrap();
        let mut answer = String::new();
        s.read_to_string(&mut answer).unwrap();
        assert_eq!(answer.trim(), "0", "{var} through RABOSH_PG_CONTROL {addr} failed");
        return;
    }
    let cmd = std::env::var(var).unwrap_or_else(|_| {
        panic!(
            "{var} is not set: this test needs scripts/with-postgres.mjs's own server, which it sets the command for"
        )
    });
    let status = Command::new("sh").arg("-c").arg(&cmd).stdout(Stdio::null()).status().unwrap();
    assert!(status.success(), "{var} failed");
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
    #[allow(clippy::unused_self)] // reached from the schema a test inspects, as its other helpers are
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

/// How far one of `b`'s counters (`PgBackend::round_trips`, `rows_read`) moved while `f` ran.
pub fn counted<T>(b: &PgBackend, counter: fn(&PgBackend) -> u64, f: impl FnOnce() -> T) -> (u64, T) {
    let before = counter(b);
    let out = f();
    (counter(b) - before, out)
}
