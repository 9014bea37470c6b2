//! Every outcome of every command, and every check-order rule of contract §4, one test each.

mod common;

use common::{Fixture, content, file};
use rabosh_memory::{Create, Delete, Error, Insert, Memories, MemoryOptions, Rename, StrReplace, View};

/// The outcome of an edit whose snippet starts at `first_line`.
fn edited(first_line: u64, snippet: &[&str]) -> StrReplace {
    StrReplace::Edited { first_line, snippet: snippet.iter().map(std::string::ToString::to_string).collect() }
}

// ---- options and guards -------------------------------------------------------------------

fn options_are_validated(f: &Fixture) {
    for scope in ["", "a:b", "a b", "é", &"x".repeat(65)] {
        let options = MemoryOptions { scope: scope.to_string(), ..Default::default() };
        match Memories::new(f.backend.clone(), options) {
            Err(Error::InvalidOption { option: "scope", value }) => assert_eq!(value, scope),
            other => panic!("{scope:?}: {:?}", other.map(|_| ())),
        }
    }
    let options = MemoryOptions { max_memory_bytes: 0, ..Default::default() };
    match Memories::new(f.backend.clone(), options) {
        Err(Error::InvalidOption { option: "max_memory_bytes", value }) => assert_eq!(value, "0"),
        other => panic!("{:?}", other.map(|_| ())),
    }
    let options = MemoryOptions { scope: "A-z_0.9".into(), max_memory_bytes: 1, ..Default::default() };
    assert!(Memories::new(f.backend.clone(), options).is_ok());
}

fn unnormalised_paths_are_caller_bugs(f: &Fixture) {
    let m = f.default_handler();
    let bad = "/memories/a/../b";
    assert!(matches!(m.view(bad), Err(Error::NotNormalised(_))));
    assert!(matches!(m.view("/memories/"), Err(Error::NotNormalised(_))));
    assert!(matches!(m.create("/memoriesfoo.md", "x"), Err(Error::NotNormalised(_))));
    assert!(matches!(m.str_replace("/memories//a", "a", "b"), Err(Error::NotNormalised(_))));
    assert!(matches!(m.insert("memories/a", Some(0), "x"), Err(Error::NotNormalised(_))));
    assert!(matches!(m.delete("/memories/."), Err(Error::NotNormalised(_))));
    assert!(matches!(m.rename("/memories/a", "/memories/b/"), Err(Error::NotNormalised(_))));
    assert!(matches!(m.rename("/memories/a/", "/memories/b"), Err(Error::NotNormalised(_))));
    assert_eq!(f.commits(), 0);
}

fn scopes_are_separate(f: &Fixture) {
    let a = f.handler(|o| o.scope = "a".into());
    let b = f.handler(|o| o.scope = "b".into());
    assert_eq!(a.create("/memories/x", "1").unwrap(), Create::Created);
    assert_eq!(b.view("/memories/x").unwrap(), View::NotFound);
    assert_eq!(b.create("/memories/x", "22").unwrap(), Create::Created);
    assert_eq!(b.delete("/memories/x").unwrap(), Delete::Deleted { count: 1 });
    assert_eq!(a.view("/memories/x").unwrap(), file("1"));
    assert_eq!(a.usage().unwrap().memories, 1);
    assert_eq!(b.usage().unwrap().memories, 0);
}

// ---- view ----------------------------------------------------------------------------------

fn view_file(f: &Fixture) {
    let m = f.default_handler();
    m.create("/memories/a.md", "x\r\ny\n").unwrap();
    assert_eq!(m.view("/memories/a.md").unwrap(), file("x\r\ny\n"));
    // Lines are counted on `\n` only (the count the line limit is decided on).
    assert_eq!(f.meta("default", "/memories/a.md").unwrap().1, 3);
}

fn view_memory_wins_over_directory(f: &Fixture) {
    let m = f.default_handler();
    m.create("/memories/a/b", "under").unwrap();
    m.create("/memories/a", "file").unwrap();
    assert_eq!(m.view("/memories/a").unwrap(), file("file"));
}

fn view_root_always_lists(f: &Fixture) {
    let m = f.default_handler();
    assert_eq!(m.view("/memories").unwrap(), View::Dir { total: 0, entries: vec![] });
    m.create("/memories/.hidden", "x").unwrap();
    assert_eq!(m.view("/memories").unwrap(), View::Dir { total: 0, entries: vec![] });
}

