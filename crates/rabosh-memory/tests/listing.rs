//! Directory listings: order, exclusion, sizes, the index against the scan, and the work a view does.

mod common;

use common::{Fixture, fixture};
use rabosh_memory::{DirEntry, Memories, View};

fn f(rel: &str, size: u64) -> DirEntry {
    DirEntry { rel: rel.into(), size, is_dir: false }
}
fn d(rel: &str, size: u64) -> DirEntry {
    DirEntry { rel: rel.into(), size, is_dir: true }
}

fn put(m: &Memories, path: &str, size: usize) {
    assert_eq!(m.create(path, &"x".repeat(size)).unwrap(), rabosh_memory::Create::Created, "{path}");
}

/// Both handlers (scan and index) over one store must agree; returns the answer.
fn both(fx: &common::Fixture, path: &str) -> View {
    let scan = fx.default_handler().view(path).unwrap();
    let indexed = fx.handler(|o| o.listing_index = true).view(path).unwrap();
    assert_eq!(scan, indexed, "{path}");
    scan
}

fn order_is_utf16_and_depth_first(fx: &Fixture) {
    let m = fx.default_handler();
    put(&m, "/memories/a.md", 1);
    put(&m, "/memories/a-b", 2);
    put(&m, "/memories/a/x", 3);
    put(&m, "/memories/\u{FF5E}", 4);
    put(&m, "/memories/\u{1F600}", 5);
    put(&m, "/memories/B", 6);
    let expected =
        vec![f("B", 6), d("a", 3), f("a/x", 3), f("a-b", 2), f("a.md", 1), f("\u{1F600}", 5), f("\u{FF5E}", 4)];
    assert_eq!(both(fx, "/memories"), View::Dir { total: 21, entries: expected });
}

fn memory_and_directory_at_one_name(fx: &Fixture) {
    let m = fx.default_handler();
    put(&m, "/memories/n", 10);
    put(&m, "/memories/n/m", 1);
    put(&m, "/memories/n/m/deep", 2);
    put(&m, "/memories/n/m/deep/er", 4);
    let expected = vec![f("n", 10), d("n", 7), f("n/m", 1), d("n/m", 6)];
    assert_eq!(both(fx, "/memories"), View::Dir { total: 17, entries: expected });
    // Viewing the name resolves to the memory.
    assert!(matches!(both(fx, "/memories/n"), View::File { .. }));
    assert_eq!(both(fx, "/memories/n/m/deep"), common::file("xx"),);
}

fn deeper_content_rolls_into_depth_two(fx: &Fixture) {
    let m = fx.default_handler();
    put(&m, "/memories/a/b/c/d/e", 100);
    put(&m, "/memories/a/b/c2", 20);
    put(&m, "/memories/a/b2", 3);
    let expected = vec![d("a", 123), d("a/b", 120), f("a/b2", 3)];
    assert_eq!(both(fx, "/memories"), View::Dir { total: 123, entries: expected });
    let expected = vec![d("b", 120), d("b/c", 100), f("b/c2", 20), f("b2", 3)];
    assert_eq!(both(fx, "/memories/a"), View::Dir { total: 123, entries: expected });
}

fn hidden_and_node_modules_are_excluded_everywhere(fx: &Fixture) {
    let m = fx.default_handler();
    put(&m, "/memories/.h", 1);
    put(&m, "/memories/.git/config", 2);
    put(&m, "/memories/node_modules/x/y", 4);
    put(&m, "/memories/p/.env", 8);
    put(&m, "/memories/p/q/node_modules/z", 16);
    put(&m, "/memories/p/q/r/.s/t", 32);
    put(&m, "/memories/p/q/ok", 64);
    put(&m, "/memories/only-hidden/.x", 128);
    put(&m, "/memories/node_modulesx", 256);
    let expected = vec![f("node_modulesx", 256), d("p", 64), d("p/q", 64)];
    assert_eq!(both(fx, "/memories"), View::Dir { total: 320, entries: expected });
    assert_eq!(both(fx, "/memories/only-hidden"), View::NotFound);
}

