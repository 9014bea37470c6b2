//! The change feed and memories over both metadata layouts (`meta.rs`): a store written by a
//! build from before the compact layout (fixed 40-byte metadata, a `g:` row for every path it
//! wrote) opens with its listings, views, history and feed intact; paths this build rewrites move
//! to the compact layout and lose their `g:` row; and such an older build writing to the same
//! store afterwards (shared mode) never leaves a second entry for a path nor loses a change. The
//! older build is emulated longhand here: the engine alone, writing the rows its feed wrote.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::ControlFlow;
use std::path::Path;
use std::sync::Arc;

use rabosh_memory::backend_kit::memory_fields;
use rabosh_memory::{
    Backend, ChangeKind, Create, Delete, EmbeddedOptions, EmbeddedStore, HistoryOptions, Insert, Memories,
    MemoryOptions, Rename, VersionQuery, View,
};
use rabosh_testkit::Rng;

const SCOPE: &str = "default";

fn open(dir: &Path) -> Arc<EmbeddedStore> {
    EmbeddedStore::open(dir, EmbeddedOptions { shared: true, ..Default::default() }).unwrap()
}

fn handler(store: &Arc<EmbeddedStore>) -> Memories {
    Memories::new(store.clone(), MemoryOptions::default()).unwrap()
}

/// The metadata an older build writes: the fixed 40 bytes.
fn fixed_meta(content: &str, ms: i64) -> Vec<u8> {
    let mut m = Vec::new();
    m.extend_from_slice(&(content.len() as u64).to_le_bytes());
    m.extend_from_slice(&(content.matches('\n').count() as u64 + 1).to_le_bytes());
    for t in [ms, ms, 0] {
        m.extend_from_slice(&t.to_le_bytes());
    }
    m
}

/// One commit of an older build changing `path` (content Some: written, None: deleted), with
/// the feed rows that build wrote: the entry its `g:` row named removed, the new entry, the
/// `g:` row, the marker. Its metadata decoding refused anything under 40 bytes: it cannot write
/// a path whose memory is compact (the caller checks with [`older_build_can_write`]).
fn older_build_writes(dir: &Path, path: &str, content: Option<&str>) -> ChangeKind {
    let engine = rabosh::Store::open(dir, rabosh::Options { shared: true, ..Default::default() }).unwrap();
    let snap = engine.snapshot().unwrap();
    let position = snap.seq() + 1;
    let key = format!("m:{SCOPE}:{path}");
    let existed = snap.meta(key.as_bytes()).unwrap().is_some();
    let pointer = format!("g:{SCOPE}:{path}");
    let mut batch = rabosh::Batch::new();
    if let Some(old) = snap.meta(pointer.as_bytes()).unwrap() {
        let old = u64::from_be_bytes(old.as_slice().try_into().expect("an older build's own g: row"));
        batch.delete(format!("f:{SCOPE}:{old:016x}:{path}").into_bytes());
    }
    let kind = match (content, existed) {
        (Some(_), false) => ChangeKind::Created,
        (Some(_), true) => ChangeKind::Modified,
        (None, _) => ChangeKind::Deleted,
    };
    match content {
        Some(c) => batch.put(key.into_bytes(), c.as_bytes().to_vec(), fixed_meta(c, 5)),
        None => batch.delete(key.into_bytes()),
    }
    batch.put(format!("f:{SCOPE}:{position:016x}:{path}").into_bytes(), Vec::new(), vec![kind.code()]);
    batch.put(pointer.into_bytes(), Vec::new(), position.to_be_bytes().to_vec());
    let horizon = match snap.meta(b"f:").unwrap() {
        Some(m) if u64::from_be_bytes(m[8..16].try_into().unwrap()) + 1 == position => {
            u64::from_be_bytes(m[..8].try_into().unwrap())
        }
        None if snap.seq() == 0 => 0,
        _ => position,
    };
    let mut marker = horizon.to_be_bytes().to_vec();
    marker.extend_from_slice(&position.to_be_bytes());
    batch.put(b"f:".to_vec(), Vec::new(), marker);
    drop(snap);
    assert_eq!(engine.write(batch).unwrap(), position);
    engine.close().unwrap();
    kind
}