fn view_missing_is_not_found(f: &Fixture) {
    let m = f.default_handler();
    m.create("/memories/ab", "x").unwrap();
    assert_eq!(m.view("/memories/a").unwrap(), View::NotFound);
}

fn view_directory_with_only_hidden_content_is_not_found(f: &Fixture) {
    let m = f.default_handler();
    m.create("/memories/d/.git/x", "x").unwrap();
    m.create("/memories/d/node_modules", "x").unwrap();
    assert_eq!(m.view("/memories/d").unwrap(), View::NotFound);
    // Viewed directly, a hidden directory lists its own content.
    assert!(matches!(m.view("/memories/d/.git").unwrap(), View::Dir { total: 1, .. }));
}

fn view_too_many_lines(f: &Fixture) {
    let m = f.default_handler();
    m.create("/memories/ok", &"\n".repeat(999_998)).unwrap();
    m.create("/memories/big", &"\n".repeat(999_999)).unwrap();
    assert_eq!(m.view("/memories/ok").unwrap(), file(&"\n".repeat(999_998)));
    let read = f.values_read();
    assert_eq!(m.view("/memories/big").unwrap(), View::TooManyLines);
    assert_eq!(f.values_read(), read, "the line limit is decided from metadata");
}

fn view_with_track_access_records_access_in_one_commit(f: &Fixture) {
    let m = f.handler(|o| o.track_access = true);
    m.create("/memories/a", "x").unwrap();
    assert_eq!(f.meta("default", "/memories/a").unwrap().4, 0);
    f.set_now(5_000);
    let before = f.commits();
    assert_eq!(m.view("/memories/a").unwrap(), file("x"));
    assert_eq!(f.commits() - before, 1);
    let (size, lines, created, updated, accessed) = f.meta("default", "/memories/a").unwrap();
    assert_eq!((size, lines, created, updated, accessed), (1, 1, 1_000, 1_000, 5_000));
    // Directory views and misses record nothing.
    assert!(matches!(m.view("/memories").unwrap(), View::Dir { .. }));
    assert_eq!(m.view("/memories/zz").unwrap(), View::NotFound);
    assert_eq!(f.commits() - before, 1);
}

fn view_without_track_access_commits_nothing(f: &Fixture) {
    let m = f.default_handler();
    m.create("/memories/a", "x").unwrap();
    let before = f.commits();
    m.view("/memories/a").unwrap();
    m.view("/memories").unwrap();
    assert_eq!(f.commits(), before);
    assert_eq!(f.meta("default", "/memories/a").unwrap().4, 0);
}

// ---- create --------------------------------------------------------------------------------

fn create_root_exists(f: &Fixture) {
    let m = f.handler(|o| o.create_overwrites = true);
    assert_eq!(m.create("/memories", "x").unwrap(), Create::Exists);
    assert_eq!(f.commits(), 0);
}

fn create_too_large_comes_before_exists(f: &Fixture) {
    let m = f.handler(|o| o.max_memory_bytes = 4);
    assert_eq!(m.create("/memories/a", "1234").unwrap(), Create::Created);
    assert_eq!(m.create("/memories/a", "12345").unwrap(), Create::TooLarge { limit: 4 });
    assert_eq!(m.create("/memories/b", "ééé").unwrap(), Create::TooLarge { limit: 4 });
    assert_eq!(m.view("/memories/b").unwrap(), View::NotFound);
}

fn create_refuses_to_overwrite_by_default(f: &Fixture) {
    let m = f.default_handler();
    assert_eq!(m.create("/memories/a", "old").unwrap(), Create::Created);
    assert_eq!(m.create("/memories/a", "new").unwrap(), Create::Exists);
    assert_eq!(content(&m, "/memories/a").unwrap(), "old");
}

fn create_overwrite_keeps_created_at(f: &Fixture) {
    let m = f.handler(|o| o.create_overwrites = true);
    m.create("/memories/a", "old").unwrap();
    f.set_now(2_000);
    assert_eq!(m.create("/memories/a", "newer\n").unwrap(), Create::Created);
    assert_eq!(content(&m, "/memories/a").unwrap(), "newer\n");
    assert_eq!(f.meta("default", "/memories/a").unwrap(), (6, 2, 1_000, 2_000, 0));
}

