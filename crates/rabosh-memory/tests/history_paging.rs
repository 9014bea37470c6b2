//! History pages start at their cursor (issue 19 item 9): a page visits the versions it returns
//! and one more, never the rest of the history. Counted through a backend that counts the keys
//! each scan hands out (no timing).

mod common;

use std::ops::ControlFlow;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use common::{Fixture, Kind, fixture_on};
use rabosh_memory::{Backend, HistoryOptions, Memories, MemoryOptions, ReadView, Result, TxBody, VersionQuery, Visit};

struct Counting {
    inner: Arc<dyn Backend>,
    visited: Arc<AtomicU64>,
}

struct CountingView {
    inner: Box<dyn ReadView>,
    visited: Arc<AtomicU64>,
}

impl ReadView for CountingView {
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.inner.get(key)
    }
    fn meta(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.inner.meta(key)
    }
    fn scan_prefix(&self, prefix: &[u8], visit: &mut Visit<'_>) -> Result<()> {
        self.inner.scan_prefix(prefix, &mut |k, m| {
            self.visited.fetch_add(1, Ordering::Relaxed);
            visit(k, m)
        })
    }
    fn scan_prefix_rev(&self, prefix: &[u8], before: Option<&[u8]>, visit: &mut Visit<'_>) -> Result<()> {
        self.inner.scan_prefix_rev(prefix, before, &mut |k, m| -> ControlFlow<()> {
            self.visited.fetch_add(1, Ordering::Relaxed);
            visit(k, m)
        })
    }
}

impl Backend for Counting {
    fn read(&self) -> Result<Box<dyn ReadView>> {
        Ok(Box::new(CountingView { inner: self.inner.read()?, visited: self.visited.clone() }))
    }
    fn transact(&self, body: &mut TxBody<'_>) -> Result<()> {
        self.inner.transact(body)
    }
}

fn pages_start_at_their_cursor(f: &Fixture) {
    let writer = f.default_handler().with_history(HistoryOptions::default());
    for n in 0..1_000 {
        writer.create(&format!("/memories/{n}.md"), "x").unwrap();
    }
    let visited = Arc::new(AtomicU64::new(0));
    let counting = Arc::new(Counting { inner: f.backend.clone(), visited: visited.clone() });
    let m = Memories::new(counting, MemoryOptions::default()).unwrap();
    let (mut cursor, mut seen, mut pages) = (None, 0, 0);
    loop {
        visited.store(0, Ordering::Relaxed);
        let page =
            m.versions(&VersionQuery { limit: Some(100), cursor: cursor.clone(), ..Default::default() }).unwrap();
        let v = visited.load(Ordering::Relaxed);
        assert!(v <= 101, "page {pages} visited {v} keys for 100 versions");
        seen += page.data.len();
        pages += 1;
        match page.next_cursor {
            Some(c) => cursor = Some(c),
            None => break,
        }
    }
    assert_eq!((seen, pages), (1_000, 10));
}

/// `stats()` (on the JS thread) and `history_usage()` read each scope's running count: a key or
/// two per scope, however many versions; and the count is the one a full recount gives after
/// creates, deletes, a redaction and retention.
fn usage_reads_the_running_count(f: &Fixture) {
    let a = f.default_handler().with_history(HistoryOptions { retain_days: None, max_versions_per_memory: Some(2) });
    let b = f.handler(|o| o.scope = "other".into());
    for n in 0..300 {
        a.create(&format!("/memories/{n}.md"), "12345").unwrap();
        b.create(&format!("/memories/{n}.md"), "12").unwrap();
    }
    a.str_replace("/memories/0.md", "12345", "1").unwrap();
    a.str_replace("/memories/0.md", "1", "123").unwrap();
    b.delete("/memories/1.md").unwrap();
    let first = a.versions(&VersionQuery { path: Some("/memories/5.md".into()), ..Default::default() }).unwrap();
    a.redact(&rabosh_memory::id_hex(first.data[0].id)).unwrap();
    assert_eq!(a.prune_history().unwrap(), 1);
    let recount = |scope: &str| {
        let (mut versions, mut bytes) = (0u64, 0u64);
        f.backend
            .read()
            .unwrap()
            .scan_prefix(format!("h:{scope}:v:").as_bytes(), &mut |k, m| {
                let v = rabosh_memory::Version::decode(k, m).unwrap();
                versions += 1;
                bytes += v.size;
                ControlFlow::Continue(())
            })
            .unwrap();
        (versions, bytes)
    };
    let (av, ab) = recount("default");
    let (bv, bb) = recount("other");
    assert_eq!((av, ab), (301, 298 * 5 + 1 + 3));
    assert_eq!((bv, bb), (301, 600));
    let usage = a.history_usage().unwrap();
    assert_eq!((usage.versions, usage.bytes), (av, ab));
    let visited = Arc::new(AtomicU64::new(0));
    let view = CountingView { inner: f.backend.read().unwrap(), visited: visited.clone() };
    let all = rabosh_memory::history_usage_of(&view).unwrap();
    assert_eq!((all.versions, all.bytes), (av + bv, ab + bb));
    assert!(visited.load(Ordering::Relaxed) <= 3, "visited {} keys", visited.load(Ordering::Relaxed));
}

#[test]
fn usage_on_the_engine() {
    usage_reads_the_running_count(&fixture_on(Kind::Embedded));
}

#[test]
fn usage_in_memory() {
    usage_reads_the_running_count(&fixture_on(Kind::InMemory));
}

#[test]
fn on_the_engine() {
    pages_start_at_their_cursor(&fixture_on(Kind::Embedded));
}

#[test]
fn in_memory() {
    pages_start_at_their_cursor(&fixture_on(Kind::InMemory));
}
