//! Whole-scope export and one-commit import.

mod common;

use common::Fixture;
use rabosh_memory::{Create, Import, View};

fn pairs(items: &[(&str, &str)]) -> Vec<(String, String)> {
    items.iter().map(|(p, c)| (p.to_string(), c.to_string())).collect()
}

fn import_is_one_commit_and_export_sees_hidden_memories(f: &Fixture) {
    let h = f.default_handler();
    let files = pairs(&[
        ("/memories/a.md", "alpha\r\n"),
        ("/memories/.hidden/x", ""),
        ("/memories/node_modules/y", "\u{feff}bom"),
        ("/memories/d/e/f.md", "deep"),
    ]);
    let before = f.commits();
    let out = h.import_all(&files, false).unwrap();
    assert_eq!(out, Import::Imported { memories: 4, bytes: 7 + 6 + 4 });
    assert_eq!(f.commits() - before, 1);

    let exported: Vec<(String, String)> = h.export_all().unwrap().into_iter().map(|r| (r.path, r.content)).collect();
    let mut expected = files.clone();
    expected.sort();
    assert_eq!(exported, expected);
}

fn import_refuses_whole_batch_without_writing(f: &Fixture) {
    let h = f.default_handler();
    assert_eq!(h.create("/memories/b.md", "old").unwrap(), Create::Created);
    let before = f.commits();

    let clash = pairs(&[("/memories/a.md", "new"), ("/memories/b.md", "new")]);
    assert_eq!(h.import_all(&clash, false).unwrap(), Import::Exists { path: "/memories/b.md".into() });
    let dup = pairs(&[("/memories/a.md", "1"), ("/memories/a.md", "2")]);
    assert_eq!(h.import_all(&dup, false).unwrap(), Import::Duplicate { path: "/memories/a.md".into() });
    let root = pairs(&[("/memories", "x")]);
    assert_eq!(h.import_all(&root, false).unwrap(), Import::Exists { path: "/memories".into() });
    let big = vec![("/memories/big".to_string(), "x".repeat((1 << 20) + 1))];
    assert_eq!(h.import_all(&big, false).unwrap(), Import::TooLarge { path: "/memories/big".into(), limit: 1 << 20 });
    assert!(h.import_all(&pairs(&[("/memories//a", "x")]), false).is_err());

    assert_eq!(f.commits(), before, "a refused import writes nothing");
    assert_eq!(h.view("/memories/a.md").unwrap(), View::NotFound);
}

fn import_with_overwrite_replaces_and_keeps_created_at(f: &Fixture) {
    let h = f.default_handler();
    f.set_now(5);
    h.create("/memories/b.md", "old").unwrap();
    f.set_now(9);
    let out = h.import_all(&pairs(&[("/memories/b.md", "new")]), true).unwrap();
    assert_eq!(out, Import::Imported { memories: 1, bytes: 3 });
    let (size, _, created, updated, _) = f.meta("default", "/memories/b.md").unwrap();
    assert_eq!((size, created, updated), (3, 5, 9));
}

fn export_is_scoped(f: &Fixture) {
    let a = f.default_handler();
    let b = f.handler(|o| o.scope = "other".into());
    a.create("/memories/a", "A").unwrap();
    b.create("/memories/b", "B").unwrap();
    let paths: Vec<String> = b.export_all().unwrap().into_iter().map(|r| r.path).collect();
    assert_eq!(paths, vec!["/memories/b".to_string()]);
}

over_backends!(
    import_is_one_commit_and_export_sees_hidden_memories,
    import_refuses_whole_batch_without_writing,
    import_with_overwrite_replaces_and_keeps_created_at,
    export_is_scoped,
);