fn create_beside_a_directory_of_the_same_name(f: &Fixture) {
    let m = f.default_handler();
    m.create("/memories/a/b", "x").unwrap();
    assert_eq!(m.create("/memories/a", "y").unwrap(), Create::Created);
    assert_eq!(m.usage().unwrap().memories, 2);
}

// ---- str_replace ---------------------------------------------------------------------------

fn str_replace_root_and_missing_are_not_found(f: &Fixture) {
    let m = f.default_handler();
    m.create("/memories/d/x", "abc").unwrap();
    assert_eq!(m.str_replace("/memories", "a", "b").unwrap(), StrReplace::NotFound);
    assert_eq!(m.str_replace("/memories/zz", "a", "b").unwrap(), StrReplace::NotFound);
    assert_eq!(m.str_replace("/memories/d", "a", "b").unwrap(), StrReplace::NotFound);
    // The path check comes before the old_str checks.
    assert_eq!(m.str_replace("/memories/zz", "", "b").unwrap(), StrReplace::NotFound);
}

fn str_replace_empty_or_absent_old_str_is_no_match(f: &Fixture) {
    let m = f.default_handler();
    m.create("/memories/a", "abc").unwrap();
    let before = f.commits();
    assert_eq!(m.str_replace("/memories/a", "", "x").unwrap(), StrReplace::NoMatch);
    assert_eq!(m.str_replace("/memories/a", "abd", "x").unwrap(), StrReplace::NoMatch);
    assert_eq!(m.str_replace("/memories/a", "ABC", "x").unwrap(), StrReplace::NoMatch);
    assert_eq!(f.commits(), before);
}

fn str_replace_multiple_lists_every_start_with_overlaps(f: &Fixture) {
    let m = f.default_handler();
    m.create("/memories/a", "ab ab\nx\nab\naaaa").unwrap();
    assert_eq!(m.str_replace("/memories/a", "ab", "z").unwrap(), StrReplace::Multiple { lines: vec![1, 1, 3] });
    // `aa` in `aaaa` occurs twice without overlaps, three times with.
    assert_eq!(m.str_replace("/memories/a", "aa", "z").unwrap(), StrReplace::Multiple { lines: vec![4, 4, 4] });
    assert_eq!(content(&m, "/memories/a").unwrap(), "ab ab\nx\nab\naaaa");
}

fn str_replace_self_overlapping_once_is_replaced(f: &Fixture) {
    let m = f.default_handler();
    m.create("/memories/a", "aaa").unwrap();
    assert!(matches!(m.str_replace("/memories/a", "aa", "X").unwrap(), StrReplace::Edited { .. }));
    assert_eq!(content(&m, "/memories/a").unwrap(), "Xa");
}

fn str_replace_multiple_comes_before_too_large(f: &Fixture) {
    let m = f.handler(|o| o.max_memory_bytes = 10);
    m.create("/memories/a", "ab ab").unwrap();
    let huge = "x".repeat(100);
    assert_eq!(m.str_replace("/memories/a", "ab", &huge).unwrap(), StrReplace::Multiple { lines: vec![1, 1] });
}

fn str_replace_too_large(f: &Fixture) {
    let m = f.handler(|o| o.max_memory_bytes = 10);
    m.create("/memories/a", "0123456789").unwrap();
    assert_eq!(m.str_replace("/memories/a", "0", "ab").unwrap(), StrReplace::TooLarge { limit: 10 });
    assert_eq!(content(&m, "/memories/a").unwrap(), "0123456789");
    assert!(matches!(m.str_replace("/memories/a", "0", "a").unwrap(), StrReplace::Edited { .. }));
}

fn str_replace_snippet_of_new_content(f: &Fixture) {
    let m = f.default_handler();
    m.create("/memories/a", "1\n2\n3\n4\n5\n6\n7\n8").unwrap();
    f.set_now(3_000);
    let got = m.str_replace("/memories/a", "5", "five\nFIVE").unwrap();
    let snippet = ["3", "4", "five", "FIVE", "6"].map(String::from).to_vec();
    assert_eq!(got, StrReplace::Edited { first_line: 3, snippet });
    assert_eq!(f.meta("default", "/memories/a").unwrap(), (23, 9, 1_000, 3_000, 0));
    let got = m.str_replace("/memories/a", "1\n", "").unwrap();
    assert_eq!(got, edited(1, &["2", "3", "4"]));
}

