//! The PostgreSQL directory summary (schema version 2) against a real server: a listing reads its
//! entries and not the content below them, a version-1 store is migrated in place and summarised
//! correctly, and the summary agrees with the scan after arbitrary changes; an open without
//! `create` refuses a schema that holds no store and creates nothing.

mod postgres_util;

use std::sync::Arc;

use postgres_util::{Schema, counted, url};
use rabosh_memory::{Create, Memories, MemoryOptions, Usage, View};
use rabosh_memory_postgres::{PgBackend, PgOptions};

fn handler(b: &Arc<PgBackend>, listing_index: bool) -> Memories {
    Memories::new(b.clone(), MemoryOptions { listing_index, ..MemoryOptions::default() }).unwrap()
}

fn put(m: &Memories, path: &str, size: usize) {
    assert_eq!(m.create(path, &"x".repeat(size)).unwrap(), Create::Created, "{path}");
}

/// Rows the views of `b` read while `f` runs.
fn rows_read<T>(b: &PgBackend, f: impl FnOnce() -> T) -> (u64, T) {
    counted(b, PgBackend::rows_read, f)
}

#[test]
fn a_listing_reads_its_entries_not_the_content_below_them() {
    let s = Schema::new("rows");
    let b = Arc::new(s.open());
    let m = handler(&b, true);
    put(&m, "/memories/big/one", 1);
    put(&m, "/memories/big/sub/two", 2);
    put(&m, "/memories/big/.hidden", 4);
    let n = 600u32;
    for i in 0..n {
        put(&m, &format!("/memories/big/sub/deep/{}/{}/m{i}", i % 7, i % 11), 1);
    }
    let (summary_rows, view) = rows_read(&b, || m.view("/memories/big").unwrap());
    let View::Dir { total, entries } = &view else { panic!("{view:?}") };
    assert_eq!(*total, 3 + u64::from(n));
    assert_eq!(entries.len(), 4, "{entries:?}");
    // The directory's own rows: one, .hidden, sub/two, and sub/deep's aggregate (at most one row
    // per shard, 16).
    assert!(summary_rows <= 3 + 16, "the listing read {summary_rows} rows for {n} memories below it");
    let (root_rows, _) = rows_read(&b, || m.view("/memories").unwrap());
    assert!(root_rows <= 2 + 16, "the root listing read {root_rows} rows");
    let (usage_rows, usage) = rows_read(&b, || m.usage().unwrap());
    assert_eq!(usage, Usage { memories: 3 + u64::from(n), bytes: 7 + u64::from(n) });
    assert!(usage_rows <= 2 + 16, "usage read {usage_rows} rows");
    // The counter counts: the scan reads every memory below the directory.
    let (scan_rows, scanned) = rows_read(&b, || handler(&b, false).view("/memories/big").unwrap());
    assert_eq!(scanned, view);
    assert!(scan_rows >= u64::from(n), "the scan read {scan_rows} rows");
}

/// Metadata as the memory crate lays it out (version 1 of the store wrote the same bytes).
fn meta(size: u64) -> Vec<u8> {
    let mut m = Vec::with_capacity(40);
    for field in [size, 1, 5, 5, 0] {
        m.extend_from_slice(&field.to_le_bytes());
    }
    m
}

