//! Issue 24: what a command costs over PostgreSQL in round trips (each a wait for the server,
//! the latency a remote store adds), against a real server. A view of one memory is one: its
//! BEGIN goes with the query that reads the row's metadata and value together, and the COMMIT
//! that ends the read-only snapshot is sent without waiting for its answer; that COMMIT still
//! reaches the server at once (the session is idle, not idle in a transaction), and the
//! connection it leaves in the pool serves the next commands. A create is one too, once the
//! handle has read the store's history setting: the setting is checked in the create's commit
//! flight instead of read before it (`settings_cache.rs`), and another handle turning history on
//! is still honoured by the next create (`tests/postgres_settings.rs`).

mod postgres_util;

use std::sync::Arc;
use std::time::{Duration, Instant};

use postgres_util::{Schema, counted, url};
use rabosh_memory::{Create, Memories, MemoryOptions, View};
use rabosh_memory_postgres::{PgBackend, PgOptions};

/// Round trips `b` made while `f` ran.
fn trips<T>(b: &PgBackend, f: impl FnOnce() -> T) -> (u64, T) {
    counted(b, PgBackend::round_trips, f)
}

/// The test server's URL with an application name of this test's own, to find its sessions.
fn url_named(name: &str) -> String {
    let u = url();
    format!("{u}{}application_name={name}", if u.contains('?') { '&' } else { '?' })
}