fn str_replace_traps(f: &Fixture) {
    let m = f.default_handler();
    // old_str spanning several lines matches; the changed line is where it starts.
    m.create("/memories/a", "x\nstart\nend\ny").unwrap();
    let got = m.str_replace("/memories/a", "start\nend", "one").unwrap();
    assert_eq!(got, edited(1, &["x", "one", "y"]));
    // Replacement patterns are inserted literally.
    m.create("/memories/b", "k = v").unwrap();
    m.str_replace("/memories/b", "v", "$& $' $` $1 $$").unwrap();
    assert_eq!(content(&m, "/memories/b").unwrap(), "k = $& $' $` $1 $$");
    // An empty new_str deletes old_str.
    m.str_replace("/memories/b", " $1", "").unwrap();
    assert_eq!(content(&m, "/memories/b").unwrap(), "k = $& $' $` $$");
    // CRLF content is split on \n only: the \r stays part of the line.
    m.create("/memories/c", "a\r\nb\r\nc").unwrap();
    let got = m.str_replace("/memories/c", "b", "B").unwrap();
    assert_eq!(got, edited(1, &["a\r", "B\r", "c"]));
}

// ---- insert --------------------------------------------------------------------------------

fn insert_root_and_missing_are_not_found(f: &Fixture) {
    let m = f.default_handler();
    m.create("/memories/d/x", "abc").unwrap();
    assert_eq!(m.insert("/memories", Some(0), "x").unwrap(), Insert::NotFound);
    assert_eq!(m.insert("/memories/zz", Some(0), "x").unwrap(), Insert::NotFound);
    assert_eq!(m.insert("/memories/d", Some(0), "x").unwrap(), Insert::NotFound);
    // The path check comes before the line check.
    assert_eq!(m.insert("/memories/zz", None, "x").unwrap(), Insert::NotFound);
}

fn insert_invalid_line(f: &Fixture) {
    let m = f.default_handler();
    m.create("/memories/e", "").unwrap();
    m.create("/memories/a", "a\nb\n").unwrap();
    m.create("/memories/b", "a\nb").unwrap();
    assert_eq!(m.insert("/memories/e", Some(1), "x").unwrap(), Insert::InvalidLine { count: 0 });
    assert_eq!(m.insert("/memories/a", Some(3), "x").unwrap(), Insert::InvalidLine { count: 2 });
    assert_eq!(m.insert("/memories/b", Some(-1), "x").unwrap(), Insert::InvalidLine { count: 2 });
    assert_eq!(m.insert("/memories/b", None, "x").unwrap(), Insert::InvalidLine { count: 2 });
    assert_eq!(m.insert("/memories/b", Some(i64::MAX), "x").unwrap(), Insert::InvalidLine { count: 2 });
}

fn insert_invalid_line_comes_before_too_large(f: &Fixture) {
    let m = f.handler(|o| o.max_memory_bytes = 4);
    m.create("/memories/a", "a\n").unwrap();
    assert_eq!(m.insert("/memories/a", Some(5), "long line").unwrap(), Insert::InvalidLine { count: 1 });
    assert_eq!(m.insert("/memories/a", Some(1), "long line").unwrap(), Insert::TooLarge { limit: 4 });
    assert_eq!(m.insert("/memories/a", Some(0), "b").unwrap(), Insert::Edited);
    assert_eq!(content(&m, "/memories/a").unwrap(), "b\na\n");
}

