//! `rabosh_memory::open_with` as the binding calls it (with `PostgresOpener`): the target decides
//! the backend, the store says what it can do, and every call or option it lacks is refused in
//! one wording, before anything is opened. The PostgreSQL half runs against the real server of
//! with-postgres.mjs (`RABOSH_PG_URL`).

mod postgres_util;

use std::sync::Arc;

use rabosh_memory::{Capabilities, Durability, Error, Memories, MemoryOptions, Store, StoreOptions, Workers};
use rabosh_memory_postgres::{CAPABILITIES, PostgresOpener};

fn open(target: &str, options: StoreOptions) -> rabosh_memory::Result<Store> {
    rabosh_memory::open_with(target, options, &[&PostgresOpener])
}

fn url_with_schema(schema: &str, extra: &str) -> String {
    let base = postgres_util::url();
    let sep = if base.contains('?') { '&' } else { '?' };
    format!("{base}{sep}schema={schema}{extra}")
}

#[test]
fn a_directory_opens_the_embedded_engine_with_every_capability() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store");
    let store = open(path.to_str().unwrap(), StoreOptions { durability: Durability::Buffered, ..Default::default() })
        .expect("open a directory");
    assert_eq!(*store.capabilities(), Capabilities::EMBEDDED);
    assert!(store.workers().is_none() && store.group_commit().is_some());
    let m = Memories::new(store.backend(), MemoryOptions::default()).unwrap();
    m.create("/memories/a", "x").unwrap();
    store.sync().unwrap();
    let snap = store.snapshot().unwrap();
    assert_eq!(snap.seq(), store.stats().seq);
    store.verify().unwrap();
    store.compact().unwrap();
    store.checkpoint(dir.path().join("copy").to_str().unwrap()).unwrap();
    drop(snap);
    store.close().unwrap();
    assert!(matches!(store.sync(), Err(Error::Closed)));
}

#[test]
fn exclusive_on_a_directory_refuses_a_second_opener() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_str().unwrap();
    let held = open(path, StoreOptions { exclusive: true, ..Default::default() }).unwrap();
    assert!(matches!(open(path, StoreOptions::default()), Err(Error::Locked { .. })));
    held.close().unwrap();
}

#[test]
fn create_false_on_an_empty_directory_is_not_a_store() {
    let dir = tempfile::tempdir().unwrap();
    let e = open(dir.path().to_str().unwrap(), StoreOptions { create: false, ..Default::default() }).err();
    assert!(matches!(e, Some(Error::NotAStore(_))), "{e:?}");
}

#[test]
fn a_url_opens_postgres_on_workers_of_its_own_and_refuses_the_engines_calls() {
    let schema = postgres_util::Schema::new("open");
    let store = open(&url_with_schema(&schema.name, "&pool_size=3"), StoreOptions::default()).expect("open a URL");
    assert_eq!(*store.capabilities(), CAPABILITIES);
    assert!(store.group_commit().is_none());
    let workers: &Arc<Workers> = store.workers().expect("PostgreSQL calls run on the store's own threads");
    let m = Arc::new(Memories::new(store.backend(), MemoryOptions::default()).unwrap());
    // The pool is sized by pool_size: 6 calls at once start at most 3 threads.
    let (tx, rx) = std::sync::mpsc::channel();
    for i in 0..6 {
        let (m, tx) = (m.clone(), tx.clone());
        workers.submit(Box::new(move || tx.send(m.create(&format!("/memories/{i}"), "x").map(|_| ())).unwrap()));
    }
    for _ in 0..6 {
        rx.recv().unwrap().unwrap();
    }
    assert!(workers.threads() <= 3, "{} threads", workers.threads());
    assert_eq!(store.stats().commits, 6);
    let refusals = [
        ("checkpoint", store.checkpoint("/nonexistent").err()),
        ("compact", store.compact().map(|_| ()).err()),
        ("verify", store.verify().map(|_| ()).err()),
        ("snapshot", store.snapshot().map(|_| ()).err()),
    ];
    for (what, e) in refusals {
        let e = e.unwrap_or_else(|| panic!("{what} refused"));
        assert!(matches!(e, Error::Unsupported(_)), "{what}: {e}");
        assert!(e.to_string().starts_with(&format!("{what} is not supported by PostgreSQL stores (")), "{e}");
    }
    store.sync().unwrap();
    store.close().unwrap();
    assert!(matches!(store.sync(), Err(Error::Closed)));
    assert!(matches!(m.usage(), Err(Error::Closed)));
    assert_eq!(store.stats().commits, 6, "counters outlive the pool");
}

#[test]
fn create_false_on_a_url_without_a_store_is_not_a_store() {
    let schema = postgres_util::Schema::new("open_nocreate");
    let e = open(&url_with_schema(&schema.name, ""), StoreOptions { create: false, ..Default::default() }).err();
    assert!(matches!(e, Some(Error::NotAStore(_))), "{e:?}");
}

#[test]
fn the_url_is_parsed_once_a_misspelt_parameter_named() {
    let schema = postgres_util::Schema::new("open_typo");
    let e = open(&url_with_schema(&schema.name, "&pool_sise=3"), StoreOptions::default()).err();
    assert!(matches!(&e, Some(Error::UnknownOption(name)) if name == "pool_sise"), "{e:?}");
    assert_eq!(e.unwrap().to_string(), "invalid option pool_sise: unknown option");
}