#[test]
fn a_version_1_store_is_migrated_in_place_and_summarised() {
    let s = Schema::new("v1");
    let q = format!("\"{}\"", s.name);
    let mut c = s.client();
    // The DDL version 1 ran, verbatim.
    c.batch_execute(&format!(
        "CREATE SCHEMA {q};
         CREATE TABLE {q}.rabosh_schema (id INT4 PRIMARY KEY, version INT4 NOT NULL);
         CREATE TABLE {q}.rabosh_migrations (version INT4 PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now());
         INSERT INTO {q}.rabosh_schema (id, version) VALUES (1, 1);
         INSERT INTO {q}.rabosh_migrations (version) VALUES (1);
         CREATE TABLE {q}.kv (k BYTEA PRIMARY KEY, v BYTEA NOT NULL, m BYTEA NOT NULL);"
    ))
    .unwrap();
    let memories: Vec<(String, u64)> = (0..5_000u64)
        .map(|i| {
            let path = match i % 5 {
                0 => format!("/memories/top{i}"),
                1 => format!("/memories/a/f{i}"),
                2 => format!("/memories/a/b/c/d{}/f{i}", i % 13),
                3 => format!("/memories/a/.h/x/f{i}"),
                _ => format!("/memories/n/node_modules/y{}/f{i}", i % 3),
            };
            (path, i % 17)
        })
        .chain([("/memories/a/b".to_string(), 9)])
        .collect();
    let insert = format!("INSERT INTO {q}.kv (k, v, m) VALUES ($1, $2, $3)");
    let mut tx = c.transaction().unwrap();
    for (path, size) in &memories {
        let key = format!("m:default:{path}").into_bytes();
        tx.execute(&insert, &[&key, &"x".repeat(*size as usize).into_bytes(), &meta(*size)]).unwrap();
    }
    // Another scope and a history record: neither belongs to this scope's listing.
    tx.execute(&insert, &[&b"m:other:/memories/a/z".to_vec(), &b"zz".to_vec(), &meta(2)]).unwrap();
    tx.execute(&insert, &[&b"h:default:/memories/a".to_vec(), &b"h".to_vec(), &b"opaque".to_vec()]).unwrap();
    tx.commit().unwrap();

    let b = Arc::new(PgBackend::open(&url(), PgOptions { schema: s.name.clone(), ..PgOptions::default() }).unwrap());
    let version: i32 = c.query_one(&format!("SELECT version FROM {q}.rabosh_schema"), &[]).unwrap().get(0);
    assert_eq!(version, 4);
    let (summary, scan) = (handler(&b, true), handler(&b, false));
    for dir in ["/memories", "/memories/a", "/memories/a/b", "/memories/a/b/c", "/memories/a/.h", "/memories/n"] {
        let (rows, listed) = rows_read(&b, || summary.view(dir).unwrap());
        assert_eq!(listed, scan.view(dir).unwrap(), "{dir}");
        assert!(rows < 2_200, "{dir}: {rows} rows");
    }
    let total: u64 = memories.iter().map(|m| m.1).sum();
    assert_eq!(summary.usage().unwrap(), Usage { memories: memories.len() as u64, bytes: total });
    // The migrated summary follows later commits.
    summary.rename("/memories/a", "/memories/q").unwrap();
    for dir in ["/memories", "/memories/q", "/memories/q/b"] {
        assert_eq!(summary.view(dir).unwrap(), scan.view(dir).unwrap(), "{dir}");
    }
}

/// A small deterministic generator, so a failure reproduces.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, below: u64) -> u64 {
        self.0 = self.0.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % below
    }
}

#[test]
fn the_summary_agrees_with_the_scan_after_arbitrary_changes() {
    let s = Schema::new("agree");
    let b = Arc::new(s.open());
    let (summary, scan) = (handler(&b, true), handler(&b, false));
    let names = ["a", "b", ".h", "node_modules", "c.md", "\u{1F600}", "\u{FF5E}"];
    let mut rng = Lcg(7);
    let path = |rng: &mut Lcg| {
        let depth = 1 + rng.next(5);
        let mut p = "/memories".to_string();
        for _ in 0..depth {
            p.push('/');
            p.push_str(names[rng.next(names.len() as u64) as usize]);
        }
        p
    };
    for step in 0..400 {
        let (p, q) = (path(&mut rng), path(&mut rng));
        match rng.next(6) {
            0..=2 => {
                summary.create(&p, &"y".repeat(rng.next(40) as usize)).unwrap();
            }
            3 => {
                summary.delete(&p).unwrap();
            }
            4 => {
                summary.rename(&p, &q).unwrap();
            }
            _ => {
                summary.str_replace(&p, "y", "yyy").unwrap();
            }
        }
        if step % 20 == 19 {
            for dir in ["/memories".to_string(), p.clone(), q.clone(), "/memories/a".into(), "/memories/.h".into()] {
                assert_eq!(summary.view(&dir).unwrap(), scan.view(&dir).unwrap(), "step {step}: {dir}");
            }
            let scanned = Memories::new(b.clone(), MemoryOptions { listing_index: false, ..MemoryOptions::default() })
                .unwrap()
                .usage()
                .unwrap();
            assert_eq!(summary.usage().unwrap(), scanned, "step {step}");
        }
    }
    // Nothing left behind: every summary row counts something.
    let mut c = s.client();
    let empty: i64 =
        c.query_one(&format!("SELECT count(*) FROM \"{}\".dirs WHERE n <= 0", s.name), &[]).unwrap().get(0);
    assert_eq!(empty, 0);
}

