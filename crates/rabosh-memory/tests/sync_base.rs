//! The sync seam (issue 22) over every backend: several host edits and the sync's base records
//! in one commit or none, each precondition decided inside it, results that already hold not
//! refused, path overlaps refused, versions recorded with the sync's actor.

mod common;

use common::Fixture;
use rabosh_memory::{
    Actor, BaseWrite, HistoryOptions, Memories, Operation, SyncApply, SyncOp, VersionQuery, hex, sha256,
};

fn recording(f: &Fixture) -> Memories {
    f.default_handler().with_history(HistoryOptions::default())
}

fn h(s: &str) -> String {
    hex(&sha256(s.as_bytes()))
}

fn put(path: &str, content: &str, if_match: Option<&str>) -> SyncOp {
    SyncOp::Put { path: path.into(), content: content.into(), if_match: if_match.map(h) }
}

fn base(tag: &str, value: Option<&str>, expect: Option<&str>) -> BaseWrite {
    BaseWrite {
        tag: tag.into(),
        value: value.map(|v| v.as_bytes().to_vec()),
        expect: expect.map(|v| v.as_bytes().to_vec()),
    }
}

fn one_commit_or_none(f: &Fixture) {
    let m = recording(f);
    let actor = Actor { kind: "memory_store".into(), id: "memstore_1".into() };
    let ok = m
        .sync_apply(
            &[put("/memories/a.md", "A", None), put("/memories/d/b.md", "B", None)],
            &[base("x:1", Some("b1"), None), base("x:2", Some("b2"), None)],
            Some(actor.clone()),
        )
        .unwrap();
    let SyncApply::Applied { version_ids } = ok else { panic!("{ok:?}") };
    assert_eq!(version_ids.len(), 2);
    let bases = m.sync_bases("x:").unwrap();
    assert_eq!(bases, vec![("x:1".into(), b"b1".to_vec()), ("x:2".into(), b"b2".to_vec())]);
    let versions = m.versions(&VersionQuery::default()).unwrap().data;
    assert!(versions.iter().all(|v| v.actor.as_ref() == Some(&actor) && v.operation == Operation::Created));
    // A stale precondition in the second op: the first op and the base are not written either.
    let commits = f.commits();
    let refused = m
        .sync_apply(
            &[put("/memories/a.md", "A2", Some("A")), put("/memories/d/b.md", "B2", Some("stale"))],
            &[base("x:1", Some("b1'"), Some("b1"))],
            None,
        )
        .unwrap();
    assert_eq!(refused, SyncApply::OpRefused { index: 1, current: Some(h("B")) });
    assert_eq!(common::content(&m, "/memories/a.md").as_deref(), Some("A"));
    assert_eq!(m.sync_bases("x:1").unwrap()[0].1, b"b1".to_vec());
    // A base that changed under the caller: nothing written.
    let changed =
        m.sync_apply(&[put("/memories/a.md", "A2", Some("A"))], &[base("x:1", None, Some("other"))], None).unwrap();
    assert_eq!(changed, SyncApply::BaseChanged { index: 0 });
    assert_eq!(common::content(&m, "/memories/a.md").as_deref(), Some("A"));
    assert_eq!(f.commits(), commits, "a refused sync commit writes nothing");
    // Base records are not memories.
    assert_eq!(m.sync_entries("/memories").unwrap().len(), 2);
    assert_eq!(m.export_all().unwrap().len(), 2);
}

fn results_that_hold_are_not_refused(f: &Fixture) {
    let m = recording(f);
    m.sync_apply(&[put("/memories/a.md", "A", None)], &[], None).unwrap();
    // The same pull again (another process did it already): no refusal, nothing new recorded.
    let again = m.sync_apply(&[put("/memories/a.md", "A", Some("old"))], &[], None).unwrap();
    assert_eq!(again, SyncApply::Applied { version_ids: vec![] });
    let mv = SyncOp::Move { from: "/memories/a.md".into(), to: "/memories/b.md".into(), if_match: h("A") };
    let SyncApply::Applied { version_ids } = m.sync_apply(std::slice::from_ref(&mv), &[], None).unwrap() else {
        panic!()
    };
    assert_eq!(version_ids.len(), 1);
    let v = m.versions(&VersionQuery::default()).unwrap().data;
    assert_eq!(v[0].operation, Operation::Renamed);
    assert_eq!(v[0].memory_id, v[1].memory_id, "a move keeps the memory id");
    assert_eq!(m.sync_apply(&[mv], &[], None).unwrap(), SyncApply::Applied { version_ids: vec![] });
    let rm = SyncOp::Remove { path: "/memories/b.md".into(), if_match: h("A") };
    assert!(matches!(m.sync_apply(std::slice::from_ref(&rm), &[], None).unwrap(), SyncApply::Applied { .. }));
    assert_eq!(m.sync_apply(&[rm], &[], None).unwrap(), SyncApply::Applied { version_ids: vec![] });
    assert!(m.sync_entries("/memories").unwrap().is_empty());
}

fn overlapping_paths_are_refused(f: &Fixture) {
    let m = recording(f);
    m.sync_apply(&[put("/memories/a", "file", None), put("/memories/d/x.md", "x", None)], &[], None).unwrap();
    assert_eq!(
        m.sync_apply(&[put("/memories/a/b.md", "under a file", None)], &[], None).unwrap(),
        SyncApply::PathConflict { index: 0, path: "/memories/a".into() }
    );
    assert_eq!(
        m.sync_apply(&[put("/memories/d", "over a directory", None)], &[], None).unwrap(),
        SyncApply::PathConflict { index: 0, path: "/memories/d/x.md".into() }
    );
    let entries = m.sync_entries("/memories/d").unwrap();
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0].sha256, sha256(b"x"));
    assert!(entries[0].memory_id.is_some());
}

over_backends!(one_commit_or_none, results_that_hold_are_not_refused, overlapping_paths_are_refused);
