//! A create decided by the backend at commit (`WriteSet::write_new`, `Backend::transact_new`)
//! rather than by a read in its body, on all three backends: a taken path answers Exists and
//! commits nothing, one path raced by many callers has exactly one creator, and over PostgreSQL
//! neighbours created at once in one directory never abort each other.

mod common;

use std::sync::Arc;

use common::{Fixture, at_once, content};
use rabosh_memory::{Create, Memories, View};

fn listing(m: &Memories, dir: &str) -> (u64, usize) {
    match m.view(dir).unwrap() {
        View::Dir { total, entries } => (total, entries.len()),
        other => panic!("{dir} is not a directory: {other:?}"),
    }
}

fn taken_path_commits_nothing(f: &Fixture) {
    for listing_index in [false, true] {
        let m = f.handler(|o| o.listing_index = listing_index);
        let dir = format!("/memories/taken{listing_index}");
        let path = format!("{dir}/a.md");
        assert_eq!(m.create(&path, "first").unwrap(), Create::Created);
        let commits = f.commits();
        assert_eq!(m.create(&path, "second, longer").unwrap(), Create::Exists);
        assert_eq!(f.commits(), commits, "a refused create committed");
        assert_eq!(content(&m, &path).as_deref(), Some("first"));
        assert_eq!(listing(&m, &dir), (5, 1), "the listing counts the first content only");
        assert_eq!(m.usage().unwrap().memories, if listing_index { 2 } else { 1 });
    }
}

fn one_path_raced_has_one_creator(f: &Fixture) {
    const CALLERS: usize = 8;
    let m = Arc::new(f.handler(|o| o.listing_index = true));
    let racer = m.clone();
    let answers: Vec<(usize, Create)> =
        at_once(CALLERS, move |c| (c, racer.create("/memories/race/one.md", &"x".repeat(c + 1)).unwrap()));
    let created: Vec<usize> = answers.iter().filter(|(_, a)| *a == Create::Created).map(|(c, _)| *c).collect();
    assert_eq!(created.len(), 1, "{answers:?}");
    assert!(answers.iter().all(|(_, a)| matches!(a, Create::Created | Create::Exists)), "{answers:?}");
    let winner = created[0];
    assert_eq!(content(&m, "/memories/race/one.md"), Some("x".repeat(winner + 1)));
    assert_eq!(listing(&m, "/memories/race"), (winner as u64 + 1, 1));
}

over_backends!(taken_path_commits_nothing, one_path_raced_has_one_creator);

/// Creates of distinct neighbours in one directory: no read of their targets, so no predicate
/// lock of one covers the index page another inserts into, and none is aborted.
#[test]
fn postgres_neighbours_created_at_once_never_conflict() {
    const CALLERS: usize = 4;
    const EACH: usize = 25;
    let f = common::fixture_on(common::Kind::Postgres);
    let m = Arc::new(f.handler(|o| o.listing_index = true));
    // Enough rows first that the index has pages beyond the first one, and the new names sort
    // BEFORE them, so they go into the first leaf page of `kv`, the one that also held
    // `c:history`: every transaction of a store without history reads that setting, and
    // PostgreSQL's predicate lock of a btree read covers the whole leaf page (issue 24; see
    // bench/results/postgres.md). With the setting read from kv this run had 35 failures.
    for i in 0..300 {
        assert_eq!(m.create(&format!("/memories/seed/a{i:03}.md"), "s").unwrap(), Create::Created);
    }
    let pg = f.postgres().expect("a PostgreSQL fixture").clone();
    let before = pg.conflicts();
    let creator = m.clone();
    at_once(CALLERS, move |c| {
        for i in 0..EACH {
            assert_eq!(creator.create(&format!("/memories/seed/0{i:02}_{c}.md"), "n").unwrap(), Create::Created);
        }
    });
    assert_eq!(pg.conflicts() - before, 0, "serialization failures among creates of distinct neighbours");
    assert_eq!(listing(&m, "/memories/seed"), ((300 + CALLERS * EACH) as u64, 300 + CALLERS * EACH));
}
