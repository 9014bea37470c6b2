//! Version history over both backends: what each command records, versions/version/revert/redact,
//! retention, `at()`, host edits with preconditions and their race, and redaction reaching the disk.

mod common;

use std::sync::{Arc, Barrier};

use common::{Fixture, fixture_on};
use rabosh_memory::{
    Actor, HistoryOptions, HostRemove, HostWrite, Memories, Operation, Precondition, Redact, Revert, VersionQuery,
    View, hex, id_hex, sha256,
};

fn recording(f: &Fixture) -> Memories {
    f.default_handler().with_history(HistoryOptions::default())
}

fn ops(m: &Memories) -> Vec<(Operation, Option<String>)> {
    let mut v: Vec<_> =
        m.versions(&VersionQuery::default()).unwrap().data.into_iter().map(|v| (v.operation, v.path)).collect();
    v.reverse();
    v
}

#[allow(clippy::unnecessary_wraps)] // an expected path column, which is optional
fn p(s: &str) -> Option<String> {
    Some(s.to_string())
}

fn every_command_records_its_versions(f: &Fixture) {
    use Operation::*;
    let m = recording(f).with_actor(Actor { kind: "session".into(), id: "s1".into() }).unwrap();
    m.create("/memories/a/x.md", "one").unwrap();
    m.str_replace("/memories/a/x.md", "one", "two").unwrap();
    m.insert("/memories/a/x.md", Some(0), "zero").unwrap();
    m.create("/memories/a/y.md", "why").unwrap();
    let moved = common::content(&m, "/memories/a/x.md").unwrap();
    m.rename("/memories/a", "/memories/b").unwrap();
    m.view("/memories/b/x.md").unwrap();
    m.delete("/memories/b").unwrap();
    assert_eq!(
        ops(&m),
        vec![
            (Created, p("/memories/a/x.md")),
            (Modified, p("/memories/a/x.md")),
            (Modified, p("/memories/a/x.md")),
            (Created, p("/memories/a/y.md")),
            (Renamed, p("/memories/b/x.md")),
            (Renamed, p("/memories/b/y.md")),
            (Deleted, p("/memories/b/x.md")),
            (Deleted, p("/memories/b/y.md")),
        ]
    );
    let all = m.versions(&VersionQuery::default()).unwrap().data;
    // The memory id holds across the edits, the rename and the deletion.
    let x: Vec<_> = all.iter().filter(|v| v.path.as_deref().is_some_and(|p| p.ends_with("x.md"))).collect();
    assert_eq!(x.len(), 5);
    assert!(x.iter().all(|v| v.memory_id == x[0].memory_id));
    assert!(all.iter().all(|v| v.actor.as_ref().is_some_and(|a| a.id == "s1")));
    assert!(all.windows(2).all(|w| w[0].id > w[1].id), "newest first, ids strictly ordered");
    let renamed = all.iter().find(|v| v.operation == Renamed && v.path == p("/memories/b/x.md")).unwrap();
    let (_, content) = m.version(&id_hex(renamed.id)).unwrap().unwrap();
    assert_eq!(content.as_ref(), Some(&moved));
    assert_eq!(renamed.sha256_hex(), Some(hex(&sha256(moved.as_bytes()))));
    let deleted = &all[0];
    assert_eq!((deleted.content_sha256, deleted.size), (None, 0));
    assert_eq!(m.version(&id_hex(deleted.id)).unwrap().unwrap().1, None);
}

fn refusals_and_history_off_record_nothing(f: &Fixture) {
    let off = f.default_handler();
    off.create("/memories/old.md", "before").unwrap();
    let m = recording(f);
    m.create("/memories/old.md", "again").unwrap(); // refused: exists
    m.str_replace("/memories/none.md", "a", "b").unwrap();
    m.delete("/memories/none").unwrap();
    assert_eq!(ops(&m), vec![]);
    off.create("/memories/unseen.md", "x").unwrap();
    m.str_replace("/memories/old.md", "before", "after").unwrap();
    assert_eq!(ops(&m), vec![(Operation::Modified, p("/memories/old.md"))]);
}