fn insert_edits(f: &Fixture) {
    let m = f.default_handler();
    for (before, at, text, after) in [
        ("a\n", 1, "", "a\n"),
        ("", 0, "x", "x\n"),
        ("a\nb", 1, "x\n", "a\nx\nb\n"),
        ("a\nb\n", 2, "c", "a\nb\nc\n"),
        ("a\n\n", 1, "x", "a\nx\n"),
        ("a\r\nb", 2, "c", "a\r\nb\nc\n"),
        ("a", 0, "x\ny", "x\ny\na\n"),
    ] {
        m.create("/memories/t", before).unwrap();
        f.set_now(7_000);
        assert_eq!(m.insert("/memories/t", Some(at), text).unwrap(), Insert::Edited, "{before:?}");
        assert_eq!(content(&m, "/memories/t").unwrap(), after, "{before:?} {at} {text:?}");
        let (_, _, created, updated, _) = f.meta("default", "/memories/t").unwrap();
        assert_eq!((created, updated), (1_000, 7_000));
        f.set_now(1_000);
        m.delete("/memories/t").unwrap();
    }
}

// ---- delete --------------------------------------------------------------------------------

fn delete_root(f: &Fixture) {
    let m = f.default_handler();
    m.create("/memories/a", "x").unwrap();
    assert_eq!(m.delete("/memories").unwrap(), Delete::IsRoot);
    assert_eq!(m.usage().unwrap().memories, 1);
}

fn delete_missing(f: &Fixture) {
    let m = f.default_handler();
    m.create("/memories/ab", "x").unwrap();
    assert_eq!(m.delete("/memories/a").unwrap(), Delete::NotFound);
    assert_eq!(f.commits(), 1);
}

fn delete_memory_and_subtree_including_hidden(f: &Fixture) {
    let m = f.default_handler();
    for p in [
        "/memories/a",
        "/memories/a/b",
        "/memories/a/.h/c",
        "/memories/a/node_modules/x",
        "/memories/ab",
        "/memories/a.md",
    ] {
        m.create(p, "x").unwrap();
    }
    let before = f.commits();
    assert_eq!(m.delete("/memories/a").unwrap(), Delete::Deleted { count: 4 });
    assert_eq!(f.commits() - before, 1);
    assert_eq!(m.usage().unwrap().memories, 2);
    assert_eq!(m.view("/memories/ab").unwrap(), file("x"));
    assert_eq!(m.view("/memories/a.md").unwrap(), file("x"));
}

fn delete_directory_only_and_file_only(f: &Fixture) {
    let m = f.default_handler();
    m.create("/memories/d/x", "1").unwrap();
    m.create("/memories/d/y/z", "2").unwrap();
    assert_eq!(m.delete("/memories/d").unwrap(), Delete::Deleted { count: 2 });
    m.create("/memories/f", "1").unwrap();
    assert_eq!(m.delete("/memories/f").unwrap(), Delete::Deleted { count: 1 });
    assert_eq!(m.usage().unwrap().memories, 0);
}

// ---- rename --------------------------------------------------------------------------------

fn rename_root_source_comes_first(f: &Fixture) {
    let m = f.default_handler();
    assert_eq!(m.rename("/memories", "/memories").unwrap(), Rename::IsRoot);
    assert_eq!(m.rename("/memories", "/memories/a").unwrap(), Rename::IsRoot);
}

fn rename_to_root_or_itself_is_destination_exists(f: &Fixture) {
    let m = f.default_handler();
    // Decided before the source is looked at: nothing needs to exist.
    assert_eq!(m.rename("/memories/a", "/memories").unwrap(), Rename::DestinationExists);
    assert_eq!(m.rename("/memories/a", "/memories/a").unwrap(), Rename::DestinationExists);
}

fn rename_inside_itself_comes_before_not_found(f: &Fixture) {
    let m = f.default_handler();
    assert_eq!(m.rename("/memories/a", "/memories/a/b").unwrap(), Rename::Inside);
    m.create("/memories/a", "x").unwrap();
    assert_eq!(m.rename("/memories/a", "/memories/a/b/c").unwrap(), Rename::Inside);
}

fn rename_source_is_checked_before_destination(f: &Fixture) {
    let m = f.default_handler();
    m.create("/memories/b", "x").unwrap();
    assert_eq!(m.rename("/memories/a", "/memories/b").unwrap(), Rename::NotFound);
    assert_eq!(m.rename("/memories/b", "/memories/ab").unwrap(), Rename::Renamed { count: 1 });
}