fn hidden_directory_viewed_directly_lists_normally(fx: &Fixture) {
    let m = fx.default_handler();
    put(&m, "/memories/.git/config", 2);
    put(&m, "/memories/.git/objects/ab/cd", 5);
    put(&m, "/memories/.git/objects/.pack", 7);
    let expected = vec![f("config", 2), d("objects", 5), d("objects/ab", 5)];
    assert_eq!(both(fx, "/memories/.git"), View::Dir { total: 7, entries: expected });
    let expected = vec![d("ab", 5), f("ab/cd", 5)];
    assert_eq!(both(fx, "/memories/.git/objects"), View::Dir { total: 5, entries: expected });
    assert_eq!(both(fx, "/memories/node_modules"), View::NotFound);
}

fn zero_byte_memories_are_visible(fx: &Fixture) {
    let m = fx.default_handler();
    put(&m, "/memories/d/e", 0);
    let expected = vec![d("d", 0), f("d/e", 0)];
    assert_eq!(both(fx, "/memories"), View::Dir { total: 0, entries: expected });
    assert_eq!(both(fx, "/memories/d"), View::Dir { total: 0, entries: vec![f("e", 0)] });
}

fn listings_read_no_values(fx: &Fixture) {
    let m = fx.default_handler();
    for i in 0..20 {
        put(&m, &format!("/memories/d{}/e{}/f{i}", i % 3, i % 5), i);
    }
    let read = fx.values_read();
    for path in ["/memories", "/memories/d1", "/memories/d1/e1", "/memories/zz"] {
        both(fx, path);
    }
    fx.default_handler().usage().unwrap();
    fx.handler(|o| o.listing_index = true).usage().unwrap();
    assert_eq!(fx.values_read(), read);
}

/// Listings are kept from what the commands staged, never from the rows: a memory row written
/// below the commands (`WriteSet::put` or `delete` of an `m:` key) would leave them behind, so
/// every backend refuses the transaction and commits nothing of it.
fn a_memory_row_without_an_intent_is_refused(fx: &Fixture) {
    let indexed = fx.handler(|o| o.listing_index = true);
    put(&indexed, "/memories/a/kept", 3);
    let before = both(fx, "/memories");
    let commits = fx.commits();
    for raw in [true, false] {
        let refused = fx.backend.transact(&mut |_, ws| {
            ws.put(b"h:default:other".to_vec(), Vec::new(), Vec::new());
            if raw {
                ws.put(b"m:default:/memories/a/raw".to_vec(), b"xx".to_vec(), vec![0; 40]);
            } else {
                ws.delete(b"m:default:/memories/a/kept".to_vec());
            }
            Ok(())
        });
        assert!(matches!(refused, Err(rabosh_memory::Error::InvalidArgument(_))), "{refused:?}");
    }
    assert_eq!(fx.commits(), commits);
    assert_eq!(both(fx, "/memories"), before);
    assert_eq!(fx.backend.read().unwrap().meta(b"h:default:other").unwrap(), None);
    // The handlers go on: the refusal poisoned nothing.
    put(&indexed, "/memories/a/next", 1);
    assert!(matches!(both(fx, "/memories/a"), View::Dir { total: 4, .. }));
}

/// The listing index answers where the directory totals cannot: a store whose last commit came
/// from a build that does not keep them (`act_as_a_build_without_totals`).
#[test]
fn index_is_built_from_an_existing_store_and_follows_every_handler() {
    let fx = fixture();
    fx.embedded().act_as_a_build_without_totals();
    let plain = fx.default_handler();
    put(&plain, "/memories/a/b", 1);
    put(&plain, "/memories/c", 2);
    assert!(fx.embedded().indexed_scopes().is_empty());
    let indexed = fx.handler(|o| o.listing_index = true);
    assert_eq!(
        indexed.view("/memories").unwrap(),
        View::Dir { total: 3, entries: vec![d("a", 1), f("a/b", 1), f("c", 2)] }
    );
    assert_eq!(fx.embedded().indexed_scopes(), vec!["default".to_string()]);
    // Commits of a handler without the index keep the shared index current.
    plain.rename("/memories/a", "/memories/z").unwrap();
    plain.delete("/memories/c").unwrap();
    put(&plain, "/memories/z/.h", 4);
    let other = fx.handler(|o| o.scope = "other".into());
    put(&other, "/memories/q", 8);
    assert_eq!(indexed.view("/memories").unwrap(), View::Dir { total: 1, entries: vec![d("z", 1), f("z/b", 1)] });
    assert_eq!(indexed.usage().unwrap(), rabosh_memory::Usage { memories: 2, bytes: 5 });
    assert_eq!(fx.embedded().indexed_scopes(), vec!["default".to_string()]);
}