fn pages_filters_and_cursor(f: &Fixture) {
    let m = recording(f);
    for i in 0..7 {
        f.set_now(1_000 + i);
        m.create(&format!("/memories/d{}/f{i}.md", i % 2), &format!("c{i}")).unwrap();
    }
    let mut seen = Vec::new();
    let mut cursor = None;
    loop {
        let page = m.versions(&VersionQuery { limit: Some(3), cursor: cursor.clone(), ..Default::default() }).unwrap();
        seen.extend(page.data.iter().map(|v| v.path.clone().unwrap()));
        match page.next_cursor {
            Some(c) => cursor = Some(c),
            None => break,
        }
    }
    let expected: Vec<String> = (0..7).rev().map(|i| format!("/memories/d{}/f{i}.md", i % 2)).collect();
    assert_eq!(seen, expected);
    let q = VersionQuery { path_prefix: p("/memories/d1"), since_ms: Some(1_002), ..Default::default() };
    let got: Vec<_> = m.versions(&q).unwrap().data.into_iter().map(|v| v.path.unwrap()).collect();
    assert_eq!(got, vec!["/memories/d1/f5.md", "/memories/d1/f3.md"]);
    let q = VersionQuery { path_prefix: p("/memories/d"), ..Default::default() };
    assert!(m.versions(&q).unwrap().data.is_empty(), "a prefix is a directory, not a string prefix");
}

fn revert_and_redact(f: &Fixture) {
    let m = recording(f);
    m.create("/memories/n.md", "secret: 1234").unwrap();
    m.str_replace("/memories/n.md", "secret: 1234", "nothing").unwrap();
    let first = m.versions(&VersionQuery::default()).unwrap().data.last().unwrap().id;
    let Revert::Reverted { version_id: Some(v) } = m.revert("/memories/n.md", &id_hex(first)).unwrap() else {
        panic!("reverted")
    };
    assert_eq!(common::content(&m, "/memories/n.md").as_deref(), Some("secret: 1234"));
    assert_eq!(m.version(&id_hex(v)).unwrap().unwrap().0.operation, Operation::Modified);
    assert_eq!(m.redact(&id_hex(first)).unwrap(), Redact::Redacted);
    assert_eq!(m.redact(&id_hex(first)).unwrap(), Redact::AlreadyRedacted);
    let (red, content) = m.version(&id_hex(first)).unwrap().unwrap();
    assert_eq!((red.path, red.content_sha256, red.size, content), (None, None, 0, None));
    assert!(red.redacted_ms.is_some());
    assert_eq!(m.revert("/memories/n.md", &id_hex(first)).unwrap(), Revert::NoContent);
    assert_eq!(m.redact("00").unwrap(), Redact::UnknownVersion);
    // The live memory is the host's to remove: redaction never edits it.
    assert_eq!(common::content(&m, "/memories/n.md").as_deref(), Some("secret: 1234"));
}

fn retention_keeps_the_newest(f: &Fixture) {
    let m =
        f.default_handler().with_history(HistoryOptions { retain_days: Some(1.0), max_versions_per_memory: Some(2) });
    m.create("/memories/r.md", "0").unwrap();
    for i in 1..5 {
        m.create("/memories/s.md", "").ok();
        m.str_replace("/memories/r.md", &(i - 1).to_string(), &i.to_string()).unwrap();
    }
    assert_eq!(m.prune_history().unwrap(), 3);
    let r: Vec<_> = m
        .versions(&VersionQuery { path: p("/memories/r.md"), ..Default::default() })
        .unwrap()
        .data
        .into_iter()
        .map(|v| v.sha256_hex().unwrap())
        .collect();
    assert_eq!(r, vec![hex(&sha256(b"4")), hex(&sha256(b"3"))]);
    f.set_now(1_000 + 86_400_001);
    m.expire_before(0).unwrap();
    assert_eq!(m.history_usage().unwrap().versions, 0);
}

fn at_answers_as_the_model_saw_it(f: &Fixture) {
    let m = recording(f);
    f.set_now(10);
    m.create("/memories/a.md", "first").unwrap();
    f.set_now(20);
    m.create("/memories/d/b.md", "bee").unwrap();
    let at_20 = (m.view("/memories").unwrap(), m.view("/memories/a.md").unwrap());
    f.set_now(30);
    m.str_replace("/memories/a.md", "first", "second").unwrap();
    m.rename("/memories/d", "/memories/e").unwrap();
    f.set_now(40);
    m.delete("/memories/a.md").unwrap();
    let then = m.at(25).unwrap();
    assert_eq!(
        (
            m.view_at(&m.past(&then).unwrap(), "/memories").unwrap(),
            m.view_at(&m.past(&then).unwrap(), "/memories/a.md").unwrap()
        ),
        at_20
    );
    let mid = m.at(35).unwrap();
    assert_eq!(m.view_at(&m.past(&mid).unwrap(), "/memories/a.md").unwrap(), common::file("second"));
    assert_eq!(m.view_at(&m.past(&mid).unwrap(), "/memories/d").unwrap(), View::NotFound);
    assert_eq!(
        m.view_at(&m.past(&m.at(5).unwrap()).unwrap(), "/memories").unwrap(),
        View::Dir { total: 0, entries: vec![] }
    );
    assert_eq!(m.view_at(&m.past(&m.at(45).unwrap()).unwrap(), "/memories").unwrap(), m.view("/memories").unwrap());
}