fn rename_destination_exists_at_or_under(f: &Fixture) {
    let m = f.default_handler();
    m.create("/memories/a", "x").unwrap();
    m.create("/memories/b", "y").unwrap();
    m.create("/memories/c/.h", "z").unwrap();
    assert_eq!(m.rename("/memories/a", "/memories/b").unwrap(), Rename::DestinationExists);
    assert_eq!(m.rename("/memories/a", "/memories/c").unwrap(), Rename::DestinationExists);
    assert_eq!(f.commits(), 3);
}

fn rename_prefix_sibling_is_not_inside_and_not_moved(f: &Fixture) {
    let m = f.default_handler();
    m.create("/memories/a/x", "1").unwrap();
    m.create("/memories/ab", "2").unwrap();
    assert_eq!(m.rename("/memories/a", "/memories/a-b").unwrap(), Rename::Renamed { count: 1 });
    assert_eq!(m.view("/memories/ab").unwrap(), file("2"));
    assert_eq!(m.view("/memories/a-b/x").unwrap(), file("1"));
    // Moving a directory up into its parent's sibling slot is not "inside".
    m.create("/memories/p/q/r", "3").unwrap();
    assert_eq!(m.rename("/memories/p/q", "/memories/q").unwrap(), Rename::Renamed { count: 1 });
}

fn rename_moves_memory_and_subtree_in_one_commit(f: &Fixture) {
    let m = f.default_handler();
    for p in ["/memories/a", "/memories/a/b", "/memories/a/.h/c", "/memories/a/d/e/f"] {
        m.create(p, p).unwrap();
    }
    f.set_now(9_000);
    let before = f.commits();
    assert_eq!(m.rename("/memories/a", "/memories/z/y").unwrap(), Rename::Renamed { count: 4 });
    assert_eq!(f.commits() - before, 1);
    for p in ["/memories/a", "/memories/a/b", "/memories/a/.h/c", "/memories/a/d/e/f"] {
        let moved = p.replacen("/memories/a", "/memories/z/y", 1);
        assert_eq!(content(&m, &moved).unwrap(), p);
        assert!(f.meta("default", p).is_none());
        let (size, _, created, updated, _) = f.meta("default", &moved).unwrap();
        assert_eq!((size, created, updated), (p.len() as u64, 1_000, 9_000));
    }
    assert_eq!(m.usage().unwrap().memories, 4);
}

fn rename_that_pushes_a_descendant_past_the_path_limit_is_refused_whole(f: &Fixture) {
    // CONTRACT.md, Choices: a rename whose moved descendant would exceed 1,024 path bytes answers
    // like an unusable destination and moves nothing.
    let m = f.default_handler();
    let tail = "/d/leaf.md"; // the descendant's path below the renamed directory
    m.create(&format!("/memories/src{tail}"), "deep").unwrap();
    m.create("/memories/src/top.md", "top").unwrap();
    let dest = |total: usize| {
        // A destination whose descendant path `{dest}{tail}` is exactly `total` bytes, in
        // segments under the 255-byte segment limit.
        let mut path = String::from("/memories");
        let mut remaining = total - tail.len() - path.len();
        while remaining > 0 {
            let mut seg = (remaining - 1).min(200);
            if remaining - 1 - seg == 1 {
                seg -= 1; // never leave room for an empty segment only
            }
            path.push('/');
            path.push_str(&"n".repeat(seg));
            remaining -= seg + 1;
        }
        assert_eq!(path.len() + tail.len(), total);
        path
    };
    let too_long = dest(1025);
    let before = f.commits();
    assert_eq!(m.rename("/memories/src", &too_long).unwrap(), Rename::DestinationExists);
    assert_eq!(f.commits(), before, "nothing moved");
    assert_eq!(m.view(&format!("/memories/src{tail}")).unwrap(), file("deep"));
    assert_eq!(m.view("/memories/src/top.md").unwrap(), file("top"));
    assert_eq!(m.view(&too_long).unwrap(), View::NotFound);
    // Checked after the source exists (rule 6): a missing source still answers NotFound.
    assert_eq!(m.rename("/memories/nothing", &too_long).unwrap(), Rename::NotFound);

    let longest = dest(1024);
    assert_eq!(m.rename("/memories/src", &longest).unwrap(), Rename::Renamed { count: 2 });
    assert_eq!(m.view(&format!("{longest}{tail}")).unwrap(), file("deep"));
    assert_eq!(m.delete(&format!("{longest}{tail}")).unwrap(), Delete::Deleted { count: 1 });
}

