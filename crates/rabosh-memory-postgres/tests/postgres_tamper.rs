//! PostgreSQL tables changed by hand under a store (a NULL where the store wrote bytes, a column
//! of another type): every command that meets the change answers Corruption naming the row or
//! the column, never a panic; the handle keeps serving the rows that are intact.

mod postgres_util;

use std::sync::Arc;

use postgres_util::{Schema, url};
use rabosh_memory::{Create, Error, Memories, MemoryOptions, Result, View};
use rabosh_memory_postgres::PgBackend;

fn handler(b: &Arc<PgBackend>, listing_index: bool) -> Memories {
    Memories::new(b.clone(), MemoryOptions { listing_index, ..MemoryOptions::default() }).unwrap()
}

/// A store with /memories/a/x and /memories/b/y, and a direct client to tamper with it.
fn store(tag: &str) -> (Schema, Arc<PgBackend>, Memories) {
    let s = Schema::new(tag);
    let b = Arc::new(s.open());
    let m = handler(&b, true);
    assert_eq!(m.create("/memories/a/x", "one\ntwo").unwrap(), Create::Created);
    assert_eq!(m.create("/memories/b/y", "kept").unwrap(), Create::Created);
    (s, b, m)
}

fn tamper(s: &Schema, sql: &str) {
    s.client().batch_execute(&sql.replace("{s}", &format!("\"{}\"", s.name))).unwrap();
}

/// The error is Corruption, says what `names`, and quotes no host or password.
fn corrupt<T: std::fmt::Debug>(r: Result<T>, names: &str, what: &str) {
    match r {
        Err(Error::Corruption(m)) => {
            assert!(m.contains(names), "{what}: {m:?} does not name {names:?}");
            let u = url();
            let secret = u.split('@').next().unwrap().rsplit(':').next().unwrap();
            let host = u.split('@').nth(1).unwrap().split([':', '/']).next().unwrap();
            assert!(!m.contains(secret) && !m.contains(host), "{what}: {m:?}");
        }
        other => panic!("{what}: expected Corruption, got {other:?}"),
    }
}

/// Every command on `path` answers Corruption naming `names`.
fn every_command_is_corrupt(m: &Memories, path: &str, names: &str) {
    corrupt(m.view(path), names, "view");
    corrupt(m.str_replace(path, "one", "uno"), names, "str_replace");
    corrupt(m.insert(path, Some(0), "zero"), names, "insert");
    corrupt(m.create(path, "again"), names, "create");
    corrupt(m.rename(path, "/memories/moved"), names, "rename");
    corrupt(m.delete(path), names, "delete");
}

/// The intact memory still answers on the same handle: not poisoned.
fn others_still_work(m: &Memories) {
    assert_eq!(m.view("/memories/b/y").unwrap(), View::File { content: "kept".into() });
    m.str_replace("/memories/b/y", "kept", "still kept").unwrap();
    assert_eq!(m.create("/memories/b/z", "new").unwrap(), Create::Created);
}

#[test]
fn a_null_metadata_names_the_key_and_spares_the_other_rows() {
    let (s, b, m) = store("nullmeta");
    tamper(
        &s,
        "ALTER TABLE {s}.kv ALTER COLUMN m DROP NOT NULL; UPDATE {s}.kv SET m = NULL WHERE k = 'm:default:/memories/a/x'::BYTEA",
    );
    every_command_is_corrupt(&m, "/memories/a/x", "m:default:/memories/a/x");
    // A scan of the directory meets the row too.
    corrupt(handler(&b, false).view("/memories/a"), "/memories/a/x", "listing by scan");
    others_still_work(&m);
}

#[test]
fn a_null_value_names_the_key() {
    let (s, _b, m) = store("nullvalue");
    tamper(
        &s,
        "ALTER TABLE {s}.kv ALTER COLUMN v DROP NOT NULL; UPDATE {s}.kv SET v = NULL WHERE k = 'm:default:/memories/a/x'::BYTEA",
    );
    corrupt(m.view("/memories/a/x"), "/memories/a/x", "view");
    corrupt(m.str_replace("/memories/a/x", "one", "uno"), "/memories/a/x", "str_replace");
    corrupt(m.insert("/memories/a/x", Some(0), "zero"), "/memories/a/x", "insert");
    others_still_work(&m);
}

#[test]
fn a_changed_column_type_answers_corruption_on_the_open_handle_and_refuses_a_new_open() {
    for (column, tag) in [("m", "typem"), ("v", "typev"), ("k", "typek")] {
        let (s, b, m) = store(tag);
        // The handle has prepared its statements against the old types.
        // (The settings' partial index compares `k` with bytea literals: a tamperer changing `k`
        // has to drop it first, as PostgreSQL refuses to convert its predicate.)
        let drop = if column == "k" { "DROP INDEX {s}.kv_settings; " } else { "" };
        tamper(
            &s,
            &format!("{drop}ALTER TABLE {{s}}.kv ALTER COLUMN {column} TYPE TEXT USING encode({column}, 'hex')"),
        );
        for round in 0..3 {
            let what = format!("{column}, round {round}");
            corrupt(m.view("/memories/a/x"), "changed outside rabosh", &what);
            corrupt(m.str_replace("/memories/b/y", "kept", "k"), "changed outside rabosh", &what);
            if column != "v" {
                // A create and a listing read no value: with only `v` changed, a new value is
                // written (the server casts bytea to text on assignment) and read back as
                // Corruption like the rest, and a new open refuses the store.
                corrupt(m.create("/memories/c", "new"), "changed outside rabosh", &what);
                corrupt(handler(&b, false).view("/memories"), "changed outside rabosh", &what);
            }
        }
        match PgBackend::open(&url(), s.options()) {
            Err(Error::Corruption(e)) => assert!(e.contains(&format!("column {column} has type text")), "{e}"),
            Err(e) => panic!("{column}: {e}"),
            Ok(_) => panic!("{column}: a store whose kv.{column} is text must not open"),
        }
    }
}

#[test]
fn a_tampered_summary_row_names_the_directory_entry() {
    let (s, _b, m) = store("nulldirs");
    tamper(
        &s,
        "ALTER TABLE {s}.dirs ALTER COLUMN b DROP NOT NULL; UPDATE {s}.dirs SET b = NULL WHERE r = 'a/x'::BYTEA",
    );
    corrupt(m.view("/memories"), "entry a/x", "listing");
    corrupt(m.usage(), "entry a/x", "usage");
    assert_eq!(m.view("/memories/b/y").unwrap(), View::File { content: "kept".into() });
    tamper(&s, "ALTER TABLE {s}.dirs ALTER COLUMN n TYPE TEXT");
    match PgBackend::open(&url(), s.options()) {
        Err(Error::Corruption(e)) => assert!(e.contains("column n has type text"), "{e}"),
        other => panic!("{:?}", other.map(|_| ())),
    }
}

#[test]
fn a_null_schema_version_refuses_the_open() {
    let (s, _b, _m) = store("nullversion");
    tamper(
        &s,
        "ALTER TABLE {s}.rabosh_schema ALTER COLUMN version DROP NOT NULL; UPDATE {s}.rabosh_schema SET version = NULL",
    );
    match PgBackend::open(&url(), s.options()) {
        Err(Error::Corruption(e)) => assert!(e.contains("rabosh_schema") && e.contains("NULL"), "{e}"),
        other => panic!("{:?}", other.map(|_| ())),
    }
}