/// Issue 33: an `At` built before a redaction answers, after it, as one built after it: the
/// redacted content is not shown (the file view is not recorded, the listing incomplete).
fn at_built_before_a_redaction_answers_as_after_it(f: &Fixture) {
    let m = recording(f);
    f.set_now(10);
    m.create("/memories/n.md", "secret: 1234").unwrap();
    f.set_now(20);
    m.str_replace("/memories/n.md", "secret: 1234", "nothing").unwrap();
    let past = m.at(15).unwrap();
    assert_eq!(m.view_past(&past, "/memories/n.md").unwrap(), common::file("secret: 1234"));
    let first = m.versions(&VersionQuery::default()).unwrap().data.last().unwrap().id;
    assert_eq!(m.redact(&id_hex(first)).unwrap(), Redact::Redacted);
    let fresh = m.at(15).unwrap();
    for path in ["/memories/n.md", "/memories"] {
        let view = m.view_past(&past, path).unwrap();
        assert_eq!(view, m.view_past(&fresh, path).unwrap(), "{path}");
        assert_eq!(view, View::NotRecorded, "{path}");
    }
    // Not frozen either way: a change the instant's state did not depend on changes nothing.
    let later = m.at(25).unwrap();
    m.create("/memories/z.md", "z").unwrap();
    assert_eq!(m.view_past(&later, "/memories/n.md").unwrap(), common::file("nothing"));
}

fn host_edits_with_preconditions(f: &Fixture) {
    use Operation::*;
    let m = recording(f);
    let base = "/memories/h.md";
    assert_eq!(m.host_get(base).unwrap(), None);
    let created = m.host_put(base, "v1", &Precondition { if_none_match_any: true, ..Default::default() }).unwrap();
    let HostWrite::Written { sha256: h1, version_id: Some(v1) } = created else { panic!("{created:?}") };
    let got = m.host_get(base).unwrap().unwrap();
    assert_eq!((got.content.as_str(), got.sha256, got.version_id), ("v1", h1, Some(v1)));
    // The same request again: its result holds, so it succeeds without writing.
    let again = m.host_put(base, "v1", &Precondition { if_none_match_any: true, ..Default::default() }).unwrap();
    assert!(matches!(again, HostWrite::Unchanged { .. }));
    let refused = m.host_put(base, "v2", &Precondition { if_none_match_any: true, ..Default::default() }).unwrap();
    assert_eq!(refused, HostWrite::PreconditionFailed { current: Some(h1) });
    // The model edits; the host's stale base is refused, and the model sees host writes at once.
    m.str_replace(base, "v1", "model").unwrap();
    let stale = Precondition { if_match: Some(hex(&h1)), ..Default::default() };
    assert_eq!(
        m.host_put(base, "v2", &stale).unwrap(),
        HostWrite::PreconditionFailed { current: Some(sha256(b"model")) }
    );
    let fresh = Precondition { if_match: Some(hex(&sha256(b"model")).to_uppercase()), ..Default::default() };
    assert!(matches!(m.host_put(base, "host", &fresh).unwrap(), HostWrite::Written { .. }));
    assert_eq!(common::content(&m, base).as_deref(), Some("host"));
    assert_eq!(
        m.host_remove(base, Some(&hex(&h1))).unwrap(),
        HostRemove::PreconditionFailed { current: sha256(b"host") }
    );
    assert!(matches!(
        m.host_remove(base, Some(&hex(&sha256(b"host")))).unwrap(),
        HostRemove::Removed { version_id: Some(_) }
    ));
    assert_eq!(m.host_remove(base, None).unwrap(), HostRemove::Absent);
    let got: Vec<_> = ops(&m).into_iter().map(|(o, _)| o).collect();
    assert_eq!(got, vec![Created, Modified, Modified, Deleted]);
}

