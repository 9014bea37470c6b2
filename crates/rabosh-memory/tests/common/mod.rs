//! Shared fixtures: a backend (the embedded engine in a temp directory, the in-memory map, or
//! PostgreSQL in a schema of its own on `RABOSH_PG_URL`) and handlers over it with a settable
//! clock. `over_backends!` runs one test body over all three.
#![allow(dead_code)]

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Barrier};

use rabosh_memory::{
    Backend, Clock, Durability, EmbeddedOptions, EmbeddedStore, InMemoryBackend, Memories, MemoryOptions,
};
use rabosh_memory_postgres::{PgBackend, PgOptions};
use tempfile::TempDir;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Embedded,
    InMemory,
    Postgres,
}

enum Concrete {
    Embedded(Arc<EmbeddedStore>),
    InMemory(Arc<InMemoryBackend>),
    Postgres(Arc<PgBackend>, PgSchema),
}

/// A schema of one fixture, dropped with it, so tests run in parallel on one server.
pub struct PgSchema(String);

impl Drop for PgSchema {
    fn drop(&mut self) {
        if let Ok(mut c) = postgres::Client::connect(&pg_url(), postgres::NoTls) {
            let _ = c.batch_execute(&format!("DROP SCHEMA IF EXISTS \"{}\" CASCADE", self.0));
        }
    }
}

/// The PostgreSQL server of the tests; absent, they fail (they are part of the suite).
pub fn pg_url() -> String {
    std::env::var("RABOSH_PG_URL").unwrap_or_else(|_| {
        panic!(
            "RABOSH_PG_URL is not set. The PostgreSQL runs of these tests need a server: run them \
             through `node scripts/with-postgres.mjs \"cargo test …\"` (npm test does), which starts a \
             throwaway one, or set RABOSH_PG_URL=postgres://user:password@host:port/database"
        )
    })
}

fn pg_fixture() -> (Arc<PgBackend>, PgSchema) {
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().subsec_nanos();
    let schema = format!("f_{}_{}_{nanos}", std::process::id(), N.fetch_add(1, Ordering::Relaxed));
    let options = PgOptions { schema: schema.clone(), pool_size: 4, ..PgOptions::default() };
    let backend = PgBackend::open(&pg_url(), options).expect("open the PostgreSQL backend");
    (Arc::new(backend), PgSchema(schema))
}

pub struct Fixture {
    pub backend: Arc<dyn Backend>,
    concrete: Concrete,
    pub now: Arc<AtomicI64>,
    dir: TempDir,
}

/// The embedded engine, for tests of what only it has (listing index, group commit, snapshots).
pub fn fixture() -> Fixture {
    fixture_on(Kind::Embedded)
}

pub fn fixture_on(kind: Kind) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let (backend, concrete): (Arc<dyn Backend>, _) = match kind {
        Kind::Embedded => {
            let options = EmbeddedOptions { durability: Durability::Buffered, ..Default::default() };
            let store = EmbeddedStore::open(dir.path().join("store"), options).unwrap();
            (store.clone(), Concrete::Embedded(store))
        }
        Kind::InMemory => {
            let map = Arc::new(InMemoryBackend::new());
            (map.clone(), Concrete::InMemory(map))
        }
        Kind::Postgres => {
            let (pg, schema) = pg_fixture();
            (pg.clone(), Concrete::Postgres(pg, schema))
        }
    };
    Fixture { backend, concrete, now: Arc::new(AtomicI64::new(1_000)), dir }
}

/// `over_backends!(a, b)`: for each test function `fn a(f: &Fixture)`, a module `a` with one
/// `#[test]` per backend (`a::embedded`, `a::in_memory`, `a::postgres`).
#[macro_export]
macro_rules! over_backends {
    ($($name:ident),* $(,)?) => {$(
        mod $name {
            #[test]
            fn embedded() {
                super::$name(&$crate::common::fixture_on($crate::common::Kind::Embedded))
            }
            #[test]
            fn in_memory() {
                super::$name(&$crate::common::fixture_on($crate::common::Kind::InMemory))
            }
            #[test]
            fn postgres() {
                super::$name(&$crate::common::fixture_on($crate::common::Kind::Postgres))
            }
        }
    )*};
}