/// Waits (bounded, generously) until no session named `name` is inside a transaction.
fn sessions_leave_their_transactions(s: &Schema, name: &str) {
    let mut c = s.client();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let states: Vec<String> = c
            .query("SELECT state FROM pg_stat_activity WHERE application_name = $1", &[&name])
            .unwrap()
            .iter()
            .map(|r| r.get::<_, Option<String>>(0).unwrap_or_default())
            .collect();
        assert!(!states.is_empty(), "no session named {name}");
        if states.iter().all(|st| st == "idle") {
            return;
        }
        assert!(Instant::now() < deadline, "sessions still in a transaction: {states:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_view_of_one_memory_is_one_round_trip_and_ends_its_snapshot() {
    let s = Schema::new("viewtrips");
    let name = format!("rt_view_{}", std::process::id());
    // One pooled connection: every command below reuses the one a view left behind.
    let b = Arc::new(PgBackend::open(&url_named(&name), PgOptions { pool_size: 1, ..s.options() }).unwrap());
    let m = Memories::new(b.clone(), MemoryOptions::default()).unwrap();
    let text = "one\ntwo\n";
    assert_eq!(m.create("/memories/d/a.md", text).unwrap(), Create::Created);
    assert_eq!(m.view("/memories/d/a.md").unwrap(), View::File { content: text.into() }); // prepares

    let values = b.values_read();
    let (n, shown) = trips(&b, || m.view("/memories/d/a.md").unwrap());
    assert_eq!(shown, View::File { content: text.into() });
    assert_eq!(n, 1, "a view of one memory took {n} round trips");
    assert_eq!(b.values_read() - values, 1, "the value is read once");
    sessions_leave_their_transactions(&s, &name);

    // The connection serves a write, and views after it see it; a missing path and a directory
    // are answered as before.
    assert_eq!(m.create("/memories/d/b.md", "b").unwrap(), Create::Created);
    assert_eq!(m.view("/memories/d/b.md").unwrap(), View::File { content: "b".into() });
    assert_eq!(m.view("/memories/d/none.md").unwrap(), View::NotFound);
    let (n, listed) = trips(&b, || m.view("/memories/d").unwrap());
    assert!(matches!(&listed, View::Dir { entries, .. } if entries.len() == 2), "{listed:?}");
    assert!(n <= 2, "a listing took {n} round trips");
    // What another handle acknowledged before the view is in it.
    let other = Memories::new(Arc::new(s.open()), MemoryOptions::default()).unwrap();
    assert_eq!(other.create("/memories/d/c.md", "c").unwrap(), Create::Created);
    assert_eq!(m.view("/memories/d/c.md").unwrap(), View::File { content: "c".into() });
    sessions_leave_their_transactions(&s, &name);
}

#[test]
fn a_create_is_one_round_trip_once_the_settings_are_cached() {
    let s = Schema::new("createtrips");
    let b = Arc::new(PgBackend::open(&url(), PgOptions { pool_size: 1, ..s.options() }).unwrap());
    let m = Memories::new(b.clone(), MemoryOptions::default()).unwrap();
    // The first reads the history setting (with BEGIN), the second checks it; both prepare their
    // statements (a round trip each, once per pooled connection).
    for i in 0..2 {
        assert_eq!(m.create(&format!("/memories/c/{i}.md"), "x").unwrap(), Create::Created);
    }
    for i in 2..6 {
        let (n, created) = trips(&b, || m.create(&format!("/memories/c/{i}.md"), "x").unwrap());
        assert_eq!(created, Create::Created);
        assert_eq!(n, 1, "create {i} took {n} round trips");
    }
    // A refused one: the same flight, rolled back by the insert, then the row's read (its
    // statement prepared by the first refusal).
    assert_eq!(m.create("/memories/c/0.md", "y").unwrap(), Create::Exists);
    let (n, again) = trips(&b, || m.create("/memories/c/1.md", "y").unwrap());
    assert_eq!(again, Create::Exists);
    assert!(n <= 2, "a refused create took {n} round trips");
    assert_eq!(m.view("/memories/c/1.md").unwrap(), View::File { content: "x".into() });
    // An edit reads its memory (metadata and content in one query) with BEGIN, and checks the
    // setting in its commit flight: two (once its statements are prepared).
    m.str_replace("/memories/c/2.md", "x", "w").unwrap();
    let (n, _) = trips(&b, || m.str_replace("/memories/c/1.md", "x", "z").unwrap());
    assert_eq!(n, 2, "a str_replace took {n} round trips");
    assert_eq!(m.view("/memories/c/1.md").unwrap(), View::File { content: "z".into() });
    m.insert("/memories/c/2.md", Some(0), "i").unwrap();
    let (n, _) = trips(&b, || m.insert("/memories/c/1.md", Some(0), "i").unwrap());
    assert_eq!(n, 2, "an insert took {n} round trips");
    assert_eq!(m.view("/memories/c/1.md").unwrap(), View::File { content: "i\nz\n".into() });
}

/// Issue 24: each statement of a pipelined flight is a server cycle of its own, and for a create
/// BEGIN, the setting's guard, the insert, the summary rows and COMMIT cost the server more than
/// the writes (64 callers creating in one directory were bound by the server's CPU on the same
/// two cores). A create's commit is one statement, in autocommit under the session's default
/// SERIALIZABLE; the outcomes stay those of the flight.
#[test]
fn a_create_commits_as_one_statement() {
    let s = Schema::new("createone");
    let name = format!("rt_fused_{}", std::process::id());
    let b = Arc::new(PgBackend::open(&url_named(&name), PgOptions { pool_size: 1, ..s.options() }).unwrap());
    let m = Memories::new(b.clone(), MemoryOptions::default()).unwrap();
    assert_eq!(m.create("/memories/c/0.md", "x").unwrap(), Create::Created); // reads the setting
    for i in 1..4 {
        let (n, created) =
            counted(&b, PgBackend::commit_statements, || m.create(&format!("/memories/c/{i}.md"), "xy").unwrap());
        assert_eq!(created, Create::Created);
        assert_eq!(n, 1, "create {i} sent {n} statements to commit");
    }
    // Taken is still told from the unique violation, and commits nothing.
    let commits = b.commits();
    assert_eq!(m.create("/memories/c/2.md", "other").unwrap(), Create::Exists);
    assert_eq!(b.commits(), commits);
    assert_eq!(m.view("/memories/c/2.md").unwrap(), View::File { content: "xy".into() });
    // The summary rows went with the rows: the listing counts every one, with its size.
    let View::Dir { entries, .. } = m.view("/memories/c").unwrap() else { panic!("not a directory") };
    assert_eq!(entries.len(), 4, "{entries:?}");
    // Nothing was left open: the one connection is idle, not in a transaction.
    sessions_leave_their_transactions(&s, &name);
}
