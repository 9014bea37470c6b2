//! History as a property of the store (issue 20): the setting is in the store, written once and
//! read by every handler, whatever it was built with; what an opener may ask of it; imports and
//! expiry record like every command; `at()` reads lazily, and never shows a state that did not
//! exist (issue 19 item 4) — checked against a longhand model of the truth.

mod common;

use std::collections::BTreeMap;

use common::{Fixture, Kind, fixture_on};
use proptest::prelude::*;
use rabosh_memory::{Error, HistoryOptions, HistoryRequest, Memories, Operation, VersionQuery, View, settle_history};

fn ops(m: &Memories) -> Vec<Operation> {
    let mut v: Vec<Operation> =
        m.versions(&VersionQuery::default()).unwrap().data.iter().map(|v| v.operation).collect();
    v.reverse();
    v
}

fn the_setting_is_the_stores(f: &Fixture) {
    let b = &*f.backend;
    assert_eq!(settle_history(b, None, 5).unwrap(), None, "a new store records nothing");
    assert_eq!(settle_history(b, Some(HistoryRequest::Off), 5).unwrap(), None);
    let on = settle_history(b, Some(HistoryRequest::On), 7).unwrap().expect("turned on");
    assert_eq!((on.since_ms, on.options), (7, HistoryOptions::default()));
    // A handler built with no history option records: the store says so.
    let plain = f.default_handler();
    plain.create("/memories/a.md", "a").unwrap();
    assert_eq!(ops(&plain), vec![Operation::Created]);
    // Once on, `false` is refused and changes nothing; omitted or `true`: the store's setting.
    assert!(matches!(
        settle_history(b, Some(HistoryRequest::Off), 9),
        Err(Error::InvalidOption { option: "history", .. })
    ));
    assert_eq!(settle_history(b, None, 9).unwrap(), Some(on));
    assert_eq!(settle_history(b, Some(HistoryRequest::On), 9).unwrap(), Some(on));
    // Explicit retention rewrites the store's, keeping when history was turned on.
    let kept = HistoryOptions { retain_days: None, max_versions_per_memory: Some(1) };
    let rewritten = settle_history(b, Some(HistoryRequest::OnWith(kept)), 11).unwrap().unwrap();
    assert_eq!((rewritten.since_ms, rewritten.options), (7, kept));
    // Retention is the store's too: a plain handler prunes by it.
    plain.str_replace("/memories/a.md", "a", "b").unwrap();
    assert_eq!(plain.prune_history().unwrap(), 1);
    assert_eq!(ops(&plain), vec![Operation::Modified]);
}

/// What the CLI's `import` and `expire` do: a handler without history options over a store that
/// records. Both record versions like every command.
fn import_and_expiry_record_versions(f: &Fixture) {
    settle_history(&*f.backend, Some(HistoryRequest::On), 0).unwrap();
    let plain = f.default_handler();
    let files = vec![("/memories/i.md".to_string(), "i".to_string())];
    plain.import_all(&files, false).unwrap();
    f.set_now(9_000);
    assert_eq!(plain.expire_before(5_000).unwrap().count, 1);
    assert_eq!(ops(&plain), vec![Operation::Created, Operation::Deleted]);
}

/// A store used without history, then turned on: recorded from then on; what came before is not
/// shown as if history knew it.
fn turned_on_later(f: &Fixture) {
    let plain = f.default_handler();
    f.set_now(10);
    plain.create("/memories/old.md", "before").unwrap();
    plain.create("/memories/gone.md", "soon deleted").unwrap();
    f.set_now(20);
    plain.delete("/memories/gone.md").unwrap();
    f.set_now(30);
    settle_history(&*f.backend, Some(HistoryRequest::On), 30).unwrap();
    f.set_now(40);
    plain.create("/memories/new.md", "n").unwrap();
    assert_eq!(ops(&plain), vec![Operation::Created]);
    let file = common::file;
    let at = |t| plain.at(t).unwrap();
    // Before history: old.md is proven (unchanged since 10), the listing is not.
    assert_eq!(plain.view_past(&at(15), "/memories/old.md").unwrap(), file("before"));
    assert_eq!(plain.view_past(&at(15), "/memories/gone.md").unwrap(), View::NotRecorded);
    assert_eq!(plain.view_past(&at(15), "/memories").unwrap(), View::NotRecorded);
    assert_eq!(plain.view_past(&at(5), "/memories/old.md").unwrap(), View::NotRecorded);
    // After: complete.
    assert_eq!(plain.view_past(&at(35), "/memories/new.md").unwrap(), View::NotFound);
    assert_eq!(plain.view_past(&at(45), "/memories").unwrap(), plain.view("/memories").unwrap());
    // An edit after history is on: before it the old content is known only from the live state,
    // which has changed, so it is not shown.
    f.set_now(50);
    plain.str_replace("/memories/old.md", "before", "after").unwrap();
    assert_eq!(plain.view_past(&at(45), "/memories/old.md").unwrap(), View::NotRecorded);
    assert_eq!(plain.view_past(&at(45), "/memories").unwrap(), View::NotRecorded);
    assert_eq!(plain.view_past(&at(55), "/memories/old.md").unwrap(), file("after"));
}

