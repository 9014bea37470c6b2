//! A bounded cache of decoded hint pages answers exactly as keeping every page did: with room
//! for a page or two (so nearly every read evicts another), scans in windows of a page or two,
//! point reads and counts over runs of several pages (plain and encrypted, with a delta over
//! them) agree with a `BTreeMap` given the same writes, and with an unbounded cache.
//!
//! One test in this binary: the cache's budget and the walk's window are the process's.

use proptest::prelude::*;
use rabosh::{Batch, Durability, Encryption, Options, Store};
use std::collections::BTreeMap;
use std::ops::{Bound, ControlFlow};

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

fn opts(encrypted: bool) -> Options {
    // Segments of a few hundred records: each sealed run holds several pages of 64.
    Options {
        durability: Durability::Buffered,
        segment_bytes: 24 << 10,
        encryption: encrypted.then(|| Encryption::new([9; 32])),
        ..Options::default()
    }
}

fn key(i: u16) -> Vec<u8> {
    // Prefixes of one another every tenth key, so bounds fall on and between them.
    if i.is_multiple_of(10) {
        format!("k/{:04}", i / 10).into_bytes()
    } else {
        format!("k/{:04}/{i}", i / 10).into_bytes()
    }
}

fn put(b: &mut Batch, model: &mut Model, k: u16, v: u8) {
    let meta = vec![v; 1 + usize::from(v % 5)];
    b.put(key(k), vec![v; 24], meta.clone());
    model.insert(key(k), meta);
}

/// A store of `n` keys written and sealed, reopened (its runs read from the hints), then
/// `edits` committed over them (`None`: a delete), some sealed again.
fn build(dir: &std::path::Path, encrypted: bool, n: u16, edits: &[(u16, Option<u8>)]) -> (Store, Model) {
    let mut model = Model::new();
    let store = Store::open(dir, opts(encrypted)).unwrap();
    for part in (0..n).collect::<Vec<_>>().chunks(200) {
        let mut b = Batch::new();
        for &k in part {
            put(&mut b, &mut model, k, (k % 251) as u8);
        }
        store.write(b).unwrap();
    }
    store.close().unwrap();
    drop(store);
    let store = Store::open(dir, opts(encrypted)).unwrap();
    for part in edits.chunks(7) {
        let mut b = Batch::new();
        for &(k, v) in part {
            if let Some(v) = v {
                put(&mut b, &mut model, k, v);
            } else {
                b.delete(key(k));
                model.remove(&key(k));
            }
        }
        store.write(b).unwrap();
    }
    (store, model)
}

/// A scan as the memory crate makes one: visited from `lower` up to `upper` (or down from it),
/// stopped after `stop` keys.
#[derive(Debug, Clone)]
struct Scan {
    lower: u16,
    upper: Option<u16>,
    forward: bool,
    stop: usize,
}

fn check(store: &Store, model: &Model, scans: &[Scan], probes: &[u16], n: u16) {
    let snap = store.snapshot().unwrap();
    for s in scans {
        let (lower, upper) = (key(s.lower % n.max(1)), s.upper.map(|u| key(u % n.max(1))));
        let up = upper.as_deref().map_or(Bound::Unbounded, Bound::Excluded);
        let empty = upper.as_deref().is_some_and(|u| u <= &lower[..]);
        let range: Vec<(Vec<u8>, Vec<u8>)> = if empty {
            Vec::new()
        } else {
            model.range::<[u8], _>((Bound::Included(&lower[..]), up)).map(|(k, m)| (k.clone(), m.clone())).collect()
        };
        let mut want = range.clone();
        if !s.forward {
            want.reverse();
        }
        want.truncate(s.stop);
        let mut got = Vec::new();
        snap.try_visit(&lower, upper.as_deref(), s.forward, &mut |k, m| {
            got.push((k.to_vec(), m.to_vec()));
            if got.len() >= s.stop { ControlFlow::Break(()) } else { ControlFlow::Continue(()) }
        })
        .unwrap();
        assert_eq!(got, want, "visit {s:?}");
        let iterated: Vec<_> =
            snap.try_range(&lower, upper.as_deref()).unwrap().map(|(k, m)| (k.to_vec(), m.to_vec())).collect();
        assert_eq!(iterated, range, "range {s:?}");
    }
    for &p in probes {
        assert_eq!(snap.meta(&key(p)).unwrap(), model.get(&key(p)).cloned(), "meta of {p}");
    }
    assert_eq!(snap.len(), model.len());
    assert_eq!(store.stats().keys, model.len() as u64);
}

fn scan() -> impl Strategy<Value = Scan> {
    (any::<u16>(), prop::option::of(any::<u16>()), any::<bool>(), 1..4000usize)
        .prop_map(|(lower, upper, forward, stop)| Scan { lower, upper, forward, stop })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn a_tiny_page_cache_answers_as_an_unbounded_one(
        n in 300..2500u16,
        edits in prop::collection::vec((any::<u16>(), prop::option::of(any::<u8>())), 0..120),
        scans in prop::collection::vec(scan(), 1..8),
        probes in prop::collection::vec(any::<u16>(), 1..40),
        encrypted in any::<bool>(),
    ) {
        let edits: Vec<_> = edits.into_iter().map(|(k, v)| (k % (n + 50), v)).collect();
        let probes: Vec<_> = probes.into_iter().map(|p| p % (n + 50)).collect();
        let dir = tempfile::tempdir().unwrap();
        let (store, model) = build(dir.path(), encrypted, n, &edits);
        // Room for one decoded page at most; walks a page or two of each run at a time.
        for (budget, window) in [(usize::MAX, 1_000_000), (6_000, 1), (12_000, 2), (usize::MAX, 1)] {
            rabosh::set_page_cache_bytes(budget);
            rabosh::set_walk_window_pages(window);
            check(&store, &model, &scans, &probes, n);
            prop_assert!(rabosh::page_cache_bytes() <= budget);
        }
        // The walk's windows: sealed again (a new run over the delta), then reopened.
        store.close().unwrap();
        drop(store);
        let store = Store::open(dir.path(), opts(encrypted)).unwrap();
        rabosh::set_page_cache_bytes(6_000);
        rabosh::set_walk_window_pages(1);
        check(&store, &model, &scans, &probes, n);
        rabosh::set_page_cache_bytes(usize::MAX);
        rabosh::set_walk_window_pages(16);
    }
}
