//! A scope a page at a time (`browse.rs`): a directory's children from metadata, and export pages
//! that resume at their cursor, on every backend.

mod common;

use common::Fixture;

fn seed(f: &Fixture) -> rabosh_memory::Memories {
    let h = f.default_handler();
    let mut files: Vec<(String, String)> = [
        ("/memories/a", "memory at a"),
        ("/memories/a/x.md", "xx"),
        ("/memories/a.b", "dot"),
        ("/memories/a/deep/y.md", "yyy"),
        ("/memories/.hidden/h.md", "hh"),
    ]
    .iter()
    .map(|(p, c)| (p.to_string(), c.to_string()))
    .collect();
    files.extend((0..25).map(|i| (format!("/memories/p/n{i:02}"), "c".to_string())));
    h.import_all(&files, false).unwrap();
    h
}

fn children_are_one_level_with_what_lies_below(f: &Fixture) {
    let h = seed(f);
    let root = h.children("/memories", None, 100).unwrap();
    assert_eq!((root.memories, root.bytes, root.total, root.next.as_deref()), (30, 11 + 2 + 3 + 3 + 2 + 25, 4, None));
    let got: Vec<(&str, Option<u64>, u64, u64)> =
        root.entries.iter().map(|c| (c.name.as_str(), c.memory, c.memories, c.bytes)).collect();
    assert_eq!(got, vec![(".hidden", None, 1, 2), ("a", Some(11), 2, 5), ("a.b", Some(3), 0, 0), ("p", None, 25, 25)]);
    let values = f.values_read();
    let mut names = Vec::new();
    let mut after: Option<String> = None;
    loop {
        let page = h.children("/memories/p", after.as_deref(), 10).unwrap();
        names.extend(page.entries.into_iter().map(|c| c.name));
        match page.next {
            Some(next) => after = Some(next),
            None => break,
        }
    }
    assert_eq!(names, (0..25).map(|i| format!("n{i:02}")).collect::<Vec<_>>());
    assert_eq!(f.values_read(), values, "children read metadata only");
}

fn exports_resume_at_their_cursor(f: &Fixture) {
    let h = seed(f);
    let whole: Vec<String> = h.export_all().unwrap().into_iter().map(|r| r.path).collect();
    let mut paged = Vec::new();
    let mut after: Option<String> = None;
    loop {
        let page = h.export_page(None, after.as_deref(), 7).unwrap();
        assert!(page.memories.len() <= 7);
        paged.extend(page.memories.into_iter().map(|r| r.path));
        match page.next {
            Some(next) => after = Some(next),
            None => break,
        }
    }
    assert_eq!(paged, whole);
}

over_backends!(children_are_one_level_with_what_lies_below, exports_resume_at_their_cursor);