/// The case (issue 19 item 4), in a store written before the setting was the store's:
/// versions recorded, then a change made with history off. `at(now)` shows the live content,
/// never the last recorded one; between the two it does not guess.
fn changed_without_history_after_a_version(f: &Fixture) {
    let m = f.default_handler().with_history(HistoryOptions::default());
    f.set_now(10);
    m.create("/memories/a.md", "v1").unwrap();
    // What an older store looks like: versions, but no setting (history was the opener's).
    f.backend
        .transact(&mut |_, ws| {
            ws.delete(b"c:history".to_vec());
            Ok(())
        })
        .unwrap();
    let plain = f.default_handler();
    f.set_now(20);
    plain.str_replace("/memories/a.md", "v1", "v2").unwrap();
    assert_eq!(ops(&plain), vec![Operation::Created], "a change with history off is not recorded");
    settle_history(&*f.backend, Some(HistoryRequest::On), 30).unwrap();
    let file = common::file;
    assert_eq!(plain.view_past(&plain.at(40).unwrap(), "/memories/a.md").unwrap(), file("v2"));
    assert_eq!(plain.view_past(&plain.at(25).unwrap(), "/memories/a.md").unwrap(), file("v2"));
    assert_eq!(plain.view_past(&plain.at(15).unwrap(), "/memories/a.md").unwrap(), View::NotRecorded);
    // Before it was created: absent, but before history was turned on a path with no known
    // memory is not proven empty (a memory deleted then left no trace).
    assert_eq!(plain.view_past(&plain.at(5).unwrap(), "/memories/a.md").unwrap(), View::NotRecorded);
}

/// Building a view of the past reads no value; a file view of it reads the one it shows.
fn at_reads_lazily(f: &Fixture) {
    let m = f.default_handler().with_history(HistoryOptions::default());
    for n in 0..200 {
        m.create(&format!("/memories/{n}.md"), "some content").unwrap();
    }
    let before = f.values_read();
    let past = m.at(i64::MAX).unwrap();
    assert_eq!(f.values_read() - before, 0, "at() read values");
    assert_eq!(m.view_past(&past, "/memories/7.md").unwrap(), common::file("some content"));
    assert_eq!(f.values_read() - before, 1, "a file view of the past reads its one value");
    assert!(matches!(m.view_past(&past, "/memories").unwrap(), View::Dir { .. }));
    assert_eq!(f.values_read() - before, 1, "a listing of the past reads no value");
}

over_backends!(
    the_setting_is_the_stores,
    import_and_expiry_record_versions,
    turned_on_later,
    changed_without_history_after_a_version,
    at_reads_lazily,
);

// ---- at() against a longhand model of the truth -----------------------------------------------

const PATHS: &[&str] = &["/memories/a", "/memories/b", "/memories/d/x", "/memories/d/y"];

#[derive(Debug, Clone)]
enum Step {
    Create(usize, u8),
    Replace(usize, u8),
    Delete(usize),
    Rename(usize, usize),
    /// Turns history on (only the first one does anything).
    TurnOn,
}

fn step() -> impl Strategy<Value = Step> {
    let p = 0..PATHS.len();
    prop_oneof![
        (p.clone(), any::<u8>()).prop_map(|(p, c)| Step::Create(p, c)),
        (p.clone(), any::<u8>()).prop_map(|(p, c)| Step::Replace(p, c)),
        p.clone().prop_map(Step::Delete),
        (p.clone(), p).prop_map(|(a, b)| Step::Rename(a, b)),
        Just(Step::TurnOn),
    ]
}