impl Fixture {
    pub fn handler(&self, tweak: impl FnOnce(&mut MemoryOptions)) -> Memories {
        // Tests start from the plain scan and opt in to the index, so both paths stay covered.
        let mut options = MemoryOptions { listing_index: false, ..MemoryOptions::default() };
        tweak(&mut options);
        let now = self.now.clone();
        Memories::new(self.backend.clone(), options)
            .unwrap()
            .with_clock(Clock::from_fn(move || now.load(Ordering::SeqCst)))
    }

    pub fn default_handler(&self) -> Memories {
        self.handler(|_| {})
    }

    /// The directory of the embedded store (a test that reads its files).
    pub fn embedded_dir(&self) -> std::path::PathBuf {
        self.dir.path().join("store")
    }

    /// The embedded store under this fixture (a test of an engine-only feature).
    pub fn embedded(&self) -> &Arc<EmbeddedStore> {
        match &self.concrete {
            Concrete::Embedded(store) => store,
            Concrete::InMemory(_) | Concrete::Postgres(..) => panic!("this test needs the embedded backend"),
        }
    }

    pub fn set_now(&self, ms: i64) {
        self.now.store(ms, Ordering::SeqCst);
    }

    pub fn commits(&self) -> u64 {
        match &self.concrete {
            Concrete::Embedded(store) => store.stats().commits,
            Concrete::InMemory(map) => map.commits(),
            Concrete::Postgres(pg, _) => pg.commits(),
        }
    }

    /// The PostgreSQL schema of this fixture, when it is one (to open another handle on it).
    pub fn pg_schema(&self) -> Option<&str> {
        match &self.concrete {
            Concrete::Postgres(_, schema) => Some(&schema.0),
            Concrete::Embedded(_) | Concrete::InMemory(_) => None,
        }
    }

    /// The PostgreSQL backend under this fixture, when it is one (its counters).
    pub fn postgres(&self) -> Option<&Arc<PgBackend>> {
        match &self.concrete {
            Concrete::Postgres(pg, _) => Some(pg),
            Concrete::Embedded(_) | Concrete::InMemory(_) => None,
        }
    }

    pub fn values_read(&self) -> u64 {
        match &self.concrete {
            Concrete::Embedded(store) => store.stats().values_read,
            Concrete::InMemory(map) => map.values_read(),
            Concrete::Postgres(pg, _) => pg.values_read(),
        }
    }

    /// (size, lines, created, updated, accessed) from the stored metadata, in either layout.
    pub fn meta(&self, scope: &str, path: &str) -> Option<(u64, u64, i64, i64, i64)> {
        let key = format!("m:{scope}:{path}");
        let m = self.backend.read().unwrap().meta(key.as_bytes()).unwrap()?;
        let (size, lines, created, updated, accessed, _) =
            rabosh_memory::backend_kit::memory_fields(key.as_bytes(), &m).unwrap();
        Some((size, lines, created, updated, accessed))
    }
}

/// What a view of a memory holding `content` answers.
pub fn file(content: &str) -> rabosh_memory::View {
    rabosh_memory::View::File { content: content.into() }
}

pub fn content(m: &Memories, path: &str) -> Option<String> {
    match m.view(path).unwrap() {
        rabosh_memory::View::File { content, .. } => Some(content),
        _ => None,
    }
}

/// Runs `body(caller)` on `callers` threads released together by one barrier, so their
/// commands really overlap; the answers come back in caller order.
pub fn at_once<T: Send + 'static>(callers: usize, body: impl Fn(usize) -> T + Send + Sync + 'static) -> Vec<T> {
    let (start, body) = (Arc::new(Barrier::new(callers)), Arc::new(body));
    let threads: Vec<_> = (0..callers)
        .map(|c| {
            let (start, body) = (start.clone(), body.clone());
            std::thread::spawn(move || {
                start.wait();
                body(c)
            })
        })
        .collect();
    threads.into_iter().map(|t| t.join().unwrap()).collect()
}
