//! Ordered reads of a key directory that is never built whole: after a reopen the hints answer
//! as sorted runs, and what is committed since lives in a delta over them; a range is a merge
//! of both. Every range (arbitrary bounds, walked from the front, the back, or both ends in
//! turn) must list exactly what a `BTreeMap` given the same writes holds, across writes,
//! deletes, segment seals, reopens and compactions, plain and encrypted (paged hints).

use proptest::prelude::*;
use rabosh::{Batch, Encryption, Options, Store};
use std::collections::BTreeMap;
use std::ops::Bound;
use std::path::Path;

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

fn opts(encrypted: bool) -> Options {
    // Small segments: a few commits each, so keys live in several runs and get sealed often.
    Options { segment_bytes: 600, encryption: encrypted.then(|| Encryption::new([5; 32])), ..Options::default() }
}

/// Keys of a few shapes that prefix one another ("a", "a/b", "a/b0"), so bounds fall between,
/// on and inside them.
fn key(i: u8) -> Vec<u8> {
    let parts = ["a", "a/", "a/b", "b", "b/c/", "c"];
    format!("{}{}", parts[i as usize % parts.len()], i / 6).into_bytes()
}

#[derive(Debug, Clone)]
enum Step {
    Put(u8, u8),
    Delete(u8),
    /// Several keys in one commit, one of them written twice.
    Batch(Vec<u8>, u8),
    /// Every key in a few commits (puts, a delete where `k + v` is a multiple of five), so
    /// seals happen with many keys in the delta, some of them overwriting keys in the runs.
    Many(u8),
    Reopen,
    Compact,
    /// A range from `lower` (inclusive) to `upper` (exclusive, or the end), walked from the
    /// front (`false`) or the back (`true`) as `ends` says, in turn.
    Scan(u8, Option<u8>, Vec<bool>),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        8 => (0..48u8, any::<u8>()).prop_map(|(k, v)| Step::Put(k, v)),
        3 => (0..48u8).prop_map(Step::Delete),
        2 => (prop::collection::vec(0..48u8, 1..6), any::<u8>()).prop_map(|(ks, v)| Step::Batch(ks, v)),
        1 => any::<u8>().prop_map(Step::Many),
        1 => Just(Step::Reopen),
        1 => Just(Step::Compact),
        6 => (0..48u8, prop::option::of(0..48u8), prop::collection::vec(any::<bool>(), 0..40))
            .prop_map(|(l, u, e)| Step::Scan(l, u, e)),
    ]
}

/// The bound a scan step names: a key, or a key cut short (between keys).
fn bound(i: u8) -> Vec<u8> {
    let mut k = key(i / 2);
    if i % 2 == 1 {
        k.pop();
    }
    k
}

fn scan_check(store: &Store, model: &Model, lower: &[u8], upper: Option<&[u8]>, ends: &[bool]) {
    let snap = store.snapshot().unwrap();
    let up = upper.map_or(Bound::Unbounded, Bound::Excluded);
    let empty = upper.is_some_and(|u| u <= lower);
    let mut want: Box<dyn DoubleEndedIterator<Item = (&Vec<u8>, &Vec<u8>)>> = if empty {
        Box::new(std::iter::empty())
    } else {
        Box::new(model.range::<[u8], _>((Bound::Included(lower), up)))
    };
    let mut got = snap.try_range(lower, upper).unwrap();
    // Each end in turn as `ends` says, then the rest from the front.
    for &back in ends.iter().chain(std::iter::repeat_n(&false, model.len() + 1)) {
        let (g, w) = if back { (got.next_back(), want.next_back()) } else { (got.next(), want.next()) };
        let w = w.map(|(k, m)| (k.as_slice(), m.as_slice()));
        assert_eq!(g, w, "range {lower:?}..{upper:?}, from the {}", if back { "back" } else { "front" });
        if w.is_none() {
            break;
        }
    }
    let all: Vec<_> = snap.try_range(lower, upper).unwrap().rev().map(|(k, m)| (k.to_vec(), m.to_vec())).collect();
    let model_all: Vec<_> = if empty {
        Vec::new()
    } else {
        model.range::<[u8], _>((Bound::Included(lower), up)).rev().map(|(k, m)| (k.clone(), m.clone())).collect()
    };
    assert_eq!(all, model_all, "reverse range {lower:?}..{upper:?}");
}

