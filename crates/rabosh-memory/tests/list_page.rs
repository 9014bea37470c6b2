//! A page of memories from their metadata (`Memories::list_page`): pages in path order cover the
//! scope once, read no value, and resume right after their cursor, with or without a search over
//! paths; every backend's seek to the cursor answers what the trait's default scan answers.

mod common;

use std::ops::ControlFlow;

use common::Fixture;
use rabosh_memory::{ListedMemory, MemoryPage, ReadView, Result, Visit};

fn pairs(n: usize) -> Vec<(String, String)> {
    let mut files: Vec<(String, String)> =
        (0..n).map(|i| (format!("/memories/d{}/{i:04}.md", i % 7), "x".repeat(i % 5))).collect();
    files.push(("/memories/.hidden".into(), "h".into()));
    files.push(("/memories/é".into(), "éé".into()));
    files
}

fn pages_cover_the_scope_once_from_metadata(f: &Fixture) {
    let h = f.default_handler();
    let files = pairs(1_000);
    h.import_all(&files, false).unwrap();
    f.handler(|o| o.scope = "other".into()).import_all(&pairs(10), false).unwrap();
    let mut want: Vec<(String, u64)> = files.iter().map(|(p, c)| (p.clone(), c.len() as u64)).collect();
    want.sort();

    let before = f.values_read();
    let (mut after, mut got, mut sizes) = (None::<String>, Vec::new(), Vec::new());
    loop {
        let page = h.list_page(after.as_deref(), 300, "").unwrap();
        sizes.push(page.memories.len());
        got.extend(page.memories.iter().map(|m: &ListedMemory| (m.path.clone(), m.size)));
        if !page.more {
            break;
        }
        after = page.memories.last().map(|m| m.path.clone());
    }
    assert_eq!(f.values_read(), before, "a page reads no memory's content");
    assert_eq!(sizes, [300, 300, 300, 102]);
    assert_eq!(got, want);
    assert!(h.list_page(None, 1_002, "").is_ok_and(|p| !p.more && p.memories.len() == 1_002));

    // A cursor that no longer names a memory, and the root, which sorts before every memory.
    let cursor = want[10].0.clone();
    h.delete(&cursor).unwrap();
    let next = h.list_page(Some(&cursor), 2, "").unwrap();
    assert_eq!(next.memories.iter().map(|m| m.path.as_str()).collect::<Vec<_>>(), [&want[11].0, &want[12].0]);
    assert_eq!(h.list_page(Some("/memories"), 1, "").unwrap().memories[0].path, want[0].0);
    assert!(h.list_page(Some("/memories/a/../b"), 1, "").is_err());
}

fn paths(page: &MemoryPage) -> Vec<&str> {
    page.memories.iter().map(|m| m.path.as_str()).collect()
}

fn a_search_pages_the_paths_containing_its_text_in_any_case(f: &Fixture) {
    let h = f.default_handler();
    let files: Vec<(String, String)> = [
        ("/memories/a", "memory at a"),
        ("/memories/a/x.md", "xx"),
        ("/memories/a.b", "dot"),
        ("/memories/a/deep/y.md", "yyy"),
        ("/memories/.hidden/h.md", "hh"),
        ("/memories/Ärger/B.md", "b"),
    ]
    .iter()
    .map(|(p, c)| ((*p).to_string(), (*c).to_string()))
    .collect();
    h.import_all(&files, false).unwrap();
    f.handler(|o| o.scope = "other".into()).import_all(&[("/memories/a/z.md".into(), "z".into())], false).unwrap();

    let before = f.values_read();
    let first = h.list_page(None, 1, "A/").unwrap();
    assert_eq!((paths(&first), first.memories[0].size, first.more), (vec!["/memories/a/deep/y.md"], 3, true));
    let second = h.list_page(Some("/memories/a/deep/y.md"), 1, "A/").unwrap();
    assert_eq!((paths(&second), second.more), (vec!["/memories/a/x.md"], false));
    assert_eq!(f.values_read(), before, "a search reads no memory's content");
    // Both sides in lower case, beyond ASCII too; hidden memories match like any other.
    assert_eq!(paths(&h.list_page(None, 10, "äRGER/b").unwrap()), ["/memories/Ärger/B.md"]);
    assert_eq!(paths(&h.list_page(None, 10, "HIDDEN").unwrap()), ["/memories/.hidden/h.md"]);
    let nothing = h.list_page(None, 10, "nowhere").unwrap();
    assert_eq!((nothing.memories.len(), nothing.more), (0, false));
    // A page of exactly the last matches says no more follow, though other paths do.
    let last = h.list_page(None, 2, "a/").unwrap();
    assert_eq!((paths(&last), last.more), (vec!["/memories/a/deep/y.md", "/memories/a/x.md"], false));
    // Empty text filters nothing.
    assert_eq!(h.list_page(None, 100, "").unwrap().memories.len(), files.len());
}