/// An older build reads a memory's metadata only when it is 40 bytes or more, and a `g:` row
/// only when it is 8 bytes (this build's are 9): anything else it refuses as Corruption.
fn older_build_can_write(store: &Arc<EmbeddedStore>, path: &str) -> bool {
    let view = store.read().unwrap();
    let meta = view.meta(format!("m:{SCOPE}:{path}").as_bytes()).unwrap();
    let pointer = view.meta(format!("g:{SCOPE}:{path}").as_bytes()).unwrap();
    meta.is_none_or(|m| m.len() >= 40) && pointer.is_none_or(|p| p.len() == 8)
}

/// The feed's rows: the entries (path → positions) and the `g:` rows (path → position).
fn feed_rows(store: &Arc<EmbeddedStore>) -> (BTreeMap<String, Vec<u64>>, BTreeMap<String, u64>) {
    let view = store.read().unwrap();
    let mut entries: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    let prefix = format!("f:{SCOPE}:");
    view.scan_prefix(prefix.as_bytes(), &mut |k, _| {
        let rest = &k[prefix.len()..];
        let (position, path) = if rest[0] == 0 {
            let path = format!("/memories{}", std::str::from_utf8(&rest[8..]).unwrap());
            (u64::from_be_bytes(rest[..8].try_into().unwrap()), path)
        } else {
            let rest = std::str::from_utf8(rest).unwrap();
            (u64::from_str_radix(&rest[..16], 16).unwrap(), rest[17..].to_string())
        };
        entries.entry(path).or_default().push(position);
        ControlFlow::Continue(())
    })
    .unwrap();
    let mut pointers = BTreeMap::new();
    let prefix = format!("g:{SCOPE}:");
    view.scan_prefix(prefix.as_bytes(), &mut |k, m| {
        let path = String::from_utf8_lossy(&k[prefix.len()..]).into_owned();
        pointers.insert(path, u64::from_be_bytes(m[..8].try_into().unwrap()));
        ControlFlow::Continue(())
    })
    .unwrap();
    (entries, pointers)
}

/// What every commit must leave: one entry per path, named by the path's compact memory or,
/// failing one, by its `g:` row, and no `g:` row beside a compact memory.
fn check_rows(store: &Arc<EmbeddedStore>) {
    let (entries, pointers) = feed_rows(store);
    let view = store.read().unwrap();
    for (path, positions) in &entries {
        assert_eq!(positions.len(), 1, "{path} has entries at {positions:?}");
        let key = format!("m:{SCOPE}:{path}");
        let carried = view.meta(key.as_bytes()).unwrap().and_then(|m| memory_fields(key.as_bytes(), &m).unwrap().5);
        match carried {
            Some(p) => {
                assert_eq!(p, positions[0], "{path}: its metadata names another entry");
                assert!(!pointers.contains_key(path), "{path}: a g: row beside a compact memory");
            }
            None => assert_eq!(pointers.get(path), Some(&positions[0]), "{path}: no g: row names its entry"),
        }
    }
    for path in pointers.keys() {
        assert!(entries.contains_key(path), "{path}: a g: row without an entry");
    }
}

fn drain(m: &Memories, since: Option<&str>) -> (Vec<(String, ChangeKind)>, String) {
    let mut out = Vec::new();
    let mut cursor = since.map(str::to_string);
    loop {
        let page = m.changes(cursor.as_deref(), Some(3)).unwrap();
        assert!(!page.reset, "a cursor the feed handed out was answered reset");
        let full = page.changes.len() == 3;
        out.extend(page.changes.into_iter().map(|c| (c.path, c.kind)));
        cursor = Some(page.cursor.encode());
        if !full {
            return (out, cursor.unwrap());
        }
    }
}

