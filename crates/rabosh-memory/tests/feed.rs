//! The change feed (`feed.rs`) on every backend: replayed from any cursor it hands out, it
//! answers exactly the paths a model says changed after that cursor, each once, as of its latest
//! change, in commit order; it stays one entry per path however often a path is written; a
//! cursor it can no longer answer for is answered `reset`; and redaction takes an erased path out
//! of it.

mod common;

use std::collections::BTreeMap;
use std::ops::ControlFlow;

use common::Fixture;
use rabosh_memory::{
    ChangeKind, ChangePage, Create, Delete, HistoryOptions, Insert, Memories, MemoryOptions, Rename, VersionQuery,
};
use rabosh_testkit::Rng;

/// Every change after `since`, read in pages of `limit`; the cursor to go on from. On
/// PostgreSQL a page is read only below every transaction in flight (another test's, on the same
/// server, may hold it back a while): it reads on until past a transaction id taken now, after
/// every commit of the caller.
fn drain(f: &Fixture, m: &Memories, since: Option<&str>, limit: usize) -> (Vec<(String, ChangeKind)>, String) {
    read_all(m, since, limit, f.pg_schema().is_some())
}

fn read_all(m: &Memories, since: Option<&str>, limit: usize, postgres: bool) -> (Vec<(String, ChangeKind)>, String) {
    let target = postgres.then(|| {
        let mut c = postgres::Client::connect(&common::pg_url(), postgres::NoTls).unwrap();
        let id: i64 = c.query_one("SELECT pg_current_xact_id()::TEXT::INT8", &[]).unwrap().get(0);
        u64::try_from(id).unwrap()
    });
    let mut out = Vec::new();
    let mut cursor = since.map(str::to_string);
    loop {
        let ChangePage { changes, cursor: next, reset } = m.changes(cursor.as_deref(), Some(limit)).unwrap();
        assert!(!reset, "a cursor the feed handed out was answered reset");
        let full = changes.len() == limit;
        out.extend(changes.into_iter().map(|c| (c.path, c.kind)));
        let behind = target.is_some_and(|t| next.position <= t);
        cursor = Some(next.encode());
        if !full && !behind {
            return (out, cursor.unwrap());
        }
        if !full {
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
    }
}

/// What the model holds: the memories there are, and for each path ever changed the step of its
/// latest change and its kind.
#[derive(Default)]
struct Model {
    files: std::collections::BTreeSet<String>,
    latest: BTreeMap<String, (usize, ChangeKind)>,
    kinds: std::collections::BTreeSet<ChangeKind>,
}

impl Model {
    fn record(&mut self, path: String, change: (usize, ChangeKind)) {
        self.kinds.insert(change.1);
        self.latest.insert(path, change);
    }

    fn under(&self, path: &str) -> Vec<String> {
        let prefix = format!("{path}/");
        self.files.iter().filter(|p| *p == path || p.starts_with(&prefix)).cloned().collect()
    }

    /// The paths whose latest change came after step `after`, in the order the feed must give.
    fn since(&self, after: usize) -> Vec<(String, ChangeKind)> {
        let mut out: Vec<_> =
            self.latest.iter().filter(|(_, (step, _))| *step > after).map(|(p, (s, k))| (*s, p.clone(), *k)).collect();
        out.sort();
        out.into_iter().map(|(_, p, k)| (p, k)).collect()
    }
}

const DIRS: [&str; 3] = ["/memories/a", "/memories/b", "/memories/a/d"];
const NAMES: [&str; 3] = ["x", "y", "z.md"];

fn random_path(rng: &mut Rng) -> String {
    format!("{}/{}", DIRS[rng.below(3) as usize], NAMES[rng.below(3) as usize])
}

fn model_replay_from_any_cursor(f: &Fixture) {
    let m = f.default_handler();
    let mut model = Model::default();
    // The same sequence on every backend.
    let mut rng = Rng::new(7);
    // cursors[i]: handed out after step i.
    let (first, mut cursor) = drain(f, &m, None, 4);
    assert!(first.is_empty());
    let mut cursors = vec![cursor.clone()];
    for step in 1..=70 {
        let path = random_path(&mut rng);
        match rng.below(5) {
            0 | 1 => {
                if m.create(&path, "v").unwrap() == Create::Created {
                    model.files.insert(path.clone());
                    model.record(path, (step, ChangeKind::Created));
                }
            }
            2 => {
                if m.insert(&path, Some(0), "more").unwrap() == Insert::Edited {
                    model.record(path, (step, ChangeKind::Modified));
                }
            }
            3 => {
                let target = if rng.below(2) == 0 { path } else { DIRS[rng.below(3) as usize].to_string() };
                let gone = model.under(&target);
                if let Delete::Deleted { .. } = m.delete(&target).unwrap() {
                    for p in gone {
                        model.files.remove(&p);
                        model.record(p, (step, ChangeKind::Deleted));
                    }
                }
            }
            _ => {
                let (from, to) = match rng.below(2) {
                    0 => (path, random_path(&mut rng)),
                    _ => (DIRS[rng.below(3) as usize].to_string(), DIRS[rng.below(3) as usize].replace('a', "c")),
                };
                let moving = model.under(&from);
                if let Rename::Renamed { .. } = m.rename(&from, &to).unwrap() {
                    for p in moving {
                        let q = format!("{to}{}", &p[from.len()..]);
                        model.files.remove(&p);
                        model.files.insert(q.clone());
                        model.record(p, (step, ChangeKind::RenamedFrom));
                        model.record(q, (step, ChangeKind::RenamedTo));
                    }
                }
            }
        }
        // Read on incrementally, as a watcher does; it sees what this step changed.
        let (got, next) = drain(f, &m, Some(&cursor), 2);
        let mut want: Vec<_> = model.since(step - 1);
        want.retain(|(p, _)| model.latest[p].0 == step);
        assert_eq!(got, want, "step {step}");
        cursor = next;
        cursors.push(cursor.clone());
    }
    assert_eq!(model.kinds.len(), 5, "the commands made every kind of change: {:?}", model.kinds);
    for (after, since) in cursors.iter().enumerate() {
        for limit in [1, 3, 1000] {
            let (got, _) = drain(f, &m, Some(since), limit);
            assert_eq!(got, model.since(after), "replayed from the cursor of step {after} in pages of {limit}");
        }
    }
}

/// The rows of the feed's own key spaces (the embedded and in-memory backends keep it as rows).
fn feed_rows(f: &Fixture) -> Vec<String> {
    let view = f.backend.read().unwrap();
    let mut rows = Vec::new();
    for prefix in [&b"f:"[..], b"g:"] {
        view.scan_prefix(prefix, &mut |k, _| {
            rows.push(String::from_utf8_lossy(k).into_owned());
            ControlFlow::Continue(())
        })
        .unwrap();
    }
    rows
}

/// The feed's stored entries naming `needle` (PostgreSQL keeps them in a table of their own).
fn stored_naming(f: &Fixture, needle: &str) -> usize {
    match f.pg_schema() {
        Some(schema) => {
            let mut c = postgres::Client::connect(&common::pg_url(), postgres::NoTls).unwrap();
            let sql = format!("SELECT count(*) FROM \"{schema}\".feed WHERE position($1::bytea IN k) > 0");
            let n: i64 = c.query_one(&sql, &[&needle.as_bytes()]).unwrap().get(0);
            usize::try_from(n).unwrap()
        }
        None => feed_rows(f).iter().filter(|r| r.contains(needle)).count(),
    }
}

fn one_entry_per_path_however_often_it_is_written(f: &Fixture) {
    let m = f.default_handler();
    m.create("/memories/hot", "0").unwrap();
    m.create("/memories/cold", "0").unwrap();
    for i in 0..150 {
        m.insert("/memories/hot", Some(0), &i.to_string()).unwrap();
    }
    // One entry, and no pointer to it: the memory's metadata names its position.
    assert_eq!(stored_naming(f, "/hot"), 1);
    let (got, _) = drain(f, &m, None, 10);
    assert_eq!(
        got,
        vec![("/memories/cold".to_string(), ChangeKind::Created), ("/memories/hot".to_string(), ChangeKind::Modified)]
    );
}

fn a_view_that_only_stamps_access_is_no_change(f: &Fixture) {
    let m = f.handler(|o| o.track_access = true);
    m.create("/memories/a", "x").unwrap();
    let (_, cursor) = drain(f, &m, None, 10);
    m.view("/memories/a").unwrap();
    assert_eq!(drain(f, &m, Some(&cursor), 10).0, vec![]);
}

fn a_cursor_not_handed_out_is_refused_or_reset(f: &Fixture) {
    let m = f.default_handler();
    m.create("/memories/a", "x").unwrap();
    assert!(m.changes(Some("not a cursor"), None).is_err());
    // A cursor from the future (another store, a store restored from a backup) is a reset.
    let page = m.changes(Some("ffffffffffffff"), None).unwrap();
    assert!(page.reset && page.changes.is_empty());
    let got = drain(f, &m, Some(&page.cursor.encode()), 10).0;
    if f.pg_schema().is_some() {
        // The reset's cursor is PostgreSQL's cursor of now: at least once (see above).
        assert!(got.is_empty() || got == vec![("/memories/a".to_string(), ChangeKind::Created)], "{got:?}");
    } else {
        assert_eq!(got, vec![]);
    }
}

fn redaction_takes_an_erased_path_out_of_the_feed(f: &Fixture) {
    let m = f.default_handler().with_history(HistoryOptions::default());
    m.create("/memories/keep", "k").unwrap();
    m.create("/memories/secret-name", "s").unwrap();
    let (_, before) = drain(f, &m, None, 10);
    m.insert("/memories/secret-name", Some(0), "t").unwrap();
    m.delete("/memories/secret-name").unwrap();
    m.insert("/memories/keep", Some(0), "more").unwrap();
    let (_, after_delete) = drain(f, &m, Some(&before), 10);
    assert_eq!(stored_naming(f, "secret-name"), if f.pg_schema().is_some() { 1 } else { 2 });
    let q = VersionQuery { path: Some("/memories/secret-name".into()), ..Default::default() };
    for v in m.versions(&q).unwrap().data {
        m.redact(&rabosh_memory::id_hex(v.id)).unwrap();
    }
    assert_eq!(stored_naming(f, "secret-name"), 0, "the feed still names the erased path");
    // A reader from before the erasure could have missed the deletion: it is told to re-list.
    let page = m.changes(Some(&before), None).unwrap();
    assert!(page.reset, "a cursor from before the erasure was not reset");
    let page = m.changes(Some(&after_delete), None).unwrap();
    assert!(page.reset, "a cursor from before the erasure was not reset");
    // Reading on from the cursor of the reset answer: what changes next.
    m.create("/memories/later", "l").unwrap();
    assert_eq!(
        drain(f, &m, Some(&page.cursor.encode()), 10).0,
        vec![("/memories/later".to_string(), ChangeKind::Created)]
    );
}

fn a_reader_starting_now_gets_only_what_comes_after(f: &Fixture) {
    let m = f.default_handler();
    m.create("/memories/before", "b").unwrap();
    let now = m.changes(None, Some(0)).unwrap();
    assert!(now.changes.is_empty() && !now.reset);
    m.create("/memories/after", "a").unwrap();
    let got = drain(f, &m, Some(&now.cursor.encode()), 10).0;
    let after = ("/memories/after".to_string(), ChangeKind::Created);
    if f.pg_schema().is_some() {
        // PostgreSQL's cursor of now is the oldest transaction still in flight on the server
        // (docs/guide/changes.md): with other transactions open, a change committed just
        // before it may come again; none is ever missed.
        let before = ("/memories/before".to_string(), ChangeKind::Created);
        assert!(got == vec![after.clone()] || got == vec![before, after], "{got:?}");
    } else {
        assert_eq!(got, vec![after]);
    }
}

over_backends!(
    a_reader_starting_now_gets_only_what_comes_after,
    model_replay_from_any_cursor,
    one_entry_per_path_however_often_it_is_written,
    a_view_that_only_stamps_access_is_no_change,
    a_cursor_not_handed_out_is_refused_or_reset,
    redaction_takes_an_erased_path_out_of_the_feed,
);

fn open_embedded(dir: &std::path::Path, shared: bool) -> std::sync::Arc<rabosh_memory::EmbeddedStore> {
    let options = rabosh_memory::EmbeddedOptions { shared, ..Default::default() };
    rabosh_memory::EmbeddedStore::open(dir, options).unwrap()
}

fn handler_on(store: &std::sync::Arc<rabosh_memory::EmbeddedStore>) -> Memories {
    Memories::new(store.clone(), MemoryOptions::default()).unwrap()
}

#[test]
fn a_cursor_resumes_across_reopen_and_across_handles() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    let cursor = {
        let store = open_embedded(&dir, false);
        let m = handler_on(&store);
        m.create("/memories/a", "1").unwrap();
        let (got, cursor) = read_all(&m, None, 10, false);
        assert_eq!(got, vec![("/memories/a".to_string(), ChangeKind::Created)]);
        m.create("/memories/b", "2").unwrap();
        store.close().unwrap();
        cursor
    };
    let (one, two) = (open_embedded(&dir, true), open_embedded(&dir, true));
    let (m1, m2) = (handler_on(&one), handler_on(&two));
    m1.rename("/memories/a", "/memories/c").unwrap();
    // The other handle (another process's state) reads what the first committed.
    assert_eq!(
        read_all(&m2, Some(&cursor), 1, false).0,
        vec![
            ("/memories/b".to_string(), ChangeKind::Created),
            ("/memories/a".to_string(), ChangeKind::RenamedFrom),
            ("/memories/c".to_string(), ChangeKind::RenamedTo),
        ]
    );
}