// ---- usage and expiry ----------------------------------------------------------------------

fn usage_counts_every_memory_of_the_scope(f: &Fixture) {
    let m = f.default_handler();
    m.create("/memories/a", "12").unwrap();
    m.create("/memories/.h/b", "345").unwrap();
    m.create("/memories/node_modules", "é").unwrap();
    f.handler(|o| o.scope = "other".into()).create("/memories/x", "xxxx").unwrap();
    let read = f.values_read();
    assert_eq!(m.usage().unwrap(), rabosh_memory::Usage { memories: 3, bytes: 7 });
    let indexed = f.handler(|o| o.listing_index = true);
    assert_eq!(indexed.usage().unwrap(), rabosh_memory::Usage { memories: 3, bytes: 7 });
    assert_eq!(f.values_read(), read);
}

fn expire_before_deletes_by_updated_at_in_one_commit(f: &Fixture) {
    let m = f.default_handler();
    f.set_now(100);
    m.create("/memories/old", "x").unwrap();
    m.create("/memories/d/.h/old", "x").unwrap();
    f.set_now(200);
    m.create("/memories/edge", "x").unwrap();
    f.set_now(300);
    m.create("/memories/new", "x").unwrap();
    let (commits, read) = (f.commits(), f.values_read());
    assert_eq!(m.expire_before(200).unwrap().count, 2);
    assert_eq!(f.commits() - commits, 1);
    assert_eq!(f.values_read(), read);
    assert_eq!(m.usage().unwrap().memories, 2);
    assert_eq!(m.expire_before(200).unwrap().count, 0);
    assert_eq!(f.commits() - commits, 1, "nothing to delete, nothing to commit");
}

fn expire_before_with_track_access_counts_the_later_use(f: &Fixture) {
    let m = f.handler(|o| o.track_access = true);
    f.set_now(100);
    m.create("/memories/read-late", "x").unwrap();
    m.create("/memories/never-read", "x").unwrap();
    m.create("/memories/edited-late", "x").unwrap();
    f.set_now(150);
    m.view("/memories/edited-late").unwrap();
    f.set_now(400);
    m.view("/memories/read-late").unwrap();
    m.str_replace("/memories/edited-late", "x", "y").unwrap();
    assert_eq!(m.expire_before(300).unwrap().count, 1);
    assert_eq!(m.view("/memories/never-read").unwrap(), View::NotFound);
    // Without track_access, only updatedAt counts.
    f.set_now(500);
    let plain = f.default_handler();
    assert_eq!(plain.expire_before(401).unwrap().count, 2);
}

// ---- one commit per command ----------------------------------------------------------------

fn every_change_is_exactly_one_commit(f: &Fixture) {
    let m = f.handler(|o| o.create_overwrites = true);
    let step = |what: &str, run: &dyn Fn()| {
        let before = f.commits();
        run();
        assert_eq!(f.commits() - before, 1, "{what}");
    };
    step("create", &|| assert_eq!(m.create("/memories/a", "abc\n").unwrap(), Create::Created));
    step("overwrite", &|| assert_eq!(m.create("/memories/a", "abc\n").unwrap(), Create::Created));
    step("str_replace", &|| {
        assert!(matches!(m.str_replace("/memories/a", "b", "B").unwrap(), StrReplace::Edited { .. }));
    });
    step("insert", &|| assert_eq!(m.insert("/memories/a", Some(0), "x").unwrap(), Insert::Edited));
    step("rename", &|| assert_eq!(m.rename("/memories/a", "/memories/d/a").unwrap(), Rename::Renamed { count: 1 }));
    step("delete", &|| assert_eq!(m.delete("/memories/d").unwrap(), Delete::Deleted { count: 1 }));
}

// ---- view_if_cheap: which views may run on a latency-sensitive thread ------------------------

const ANY: u64 = u64::MAX;