/// Every page of the paths containing `contains`, `limit` at a time.
fn search_all(h: &rabosh_memory::Memories, contains: &str, limit: usize) -> Vec<String> {
    let (mut after, mut got) = (None::<String>, Vec::new());
    loop {
        let page = h.list_page(after.as_deref(), limit, contains).unwrap();
        got.extend(page.memories.iter().map(|m| m.path.clone()));
        if !page.more {
            return got;
        }
        after = page.memories.last().map(|m| m.path.clone());
    }
}

fn a_search_answers_what_filtering_the_listing_answers(f: &Fixture) {
    let h = f.default_handler();
    // More than one page of a backend's scan between the matches; paths whose lower case is not
    // byte for byte theirs with ASCII letters lowered, or that hold what a query escapes.
    let mut files: Vec<(String, String)> = (0..1_200).map(|i| (format!("/memories/f/{i:04}"), String::new())).collect();
    files.extend((0..1_200).step_by(300).map(|i| (format!("/memories/f/{i:04}-Hit"), String::new())));
    for p in ["INFO.md", "\u{212a}elvin", "\u{130}stanbul", "back\\slash", "Ärger/Öl", "a%b_c", "x\u{80}y", "TAB\tx"]
    {
        files.push((format!("/memories/{p}"), String::new()));
    }
    h.import_all(&files, false).unwrap();
    let all = search_all(&h, "", 1_000);
    assert_eq!(all.len(), files.len());
    let needles = [
        "hit",
        "HIT",
        "info",
        "k",
        "kelvin",
        "i\u{307}",
        "istanbul",
        "\\",
        "\\s",
        "äRGER/ö",
        "%",
        "_",
        "200",
        "\t",
        "/",
        "z",
    ];
    for needle in needles {
        let want: Vec<&String> = all.iter().filter(|p| p.to_lowercase().contains(&needle.to_lowercase())).collect();
        for limit in [1, 3, 1_000] {
            let got = search_all(&h, needle, limit);
            assert_eq!(got.iter().collect::<Vec<_>>(), want, "{needle:?} by {limit}");
        }
    }
}

/// A view that keeps only `scan_prefix` of the backend's, so `scan_prefix_after` is the default.
struct DefaultAfter(Box<dyn ReadView>);

impl ReadView for DefaultAfter {
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.0.get(key)
    }
    fn meta(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.0.meta(key)
    }
    fn scan_prefix(&self, prefix: &[u8], visit: &mut Visit<'_>) -> Result<()> {
        self.0.scan_prefix(prefix, visit)
    }
}

fn keys_after(view: &dyn ReadView, prefix: &[u8], after: Option<&[u8]>, take: usize) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    view.scan_prefix_after(prefix, after, &mut |k, _| {
        out.push(k.to_vec());
        if out.len() == take { ControlFlow::Break(()) } else { ControlFlow::Continue(()) }
    })
    .unwrap();
    out
}

fn seeks_answer_as_the_default_scan(f: &Fixture) {
    f.default_handler().import_all(&pairs(50), false).unwrap();
    let prefix = b"m:default:/memories/";
    let cursors: [Option<&[u8]>; 7] = [
        None,
        Some(b"a"),
        Some(b"m:default:/memories"),
        Some(b"m:default:/memories/d3/0010.md"),
        Some(b"m:default:/memories/d3/0010.md\0"),
        Some(b"m:default:/memories/\xff"),
        Some(b"z"),
    ];
    for after in cursors {
        for take in [1, 3, 1_000] {
            let own = keys_after(&*f.backend.read().unwrap(), prefix, after, take);
            let default = keys_after(&DefaultAfter(f.backend.read().unwrap()), prefix, after, take);
            assert_eq!(own, default, "after {after:?}, take {take}");
        }
    }
}

over_backends!(
    pages_cover_the_scope_once_from_metadata,
    a_search_pages_the_paths_containing_its_text_in_any_case,
    a_search_answers_what_filtering_the_listing_answers,
    seeks_answer_as_the_default_scan
);
