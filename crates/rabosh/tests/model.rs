//! Differential test: random batches, snapshots, reopen, compact and checkpoint against a
//! `BTreeMap` model; the store and every live snapshot must equal their model after every step.

use proptest::prelude::*;
use rabosh::{Batch, Options, Snapshot, Store};
use std::collections::BTreeMap;
use std::path::Path;

type Model = BTreeMap<Vec<u8>, (Vec<u8>, Vec<u8>)>;

#[derive(Debug, Clone)]
enum Cmd {
    Write(Vec<(u8, Option<(usize, u8)>)>),
    Snapshot,
    DropSnapshot(usize),
    Reopen,
    Compact,
    Checkpoint,
}

fn key(k: u8) -> Vec<u8> {
    // Two prefixes so prefix scans have something to separate.
    format!("{}/{:02}", if k.is_multiple_of(3) { "a" } else { "b" }, k).into_bytes()
}

fn value(len: usize, fill: u8) -> Vec<u8> {
    (0..len).map(|i| fill.wrapping_add(i as u8)).collect()
}

/// Opaque metadata of a length that varies with the fill (0..=79 bytes: inline and boxed).
fn meta_of(len: usize, fill: u8) -> Vec<u8> {
    let mut m = vec![0u8; 9.max(fill as usize % 80)];
    m[..8].copy_from_slice(&(len as u64).to_le_bytes());
    m[8] = fill;
    *m.last_mut().unwrap() = 0xA5;
    m
}

fn cmd() -> impl Strategy<Value = Cmd> {
    let op = (0u8..12, prop::option::weighted(0.75, (prop_oneof![4 => 0usize..40, 1 => 900usize..2500], any::<u8>())));
    prop_oneof![
        10 => prop::collection::vec(op, 1..6).prop_map(Cmd::Write),
        2 => Just(Cmd::Snapshot),
        1 => (0usize..8).prop_map(Cmd::DropSnapshot),
        1 => Just(Cmd::Reopen),
        1 => Just(Cmd::Compact),
        1 => Just(Cmd::Checkpoint),
    ]
}

fn opts() -> Options {
    Options { segment_bytes: 1024, ..Options::default() }
}

/// Everything a view shows, compared to a model, including the work counters.
fn check_view(store: &Store, snap: &Snapshot, model: &Model, seq: u64, counted: bool) {
    assert_eq!(snap.seq(), seq);
    assert_eq!(snap.len(), model.len());
    let before = store.stats().values_read;
    let listed: Vec<(Vec<u8>, Vec<u8>)> = snap.range(b"", None).map(|(k, m)| (k.to_vec(), m.to_vec())).collect();
    let expect: Vec<(Vec<u8>, Vec<u8>)> = model.iter().map(|(k, (_, m))| (k.clone(), m.clone())).collect();
    assert_eq!(listed, expect);
    for p in [&b"a/"[..], b"b/", b"b/0", b"c"] {
        let got: Vec<Vec<u8>> = snap.scan_prefix(p).map(|(k, _)| k.to_vec()).collect();
        let want: Vec<Vec<u8>> = model.keys().filter(|k| k.starts_with(p)).cloned().collect();
        assert_eq!(got, want, "prefix {p:?}");
    }
    let got: Vec<Vec<u8>> = snap.range(b"a/03", Some(b"b/05")).map(|(k, _)| k.to_vec()).collect();
    let want: Vec<Vec<u8>> = model.range(b"a/03".to_vec()..b"b/05".to_vec()).map(|(k, _)| k.clone()).collect();
    assert_eq!(got, want);
    if counted {
        assert_eq!(store.stats().values_read, before, "listings must not read values");
    }
    for k in 0..12u8 {
        let k = key(k);
        let got = snap.get(&k).unwrap();
        assert_eq!(got.as_ref(), model.get(&k).map(|(v, _)| v), "key {:?}", String::from_utf8_lossy(&k));
        assert_eq!(snap.meta(&k).unwrap().as_deref(), model.get(&k).map(|(_, m)| &m[..]));
        assert_eq!(snap.contains(&k).unwrap(), model.contains_key(&k));
    }
    if counted {
        assert_eq!(store.stats().values_read, before + model.len() as u64, "one value read per hit");
    }
}