/// Issue 36: with the directory totals stale, the first listing of a directory below the root
/// reads that directory's subtree, not the whole scope (at a million memories: 100 read instead
/// of all), so it builds no index; the root's listing, which reads every memory either way,
/// builds it.
#[test]
fn only_the_roots_listing_builds_the_index() {
    let fx = fixture();
    fx.embedded().act_as_a_build_without_totals();
    let plain = fx.default_handler();
    put(&plain, "/memories/a/b", 1);
    put(&plain, "/memories/c", 2);
    let indexed = fx.handler(|o| o.listing_index = true);
    assert_eq!(indexed.view("/memories/a").unwrap(), View::Dir { total: 1, entries: vec![f("b", 1)] });
    assert!(fx.embedded().indexed_scopes().is_empty(), "a subdirectory's listing built the index");
    assert!(matches!(indexed.view("/memories").unwrap(), View::Dir { total: 3, .. }));
    assert_eq!(fx.embedded().indexed_scopes(), vec!["default".to_string()]);
    assert_eq!(indexed.view("/memories/a").unwrap(), View::Dir { total: 1, entries: vec![f("b", 1)] });
}

/// Index nodes one view of `/memories/big` looks at, over a tree with `deep` memories below
/// depth 2 of it.
fn nodes_for_view(deep: usize) -> (u64, View) {
    let fx = fixture();
    fx.embedded().act_as_a_build_without_totals();
    let m = fx.handler(|o| o.listing_index = true);
    put(&m, "/memories/big/one", 1);
    put(&m, "/memories/big/sub/two", 2);
    put(&m, "/memories/big/.hidden", 4);
    for i in 0..deep {
        put(&m, &format!("/memories/big/sub/deep/{}/{}/m{i}", i % 7, i % 11), 1);
    }
    let read = fx.values_read();
    m.view("/memories").unwrap(); // builds nothing new, warms nothing: the index is current
    let before = fx.embedded().index_nodes_visited();
    let view = m.view("/memories/big").unwrap();
    assert_eq!(fx.values_read(), read);
    (fx.embedded().index_nodes_visited() - before, view)
}

#[test]
fn indexed_view_work_does_not_grow_with_deep_content() {
    let (small, small_view) = nodes_for_view(1);
    let (large, large_view) = nodes_for_view(3_000);
    assert!(small > 0, "the counter counts");
    assert_eq!(small, large, "work grew with content more than two levels down");
    match large_view {
        View::Dir { total, entries } => {
            assert_eq!(total, 3 + 3_000);
            assert_eq!(entries, vec![f("one", 1), d("sub", 3_002), d("sub/deep", 3_000), f("sub/two", 2)]);
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(small_view, View::Dir { total: 4, .. }));
}

over_backends!(
    order_is_utf16_and_depth_first,
    memory_and_directory_at_one_name,
    deeper_content_rolls_into_depth_two,
    hidden_and_node_modules_are_excluded_everywhere,
    hidden_directory_viewed_directly_lists_normally,
    zero_byte_memories_are_visible,
    listings_read_no_values,
    a_memory_row_without_an_intent_is_refused,
);

/// A long listing answered from the directory totals is kept for the state it was read at only:
/// after any commit the next listing shows the commit.
#[test]
fn a_kept_long_listing_follows_the_next_commit() {
    let fx = fixture();
    let m = fx.handler(|o| o.listing_index = true);
    let scan = fx.default_handler();
    for i in 0..300 {
        put(&m, &format!("/memories/d/f{i:03}"), 1);
    }
    let first = m.view("/memories").unwrap();
    assert_eq!(m.view("/memories").unwrap(), first, "the same state lists the same");
    put(&m, "/memories/d/g", 2);
    let second = m.view("/memories").unwrap();
    assert_ne!(second, first);
    assert_eq!(second, scan.view("/memories").unwrap());
    m.delete("/memories/d/f000").unwrap();
    assert_eq!(m.view("/memories").unwrap(), scan.view("/memories").unwrap());
    assert!(fx.embedded().indexed_scopes().is_empty());
}