fn view_if_cheap_answers_bounded_file_views_and_never_scans(f: &Fixture) {
    let plain = f.default_handler();
    plain.create("/memories/d/a.md", "x").unwrap();
    plain.create("/memories/big.md", "0123456789").unwrap();
    assert_eq!(plain.view_if_cheap("/memories/d/a.md", ANY, ANY).unwrap(), Some(file("x")));
    assert_eq!(plain.view_if_cheap("/memories/d", ANY, ANY).unwrap(), None, "a scan goes off-thread");
    assert_eq!(plain.view_if_cheap("/memories/nope", ANY, ANY).unwrap(), None);
    assert_eq!(plain.view_if_cheap("/memories/big.md", 9, ANY).unwrap(), None, "over the byte bound");
    assert_eq!(plain.view_if_cheap("/memories/big.md", 10, ANY).unwrap(), Some(file("0123456789")));

    let tracking = f.handler(|o| o.track_access = true);
    let before = f.commits();
    assert_eq!(tracking.view_if_cheap("/memories/d/a.md", ANY, ANY).unwrap(), None, "a tracked view commits");
    assert_eq!(f.commits(), before);
}

/// Embedded only: the directory totals the store keeps (or a built listing index) make a
/// listing cheap, with no build on the calling thread.
#[test]
fn view_if_cheap_answers_listings_from_the_totals_without_a_build() {
    let f = common::fixture();
    let m = f.handler(|o| o.listing_index = true);
    m.create("/memories/d/a.md", "x").unwrap();
    assert_eq!(m.view_if_cheap("/memories/d", ANY, ANY).unwrap(), Some(m.view("/memories/d").unwrap()));
    assert_eq!(m.view_if_cheap("/memories/d/a.md", ANY, ANY).unwrap(), Some(file("x")), "a file needs no index");
    m.view("/memories").unwrap();
    assert!(f.embedded().indexed_scopes().is_empty(), "no build, the root's listing included");
    assert_eq!(m.view_if_cheap("/memories/d", ANY, ANY).unwrap(), Some(m.view("/memories/d").unwrap()));
    assert_eq!(m.view_if_cheap("/memories/nope", ANY, ANY).unwrap(), Some(View::NotFound));
    for i in 0..2 {
        m.create(&format!("/memories/d/{i}.md"), "x").unwrap();
    }
    assert_eq!(m.view_if_cheap("/memories/d", ANY, 5).unwrap(), None, "three names may print six lines");
    assert_eq!(m.view_if_cheap("/memories/d", ANY, 6).unwrap(), Some(m.view("/memories/d").unwrap()));
}

over_backends!(
    options_are_validated,
    unnormalised_paths_are_caller_bugs,
    scopes_are_separate,
    view_file,
    view_memory_wins_over_directory,
    view_root_always_lists,
    view_missing_is_not_found,
    view_directory_with_only_hidden_content_is_not_found,
    view_too_many_lines,
    view_with_track_access_records_access_in_one_commit,
    view_without_track_access_commits_nothing,
    create_root_exists,
    create_too_large_comes_before_exists,
    create_refuses_to_overwrite_by_default,
    create_overwrite_keeps_created_at,
    create_beside_a_directory_of_the_same_name,
    str_replace_root_and_missing_are_not_found,
    str_replace_empty_or_absent_old_str_is_no_match,
    str_replace_multiple_lists_every_start_with_overlaps,
    str_replace_self_overlapping_once_is_replaced,
    str_replace_multiple_comes_before_too_large,
    str_replace_too_large,
    str_replace_snippet_of_new_content,
    str_replace_traps,
    insert_root_and_missing_are_not_found,
    insert_invalid_line,
    insert_invalid_line_comes_before_too_large,
    insert_edits,
    delete_root,
    delete_missing,
    delete_memory_and_subtree_including_hidden,
    delete_directory_only_and_file_only,
    rename_root_source_comes_first,
    rename_to_root_or_itself_is_destination_exists,
    rename_inside_itself_comes_before_not_found,
    rename_source_is_checked_before_destination,
    rename_destination_exists_at_or_under,
    rename_prefix_sibling_is_not_inside_and_not_moved,
    rename_moves_memory_and_subtree_in_one_commit,
    rename_that_pushes_a_descendant_past_the_path_limit_is_refused_whole,
    usage_counts_every_memory_of_the_scope,
    expire_before_deletes_by_updated_at_in_one_commit,
    expire_before_with_track_access_counts_the_later_use,
    every_change_is_exactly_one_commit,
    view_if_cheap_answers_bounded_file_views_and_never_scans,
);