fn run(cmds: Vec<Cmd>) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    let mut store = Store::open(&dir, opts()).unwrap();
    let mut model = Model::new();
    let mut seq = 0u64;
    // (view, its model, its seq, the store generation it came from: counters are per handle)
    let mut snaps: Vec<(Snapshot, Model, u64, u32)> = Vec::new();
    let mut generation = 0u32;
    let mut checkpoints = 0;
    for c in cmds {
        match c {
            Cmd::Write(ops) => {
                let mut b = Batch::new();
                for (k, v) in ops {
                    if let Some((len, fill)) = v {
                        b.put(key(k), value(len, fill), meta_of(len, fill));
                        model.insert(key(k), (value(len, fill), meta_of(len, fill)));
                    } else {
                        b.delete(key(k));
                        model.remove(&key(k));
                    }
                }
                seq += 1;
                assert_eq!(store.write(b).unwrap(), seq);
            }
            Cmd::Snapshot => snaps.push((store.snapshot().unwrap(), model.clone(), seq, generation)),
            Cmd::DropSnapshot(i) => {
                if !snaps.is_empty() {
                    let i = i % snaps.len();
                    snaps.remove(i);
                }
            }
            Cmd::Reopen => {
                store.close().unwrap();
                drop(store);
                store = Store::open(&dir, opts()).unwrap();
                generation += 1;
                assert_eq!(store.stats().seq, seq);
            }
            Cmd::Compact => {
                store.compact().unwrap();
            }
            Cmd::Checkpoint => {
                checkpoints += 1;
                let target = tmp.path().join(format!("cp{checkpoints}"));
                let info = store.checkpoint(&target).unwrap();
                assert_eq!(info.seq, seq);
                assert!(info.hard_linked);
                let cp = Store::open(&target, opts()).unwrap();
                check_view(&cp, &cp.snapshot().unwrap(), &model, seq, true);
                cp.verify().unwrap();
            }
        }
        check_view(&store, &store.snapshot().unwrap(), &model, seq, true);
        for (s, m, q, g) in &snaps {
            check_view(&store, s, m, *q, *g == generation);
        }
        let ours = snaps.iter().filter(|s| s.3 == generation).count();
        assert_eq!(store.stats().open_snapshots, ours as u64);
    }
    store.verify().unwrap();
    drop(snaps);
    store.close().unwrap();
    let store = Store::open(&dir, opts()).unwrap();
    check_view(&store, &store.snapshot().unwrap(), &model, seq, true);
}

fn cases() -> u32 {
    std::env::var("RABOSH_PROPTEST_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(48)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]
    #[test]
    fn store_matches_model(cmds in prop::collection::vec(cmd(), 1..60)) {
        run(cmds);
    }
}

#[test]
fn segments_retired_by_compaction_vanish_when_the_last_snapshot_drops() {
    let tmp = tempfile::tempdir().unwrap();
    let store = Store::open(tmp.path(), opts()).unwrap();
    for i in 0..40u32 {
        let mut b = Batch::new();
        b.put(b"k".to_vec(), vec![i as u8; 100], [0; 40]);
        store.write(b).unwrap();
    }
    let old = store.snapshot().unwrap();
    let segs = |p: &Path| {
        std::fs::read_dir(p)
            .unwrap()
            .filter(|e| e.as_ref().unwrap().path().extension().is_some_and(|x| x == "seg"))
            .count()
    };
    let before = segs(tmp.path());
    assert!(before > 3, "tiny segments should have rotated: {before}");
    store.compact().unwrap();
    assert_eq!(segs(tmp.path()), before + 2, "pinned inputs stay while a snapshot reads them");
    assert_eq!(old.get(b"k").unwrap().unwrap(), vec![39u8; 100]);
    let mut b = Batch::new();
    b.put(b"k".to_vec(), b"new".to_vec(), [1; 40]);
    store.write(b).unwrap();
    assert_eq!(old.get(b"k").unwrap().unwrap(), vec![39u8; 100]);
    drop(old);
    assert_eq!(segs(tmp.path()), 2, "compacted + active remain");
    assert_eq!(store.snapshot().unwrap().get(b"k").unwrap().unwrap(), b"new");
    let st = store.stats();
    assert!(st.dead_bytes < 400, "compaction reclaimed: {st:?}");
    store.close().unwrap();
    drop(store);
    std::fs::remove_dir_all(tmp.path()).unwrap();
}