fn run(dir: &Path, encrypted: bool, steps: &[Step]) {
    let mut store = Store::open(dir, opts(encrypted)).unwrap();
    let mut model = Model::new();
    for s in steps {
        match s {
            Step::Put(k, v) => {
                let meta = vec![*v; 1 + *v as usize % 7];
                let mut b = Batch::new();
                b.put(key(*k), vec![*k; 20], meta.clone());
                store.write(b).unwrap();
                model.insert(key(*k), meta);
            }
            Step::Delete(k) => {
                let mut b = Batch::new();
                b.delete(key(*k));
                store.write(b).unwrap();
                model.remove(&key(*k));
            }
            Step::Batch(ks, v) => {
                let mut b = Batch::new();
                for (i, k) in ks.iter().chain(ks.first()).enumerate() {
                    let meta = vec![v.wrapping_add(i as u8)];
                    if k.wrapping_add(*v) % 4 == 0 {
                        b.delete(key(*k));
                        model.remove(&key(*k));
                    } else {
                        b.put(key(*k), vec![*v; 10], meta.clone());
                        model.insert(key(*k), meta);
                    }
                }
                store.write(b).unwrap();
            }
            Step::Many(v) => {
                for part in (0..48u8).collect::<Vec<_>>().chunks(16) {
                    let mut b = Batch::new();
                    for k in part {
                        if (u16::from(*k) + u16::from(*v)) % 5 == 0 {
                            b.delete(key(*k));
                            model.remove(&key(*k));
                        } else {
                            let meta = vec![v.wrapping_add(*k)];
                            b.put(key(*k), vec![*v; 12], meta.clone());
                            model.insert(key(*k), meta);
                        }
                    }
                    store.write(b).unwrap();
                }
            }
            Step::Reopen => {
                store.close().unwrap();
                drop(store);
                store = Store::open(dir, opts(encrypted)).unwrap();
            }
            Step::Compact => {
                store.compact().unwrap();
            }
            Step::Scan(l, u, ends) => {
                let upper = u.map(bound);
                scan_check(&store, &model, &bound(*l), upper.as_deref(), ends);
                // The live totals a seal carries over from the delta to the runs.
                assert_eq!(store.stats().keys, model.len() as u64, "live keys");
            }
        }
    }
    // Everything, then the counts, then once more after a reopen.
    scan_check(&store, &model, b"", None, &[true, false, true]);
    assert_eq!(store.snapshot().unwrap().len(), model.len());
    store.close().unwrap();
    drop(store);
    // Every hint the store reads from here is paged (checksummed pages in a plain store).
    let paged: &[u8] = if encrypted { b"RABOSHHP" } else { b"RABOSHHC" };
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "hint") {
            assert!(std::fs::read(&p).unwrap().starts_with(paged), "{}: not paged", p.display());
        }
    }
    let store = Store::open(dir, opts(encrypted)).unwrap();
    scan_check(&store, &model, b"", None, &[]);
    assert_eq!(store.stats().keys, model.len() as u64);
    store.verify().unwrap();
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    #[test]
    fn ordered_scans_agree_with_a_btreemap(steps in prop::collection::vec(step(), 1..80), encrypted in any::<bool>()) {
        let dir = tempfile::tempdir().unwrap();
        run(dir.path(), encrypted, &steps);
    }
}

/// Written over a reopened store, read before and after the writes' segment seals: the
/// case the merge exists for, pinned down without the generator.
#[test]
fn a_delta_over_the_hints_lists_as_the_model() {
    for encrypted in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let mut steps: Vec<Step> = (0..48).map(|k| Step::Put(k, k)).collect();
        steps.push(Step::Reopen);
        steps.extend((0..48).step_by(3).map(Step::Delete));
        steps.push(Step::Scan(10, Some(70), vec![true, false, true, true]));
        steps.extend((0..48).step_by(5).map(|k| Step::Put(k, 200)));
        steps.push(Step::Scan(0, None, vec![true; 10]));
        run(dir.path(), encrypted, &steps);
    }
}

/// One hint of many records (a search narrows to a window of them by fence keys first): every
/// bound at, between, before and after the keys, and every point read, answer as the model.
#[test]
fn a_long_run_answers_every_bound() {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options { segment_bytes: 4 << 20, ..Options::default() };
    let mut model = Model::new();
    {
        let store = Store::open(dir.path(), opts.clone()).unwrap();
        let mut b = Batch::new();
        for i in 0..700u32 {
            let k = format!("k{:05}", i * 2).into_bytes();
            b.put(k.clone(), vec![1], vec![i as u8]);
            model.insert(k, vec![i as u8]);
        }
        store.write(b).unwrap();
        store.close().unwrap();
    }
    let store = Store::open(dir.path(), opts).unwrap();
    let snap = store.snapshot().unwrap();
    for i in 0..1402u32 {
        let k = format!("k{i:05}").into_bytes();
        assert_eq!(snap.meta(&k).unwrap().as_ref(), model.get(&k), "point read {i}");
    }
    let bounds: Vec<Vec<u8>> =
        (0..1402u32).step_by(7).map(|i| format!("k{i:05}").into_bytes()).chain([b"".to_vec(), b"z".to_vec()]).collect();
    for lo in &bounds {
        for hi in bounds.iter().step_by(5) {
            scan_check(&store, &model, lo, Some(hi), &[true, false]);
        }
        scan_check(&store, &model, lo, None, &[]);
    }
}