#[test]
fn a_commit_by_a_build_without_the_feed_is_never_passed_over_silently() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    let store = open_embedded(&dir, true);
    let m = handler_on(&store);
    m.create("/memories/a", "1").unwrap();
    let (_, cursor) = read_all(&m, None, 10, false);
    // Another process of an older build: the engine alone, writing a memory row.
    let meta = {
        use rabosh_memory::Backend;
        store.read().unwrap().meta(b"m:default:/memories/a").unwrap().unwrap()
    };
    let old = rabosh::Store::open(&dir, rabosh::Options { shared: true, ..Default::default() }).unwrap();
    let mut batch = rabosh::Batch::new();
    batch.put(b"m:default:/memories/sneaky".to_vec(), b"1".to_vec(), meta);
    old.write(batch).unwrap();
    old.close().unwrap();
    // Its change is in no entry: the reader is not moved past it...
    let page = m.changes(Some(&cursor), None).unwrap();
    assert!(!page.reset && page.changes.is_empty());
    assert_eq!(page.cursor.encode(), cursor);
    // ...and once a commit keeps the feed again, a reader from before is told to re-list.
    m.create("/memories/b", "2").unwrap();
    assert!(m.changes(Some(&cursor), None).unwrap().reset);
}

#[test]
fn a_store_written_before_the_feed_answers_reset_until_its_first_feed_commit() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    {
        let old = rabosh::Store::open(&dir, rabosh::Options::default()).unwrap();
        let mut batch = rabosh::Batch::new();
        batch.put(b"c:unrelated".to_vec(), Vec::new(), Vec::new());
        old.write(batch).unwrap();
        old.close().unwrap();
    }
    let store = open_embedded(&dir, false);
    let m = handler_on(&store);
    let page = m.changes(None, None).unwrap();
    assert!(page.reset, "changes from before the feed existed may be missing: the reader must re-list");
    m.create("/memories/new", "n").unwrap();
    assert!(m.changes(None, None).unwrap().reset);
    assert_eq!(
        read_all(&m, Some(&page.cursor.encode()), 10, false).0,
        vec![("/memories/new".to_string(), ChangeKind::Created)]
    );
}