fn change(path: &str, kind: ChangeKind) -> (String, ChangeKind) {
    (path.to_string(), kind)
}

#[test]
fn a_store_of_the_fixed_layout_reads_and_moves_to_the_compact_one_path_by_path() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    // The older build's store: a, b and c written, then c deleted.
    for (path, content) in [("/memories/a", Some("one\n")), ("/memories/b", Some("two")), ("/memories/c", Some("3"))] {
        older_build_writes(&dir, path, content);
    }
    older_build_writes(&dir, "/memories/c", None);
    let store = open(&dir);
    check_rows(&store);
    let m = handler(&store).with_history(HistoryOptions::default());
    assert_eq!(m.view("/memories/a").unwrap(), View::File { content: "one\n".into() });
    let listing = format!("{:?}", m.view("/memories").unwrap());
    assert!(listing.contains("\"a\"") && listing.contains("\"b\"") && !listing.contains("\"c\""), "{listing}");
    assert_eq!(m.export_all().unwrap().len(), 2);
    let (all, start) = drain(&m, None);
    assert_eq!(
        all,
        vec![
            change("/memories/a", ChangeKind::Created),
            change("/memories/b", ChangeKind::Created),
            change("/memories/c", ChangeKind::Deleted)
        ]
    );
    // This build rewrites a (history off: compact), recreates c, deletes b; then, with history
    // on, edits a again (history ids: the fixed layout and a g: row).
    let plain = handler(&store);
    assert_eq!(plain.insert("/memories/a", Some(0), "zero").unwrap(), Insert::Edited);
    assert!(store.read().unwrap().meta(b"m:default:/memories/a").unwrap().unwrap().len() < 40);
    assert!(!feed_rows(&store).1.contains_key("/memories/a"), "the rewritten path kept its g: row");
    assert_eq!(plain.create("/memories/c", "again").unwrap(), Create::Created);
    assert!(matches!(plain.delete("/memories/b").unwrap(), Delete::Deleted { .. }));
    check_rows(&store);
    assert_eq!(
        drain(&plain, Some(&start)).0,
        vec![
            change("/memories/a", ChangeKind::Modified),
            change("/memories/c", ChangeKind::Created),
            change("/memories/b", ChangeKind::Deleted)
        ]
    );
    assert_eq!(m.insert("/memories/a", Some(0), "minus one").unwrap(), Insert::Edited);
    assert!(store.read().unwrap().meta(b"m:default:/memories/a").unwrap().unwrap().len() >= 72);
    check_rows(&store);
    let q = VersionQuery { path: Some("/memories/a".into()), ..Default::default() };
    assert_eq!(m.versions(&q).unwrap().data.len(), 1);
    assert_eq!(m.view("/memories/a").unwrap(), View::File { content: "minus one\nzero\none\n".into() });
    // Renamed: both ends keep one entry each.
    assert!(matches!(plain.rename("/memories/c", "/memories/d").unwrap(), Rename::Renamed { .. }));
    check_rows(&store);
    let (all, cursor) = drain(&plain, None);
    assert_eq!(
        all,
        vec![
            change("/memories/b", ChangeKind::Deleted),
            change("/memories/a", ChangeKind::Modified),
            change("/memories/c", ChangeKind::RenamedFrom),
            change("/memories/d", ChangeKind::RenamedTo)
        ]
    );
    // An older build after this one refuses the paths whose rows it cannot read (a compact
    // memory, this build's g: rows); what it can write is in the feed, once.
    for path in ["/memories/a", "/memories/b", "/memories/c", "/memories/d"] {
        assert!(!older_build_can_write(&store, path), "{path}");
    }
    older_build_writes(&dir, "/memories/e", Some("e"));
    check_rows(&store);
    assert_eq!(drain(&plain, Some(&cursor)).0, vec![change("/memories/e", ChangeKind::Created)]);
    assert_eq!(plain.insert("/memories/e", Some(0), "f").unwrap(), Insert::Edited);
    check_rows(&store);
    assert_eq!(drain(&plain, Some(&cursor)).0, vec![change("/memories/e", ChangeKind::Modified)]);
}