/// Whether the schema exists at all, per the server's catalogue.
fn schema_exists(s: &Schema) -> bool {
    let mut c = s.client();
    c.query_opt("SELECT 1 FROM information_schema.schemata WHERE schema_name = $1", &[&s.name]).unwrap().is_some()
}

#[test]
fn without_create_a_missing_store_is_refused_and_nothing_is_made() {
    let s = Schema::new("nocreate");
    let no_create = PgOptions { create: false, ..s.options() };
    let e = PgBackend::open(&url(), no_create.clone()).err().expect("no store there");
    assert!(matches!(&e, rabosh_memory::Error::NotAStore(m) if m.contains(&s.name)), "{e:?}");
    assert!(!schema_exists(&s), "a refused open created the schema");
    // A schema that exists but holds no store (someone else's) is refused too and left alone.
    s.client().batch_execute(&format!("CREATE SCHEMA \"{}\"", s.name)).unwrap();
    let e = PgBackend::open(&url(), no_create.clone()).err().expect("an empty schema is not a store");
    assert!(matches!(e, rabosh_memory::Error::NotAStore(_)), "{e:?}");
    let tables: i64 = s
        .client()
        .query_one("SELECT count(*) FROM information_schema.tables WHERE table_schema = $1", &[&s.name])
        .unwrap()
        .get(0);
    assert_eq!(tables, 0, "a refused open created tables");
    // Once a store is there, the same options open it.
    let m = handler(&Arc::new(s.open()), true);
    put(&m, "/memories/a", 2);
    let b = Arc::new(PgBackend::open(&url(), no_create).expect("the store exists now"));
    assert_eq!(handler(&b, true).usage().unwrap(), Usage { memories: 1, bytes: 2 });
}

/// Round trips `b` made while `f` ran.
fn round_trips<T>(b: &PgBackend, f: impl FnOnce() -> T) -> (u64, T) {
    counted(b, PgBackend::round_trips, f)
}

/// Issue 24: a create is one pipelined flight of BEGIN, the check of the history setting the
/// handle cached (`settings_cache.rs`), its insert (which decides whether the path was free: no
/// read of the target), the summary rows and COMMIT; the flight leaves the summary exact (the
/// listing after it agrees with the scan), a refused create commits nothing, and a failed
/// statement in it commits nothing.
#[test]
fn a_create_is_one_round_trip_and_its_writes_commit_together() {
    let s = Schema::new("trips");
    let b = Arc::new(s.open());
    let m = handler(&b, true);
    put(&m, "/memories/d/warm", 1); // prepares the statements on the pooled connection
    // And those of a refused create's read of the row there (the target's `Meta`/`Get` are no
    // longer the settings read's statement: that is `SettingMeta`, through its own index).
    assert_eq!(m.create("/memories/d/warm", "again").unwrap(), Create::Exists);
    let (trips, created) = round_trips(&b, || m.create("/memories/d/a.md", "hello").unwrap());
    assert_eq!(created, Create::Created);
    assert_eq!(trips, 1, "a create took {trips} round trips");
    // Refused by the insert's unique violation, which rolls the flight back: the same one, then
    // a snapshot read of the row that was there (a damaged one answers Corruption).
    let commits = b.commits();
    let (trips, again) = round_trips(&b, || m.create("/memories/d/a.md", "again").unwrap());
    assert_eq!(again, Create::Exists);
    assert!(trips <= 2, "a refused create took {trips} round trips");
    assert_eq!(b.commits(), commits, "a refused create committed");
    let listed = m.view("/memories/d").unwrap();
    assert_eq!(listed, handler(&b, false).view("/memories/d").unwrap());
    // A statement of the flight that fails (the summary refuses new rows) rolls back the
    // memory's row written before it: COMMIT after a failed statement is a rollback.
    let mut c = postgres::Client::connect(&url(), postgres::NoTls).unwrap();
    let dirs = format!("\"{}\".dirs", s.name);
    c.batch_execute(&format!("ALTER TABLE {dirs} ADD CONSTRAINT refuse CHECK (n < 0) NOT VALID")).unwrap();
    assert!(m.create("/memories/d/lost.md", "x").is_err());
    c.batch_execute(&format!("ALTER TABLE {dirs} DROP CONSTRAINT refuse")).unwrap();
    assert_eq!(m.view("/memories/d/lost.md").unwrap(), View::NotFound);
    assert_eq!(m.view("/memories/d").unwrap(), listed);
}
