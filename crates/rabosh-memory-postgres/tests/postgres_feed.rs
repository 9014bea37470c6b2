//! The change feed's commit order on PostgreSQL (`feed.rs`): transaction ids are taken before
//! commit and commits land in any order, so a reader must never be moved past an id whose
//! transaction is still in flight. Here the earlier-numbered transaction commits after the
//! later-numbered one; the reader is held back until it ends, and then gets both.

mod postgres_util;

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use postgres_util::Schema;
use rabosh_memory::{ChangeKind, Memories, MemoryOptions};

/// A page reads below every transaction in flight on the server, so one test's commits in flight
/// would hold another's first page back below its own first commit (which the next page then
/// returns) or below a migration's horizon (a second reset): the tests here run one at a time,
/// each taking the lock first so it is released after the test's schema is dropped.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(PoisonError::into_inner)
}

fn changes(m: &Memories, since: &str) -> (Vec<(String, ChangeKind)>, String) {
    let page = m.changes(Some(since), None).unwrap();
    assert!(!page.reset);
    (page.changes.into_iter().map(|c| (c.path, c.kind)).collect(), page.cursor.encode())
}

#[test]
fn a_later_numbered_commit_landing_first_holds_the_reader_back_until_the_earlier_one_ends() {
    let _serial = serial();
    let s = Schema::new("feed_order");
    let m = Memories::new(Arc::new(s.open()), MemoryOptions::default()).unwrap();
    m.create("/memories/first", "1").unwrap();
    let page = m.changes(None, None).unwrap();
    assert!(!page.reset, "a new schema's feed starts with its first memory");
    let cursor = page.cursor.encode();

    // The earlier-numbered writer: its transaction id is taken, its entry written, no commit yet
    // (what the backend's own commit flight does, held open).
    let mut early = s.client();
    let mut tx = early.transaction().unwrap();
    let early_id: i64 = tx
        .query_one(
            &format!(
                "INSERT INTO \"{0}\".feed (k, s, x, t) VALUES ('m:default:/memories/early'::BYTEA, \
                 'm:default:'::BYTEA, pg_current_xact_id()::TEXT::INT8, 1) RETURNING x",
                s.name
            ),
            &[],
        )
        .unwrap()
        .get(0);
    // The later-numbered one commits first.
    m.create("/memories/late", "2").unwrap();
    let (got, held) = changes(&m, &cursor);
    assert_eq!(got, vec![], "the reader went past a transaction still in flight");
    let held_at = u64::from_str_radix(&held, 16).unwrap();
    assert!(held_at <= u64::try_from(early_id).unwrap(), "the cursor {held_at} passed the open transaction {early_id}");

    tx.commit().unwrap();
    // Read on until both are there: another test's transaction in flight on the same server
    // may hold the reader back a while longer (held back, never moved past).
    let (mut got, mut cursor) = (Vec::new(), held);
    for _ in 0..2000 {
        let (more, next) = changes(&m, &cursor);
        got.extend(more);
        cursor = next;
        if got.len() >= 2 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    assert_eq!(
        got,
        vec![("/memories/early".to_string(), ChangeKind::Created), ("/memories/late".to_string(), ChangeKind::Created)]
    );
}

#[test]
fn another_handle_reads_what_one_commits_and_a_page_ends_inside_a_commit() {
    let _serial = serial();
    let s = Schema::new("feed_handles");
    let (a, b) = (s.open(), s.open());
    let ma = Memories::new(Arc::new(a), MemoryOptions::default()).unwrap();
    let mb = Memories::new(Arc::new(b), MemoryOptions::default()).unwrap();
    let start = mb.changes(None, None).unwrap().cursor.encode();
    for name in ["a", "b", "c"] {
        ma.create(&format!("/memories/d/{name}"), "x").unwrap();
    }
    ma.rename("/memories/d", "/memories/e").unwrap();
    let mut cursor = start;
    let mut got = Vec::new();
    loop {
        let page = mb.changes(Some(&cursor), Some(2)).unwrap();
        cursor = page.cursor.encode();
        let n = page.changes.len();
        got.extend(page.changes.into_iter().map(|c| (c.path, c.kind)));
        if n < 2 {
            break;
        }
    }
    let want: Vec<(String, ChangeKind)> = ["a", "b", "c"]
        .iter()
        .map(|n| (format!("/memories/d/{n}"), ChangeKind::RenamedFrom))
        .chain(["a", "b", "c"].iter().map(|n| (format!("/memories/e/{n}"), ChangeKind::RenamedTo)))
        .collect();
    assert_eq!(got, want);
}

#[test]
fn a_schema_migrated_with_memories_in_it_answers_reset_then_reads_on() {
    let _serial = serial();
    let s = Schema::new("feed_migrated");
    let m = Memories::new(Arc::new(s.open()), MemoryOptions::default()).unwrap();
    m.create("/memories/old", "o").unwrap();
    // Back to version 3, as a store written before the feed: the migration runs at next open.
    let mut c = s.client();
    c.batch_execute(&format!(
        "DROP TABLE \"{0}\".feed; DROP TABLE \"{0}\".feed_horizon; \
         DELETE FROM \"{0}\".rabosh_migrations WHERE version = 4; UPDATE \"{0}\".rabosh_schema SET version = 3 WHERE id = 1",
        s.name
    ))
    .unwrap();
    let m = Memories::new(Arc::new(s.open()), MemoryOptions::default()).unwrap();
    let page = m.changes(None, None).unwrap();
    assert!(page.reset, "the memories written before the feed are in no entry: the reader must re-list");
    m.create("/memories/new", "n").unwrap();
    // A page reads below every transaction in flight on the server, other tests' too: read on
    // until the change is in, for as long as a busy server may hold one open.
    let mut got = Vec::new();
    let mut cursor = page.cursor.encode();
    let until = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while got.is_empty() && std::time::Instant::now() < until {
        let (more, next) = changes(&m, &cursor);
        got.extend(more);
        cursor = next;
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert_eq!(got, vec![("/memories/new".to_string(), ChangeKind::Created)]);
}