const PATHS: [&str; 5] = ["/memories/p", "/memories/q", "/memories/r/s", "/memories/r/t", "/memories/u"];

/// Random commands of this build and of an older one (where it can write) over a store that
/// starts in the fixed layout, against a longhand model of the feed: replayed from the start
/// and read on step by step, it answers each path once, as of its latest change, in commit order.
#[test]
fn random_commands_of_both_builds_keep_the_feed_of_the_model() {
    for seed in 1..=12 {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("store");
        let mut rng = Rng::new(seed);
        // (step, kind) of each path's latest change; the paths that hold a memory.
        let mut latest: BTreeMap<String, (usize, ChangeKind)> = BTreeMap::new();
        let mut files = BTreeSet::new();
        for (i, path) in PATHS.iter().enumerate() {
            if rng.below(3) > 0 {
                latest.insert(path.to_string(), (i, older_build_writes(&dir, path, Some("old"))));
                files.insert(path.to_string());
            }
        }
        let store = open(&dir);
        let m = handler(&store);
        let (first, mut cursor) = drain(&m, None);
        let mut want: Vec<_> = latest.iter().map(|(p, (s, k))| (*s, p.clone(), *k)).collect();
        want.sort();
        assert_eq!(first, want.into_iter().map(|(_, p, k)| (p, k)).collect::<Vec<_>>(), "seed {seed}");
        let start = cursor.clone();
        for step in PATHS.len()..PATHS.len() + 40 {
            let path = PATHS[rng.below(PATHS.len() as u64) as usize].to_string();
            let mut changed: Vec<(String, ChangeKind)> = Vec::new();
            match rng.below(6) {
                0 if older_build_can_write(&store, &path) => {
                    let content = (rng.below(3) > 0).then_some("older");
                    if content.is_some() || files.contains(&path) {
                        changed.push((path.clone(), older_build_writes(&dir, &path, content)));
                        if content.is_some() {
                            files.insert(path.clone());
                        } else {
                            files.remove(&path);
                        }
                    }
                }
                0 => assert!(!older_build_can_write(&store, &path)),
                1 => {
                    if m.create(&path, "new").unwrap() == Create::Created {
                        files.insert(path.clone());
                        changed.push((path, ChangeKind::Created));
                    }
                }
                2 | 3 => {
                    if m.insert(&path, Some(0), "x").unwrap() == Insert::Edited {
                        changed.push((path, ChangeKind::Modified));
                    }
                }
                4 => {
                    if let Delete::Deleted { .. } = m.delete(&path).unwrap() {
                        files.remove(&path);
                        changed.push((path, ChangeKind::Deleted));
                    }
                }
                _ => {
                    let to = PATHS[rng.below(PATHS.len() as u64) as usize].to_string();
                    if let Rename::Renamed { .. } = m.rename(&path, &to).unwrap() {
                        files.remove(&path);
                        files.insert(to.clone());
                        changed.push((path, ChangeKind::RenamedFrom));
                        changed.push((to, ChangeKind::RenamedTo));
                    }
                }
            }
            check_rows(&store);
            changed.sort();
            let (got, next) = drain(&m, Some(&cursor));
            assert_eq!(got, changed, "seed {seed} step {step}");
            cursor = next;
            for (path, kind) in changed {
                latest.insert(path, (step, kind));
            }
        }
        let mut want: Vec<_> =
            latest.iter().filter(|(_, (s, _))| *s >= PATHS.len()).map(|(p, (s, k))| (*s, p.clone(), *k)).collect();
        want.sort();
        let want: Vec<_> = want.into_iter().map(|(_, p, k)| (p, k)).collect();
        assert_eq!(drain(&m, Some(&start)).0, want, "seed {seed}: replayed from the start");
        for path in &files {
            assert!(matches!(m.view(path).unwrap(), View::File { .. }), "seed {seed}: {path}");
        }
        drop(m);
        store.close().unwrap();
    }
}