/// The truth: path → content after each step, kept by hand from the commands' outcomes.
fn apply(truth: &mut BTreeMap<String, String>, m: &Memories, s: &Step) {
    match s {
        Step::Create(p, c) => {
            if matches!(m.create(PATHS[*p], &format!("c{c}")).unwrap(), rabosh_memory::Create::Created) {
                truth.insert(PATHS[*p].into(), format!("c{c}"));
            }
        }
        Step::Replace(p, c) => {
            let old = truth.get(PATHS[*p]).cloned();
            if let Some(old) = old
                && matches!(
                    m.str_replace(PATHS[*p], &old, &format!("r{c}")).unwrap(),
                    rabosh_memory::StrReplace::Edited { .. }
                )
            {
                truth.insert(PATHS[*p].into(), format!("r{c}"));
            }
        }
        Step::Delete(p) => {
            if matches!(m.delete(PATHS[*p]).unwrap(), rabosh_memory::Delete::Deleted { .. }) {
                let under = format!("{}/", PATHS[*p]);
                truth.retain(|k, _| k != PATHS[*p] && !k.starts_with(&under));
            }
        }
        Step::Rename(a, b) => {
            if matches!(m.rename(PATHS[*a], PATHS[*b]).unwrap(), rabosh_memory::Rename::Renamed { .. }) {
                let (from, to) = (PATHS[*a], PATHS[*b]);
                let moved: Vec<(String, String)> = truth
                    .iter()
                    .filter(|(k, _)| *k == from || k.starts_with(&format!("{from}/")))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                for (k, v) in moved {
                    truth.remove(&k);
                    truth.insert(format!("{to}{}", &k[from.len()..]), v);
                }
            }
        }
        Step::TurnOn => {}
    }
}

fn check(kind: Kind, steps: &[Step]) {
    let f = fixture_on(kind);
    let m = f.default_handler();
    let mut truth = BTreeMap::new();
    let mut since = None;
    // Whether the store held no memory when history was turned on: then every instant after is
    // complete (nothing from before history is still to be learnt).
    let mut empty_at_since = false;
    let mut seen = Vec::new();
    for (n, s) in steps.iter().enumerate() {
        let t = 1_000 + 10 * i64::try_from(n).unwrap();
        f.set_now(t);
        if matches!(s, Step::TurnOn) && since.is_none() {
            settle_history(&*f.backend, Some(HistoryRequest::On), t).unwrap();
            since = Some(t);
            empty_at_since = truth.is_empty();
        }
        apply(&mut truth, &m, s);
        seen.push((t, truth.clone(), m.view("/memories").unwrap()));
    }
    for (t, truth, root) in &seen {
        let past = m.at(*t).unwrap();
        // Never invent: whatever at() shows is the truth at t.
        match m.view_past(&past, "/memories").unwrap() {
            View::NotRecorded => {
                assert!(!(empty_at_since && since.is_some_and(|s| *t >= s)), "incomplete after since at {t}");
            }
            shown => assert_eq!(&shown, root, "root listing at {t}"),
        }
        for p in PATHS {
            match m.view_past(&past, p).unwrap() {
                View::File { content, .. } => assert_eq!(Some(&content), truth.get(*p), "{p} at {t}"),
                View::NotRecorded => {}
                View::NotFound => {
                    assert!(!truth.keys().any(|k| k == p || k.starts_with(&format!("{p}/"))), "{p} at {t}");
                }
                View::Dir { .. } => assert!(truth.keys().any(|k| k.starts_with(&format!("{p}/"))), "{p} at {t}"),
                other @ View::TooManyLines => panic!("{other:?}"),
            }
        }
    }
    // The case: now, every live memory is shown with its live content.
    let now = m.at(i64::MAX).unwrap();
    for (p, content) in seen.last().map(|s| s.1.clone()).unwrap_or_default() {
        assert_eq!(m.view_past(&now, &p).unwrap(), View::File { content }, "{p} now");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(64)
    ))]

    #[test]
    fn at_never_invents_on_the_engine(steps in prop::collection::vec(step(), 1..25)) {
        check(Kind::Embedded, &steps);
    }

    #[test]
    fn at_never_invents_in_memory(steps in prop::collection::vec(step(), 1..25)) {
        check(Kind::InMemory, &steps);
    }
}