fn sixteen_conditional_puts_one_winner(f: &Fixture) {
    let m = Arc::new(recording(f));
    m.create("/memories/race.md", "base").unwrap();
    let base = hex(&sha256(b"base"));
    let barrier = Arc::new(Barrier::new(16));
    let handles: Vec<_> = (0..16)
        .map(|i| {
            let (m, barrier, base) = (m.clone(), barrier.clone(), base.clone());
            std::thread::spawn(move || {
                barrier.wait();
                let pre = Precondition { if_match: Some(base), ..Default::default() };
                m.host_put("/memories/race.md", &format!("writer {i}"), &pre).unwrap()
            })
        })
        .collect();
    let outcomes: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    let winners = outcomes.iter().filter(|o| matches!(o, HostWrite::Written { .. })).count();
    assert_eq!(winners, 1, "{outcomes:?}");
    let current = m.host_get("/memories/race.md").unwrap().unwrap();
    for o in &outcomes {
        match o {
            HostWrite::Written { sha256, .. } => assert_eq!(*sha256, current.sha256),
            HostWrite::PreconditionFailed { current: c } => assert_eq!(*c, Some(current.sha256)),
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(m.history_usage().unwrap().versions, 2);
}

fn import_expiry_and_access_stamps(f: &Fixture) {
    use Operation::*;
    let m = f.handler(|o| o.track_access = true).with_history(HistoryOptions::default());
    m.create("/memories/keep.md", "k").unwrap();
    let files =
        vec![("/memories/i.md".to_string(), "i".to_string()), ("/memories/keep.md".to_string(), "K".to_string())];
    m.import_all(&files, true).unwrap();
    f.set_now(5_000);
    m.view("/memories/keep.md").unwrap(); // an access stamp: a commit, not a version
    assert_eq!(m.expire_before(5_000).unwrap().count, 1);
    assert_eq!(
        ops(&m),
        vec![
            (Created, p("/memories/keep.md")),
            (Created, p("/memories/i.md")),
            (Modified, p("/memories/keep.md")),
            (Deleted, p("/memories/i.md")),
        ]
    );
}

fn store_wide_history_usage_counts_every_scope(f: &Fixture) {
    let a = recording(f);
    let b = f.handler(|o| o.scope = "other".into()).with_history(HistoryOptions::default());
    a.create("/memories/x.md", "12345").unwrap();
    b.create("/memories/x.md", "12").unwrap();
    b.delete("/memories/x.md").unwrap();
    let all = rabosh_memory::history_usage_of(&*f.backend.read().unwrap()).unwrap();
    assert_eq!((all.versions, all.bytes), (3, 7));
    assert_eq!(a.history_usage().unwrap().versions, 1);
}

over_backends!(
    store_wide_history_usage_counts_every_scope,
    import_expiry_and_access_stamps,
    every_command_records_its_versions,
    refusals_and_history_off_record_nothing,
    pages_filters_and_cursor,
    revert_and_redact,
    retention_keeps_the_newest,
    at_answers_as_the_model_saw_it,
    at_built_before_a_redaction_answers_as_after_it,
    host_edits_with_preconditions,
    sixteen_conditional_puts_one_winner,
);

/// Grep every file of the store for the redacted text: after redact's compaction, nothing.
#[test]
fn redaction_reaches_every_file_of_the_store() {
    let f = fixture_on(common::Kind::Embedded);
    let m = recording(&f);
    let secret = "SSN 078-05-1120 of Jane";
    m.create("/memories/p.md", &format!("note: {secret}")).unwrap();
    m.str_replace("/memories/p.md", secret, "[removed]").unwrap();
    let dir = f.embedded_dir();
    assert!(grep(&dir, secret.as_bytes()), "the secret is on disk before redaction");
    let created = m.versions(&VersionQuery { operation: Some(Operation::Created), ..Default::default() }).unwrap();
    m.redact(&id_hex(created.data[0].id)).unwrap();
    assert!(!grep(&dir, secret.as_bytes()), "redaction left the secret in a file of the store");
    assert_eq!(common::content(&m, "/memories/p.md").as_deref(), Some("note: [removed]"));
}

/// An `At` built before a redaction pins nothing: the secret leaves every file of the store while
/// it is still held, and its views do not bring it back.
#[test]
fn an_at_held_across_a_redaction_keeps_no_byte_of_it() {
    let f = fixture_on(common::Kind::Embedded);
    let m = recording(&f);
    let secret = "SSN 078-05-1120 of Jane";
    f.set_now(10);
    m.create("/memories/p.md", &format!("note: {secret}")).unwrap();
    f.set_now(20);
    m.str_replace("/memories/p.md", secret, "[removed]").unwrap();
    let past = m.at(15).unwrap();
    let created = m.versions(&VersionQuery { operation: Some(Operation::Created), ..Default::default() }).unwrap();
    m.redact(&id_hex(created.data[0].id)).unwrap();
    let dir = f.embedded_dir();
    assert!(!grep(&dir, secret.as_bytes()), "an at() view held the secret's segment");
    assert_eq!(m.view_past(&past, "/memories/p.md").unwrap(), View::NotRecorded);
    drop(past);
}

fn grep(dir: &std::path::Path, needle: &[u8]) -> bool {
    std::fs::read_dir(dir).unwrap().any(|e| {
        let path = e.unwrap().path();
        if path.is_dir() {
            return grep(&path, needle);
        }
        let bytes = std::fs::read(&path).unwrap();
        bytes.windows(needle.len()).any(|w| w == needle)
    })
}
