//! Store-wide settings over PostgreSQL, read through their own index (issue 24): still exact.
//! History turned on by another handle (another process, its own pool) and committed is
//! honoured by the very next create of a handle that has been creating without it.

mod common;

use std::sync::Arc;
use std::sync::atomic::Ordering;

use common::{Kind, fixture_on};
use rabosh_memory::{Clock, Create, HistoryOptions, Memories, MemoryOptions, Operation, VersionQuery};
use rabosh_memory_postgres::{PgBackend, PgOptions};

#[test]
fn postgres_history_turned_on_elsewhere_records_the_next_create() {
    let f = fixture_on(Kind::Postgres);
    let here = f.default_handler();
    // Creates first, so whatever this handle or its pool could have kept of "history off" is warm.
    for i in 0..5 {
        assert_eq!(here.create(&format!("/memories/before{i}.md"), "b").unwrap(), Create::Created);
    }
    let options = PgOptions { schema: f.pg_schema().unwrap().to_string(), pool_size: 1, ..PgOptions::default() };
    let backend = Arc::new(PgBackend::open(&common::pg_url(), options).unwrap());
    let now = f.now.clone();
    let elsewhere = Memories::new(backend, MemoryOptions::default())
        .unwrap()
        .with_clock(Clock::from_fn(move || now.load(Ordering::SeqCst)))
        .with_history(HistoryOptions::default());
    // Its first commit turns history on for the store.
    assert_eq!(elsewhere.create("/memories/on.md", "on").unwrap(), Create::Created);
    assert_eq!(here.create("/memories/after.md", "a").unwrap(), Create::Created);
    let recorded = |path: &str| {
        let q = VersionQuery { path: Some(path.to_string()), ..VersionQuery::default() };
        here.versions(&q).unwrap().data.into_iter().map(|v| v.operation).collect::<Vec<_>>()
    };
    assert_eq!(recorded("/memories/after.md"), vec![Operation::Created], "the next create after history was turned on");
    assert_eq!(recorded("/memories/before0.md"), Vec::<Operation>::new(), "a create before it");
}

/// The settings' read goes through their own index, in a new store (never analysed) and in one
/// with memories and fresh statistics, under a generic plan and a custom one: the fix for
/// creates aborting each other rests on the planner's choice, so the choice is pinned here. So
/// does the check of a setting a handle answered from its cache, in the commit flight
/// (`Q::GuardMeta`, `settings_cache.rs`), which is the read a create makes now.
#[test]
fn postgres_settings_are_read_through_their_own_index() {
    let f = fixture_on(Kind::Postgres);
    let m = f.default_handler();
    let schema = f.pg_schema().unwrap().to_string();
    let mut c = postgres::Client::connect(&common::pg_url(), postgres::NoTls).unwrap();
    // As the backend's connections are set up (`pool.rs`).
    c.batch_execute("SET enable_seqscan = off").unwrap();
    // What `Q::SettingMeta` sends (sql.rs), prepared with its parameter.
    let read = format!("SELECT m FROM \"{schema}\".kv WHERE k = $1 AND k >= '\\x633a'::BYTEA AND k < '\\x633b'::BYTEA");
    c.batch_execute(&format!("PREPARE settings_read(BYTEA) AS {read}")).unwrap();
    // What `Q::GuardMeta` sends.
    let guard = format!(
        "SELECT 1 / (CASE WHEN (SELECT m FROM \"{schema}\".kv WHERE k = $1 AND k >= '\\x633a'::BYTEA AND \
         k < '\\x633b'::BYTEA) IS NOT DISTINCT FROM $2::BYTEA THEN 1 ELSE 0 END)"
    );
    c.batch_execute(&format!("PREPARE settings_guard(BYTEA, BYTEA) AS {guard}")).unwrap();
    let mut made = 0;
    for memories in [0, 60, 600] {
        for i in made..memories {
            m.create(&format!("/memories/d/{i:04}.md"), "x").unwrap();
        }
        made = memories;
        if memories > 0 {
            c.batch_execute(&format!("ANALYZE \"{schema}\".kv")).unwrap();
        }
        for mode in ["force_generic_plan", "force_custom_plan"] {
            c.batch_execute(&format!("SET plan_cache_mode = {mode}")).unwrap();
            for execute in ["settings_read('\\x633a686973746f7279')", "settings_guard('\\x633a686973746f7279', NULL)"] {
                let plan: Vec<String> =
                    c.query(&format!("EXPLAIN EXECUTE {execute}"), &[]).unwrap().iter().map(|r| r.get(0)).collect();
                let plan = plan.join("\n");
                assert!(plan.contains("kv_settings"), "{memories} memories, {mode}, {execute}: {plan}");
            }
        }
    }
}
