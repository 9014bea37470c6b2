//! Issue 11: after a clean close, open answers point reads from the segments' hints; since
//! issue 36 ordered reads and writes too (a merge of the hints and a delta), never building the
//! whole map. Every answer must be the one a built map gives: after open, after writes and
//! compaction (which publishes a built map), and after the next reopen.

use proptest::prelude::*;
use rabosh::{Batch, Durability, Options, Snapshot, Store};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

type Model = BTreeMap<Vec<u8>, (Vec<u8>, Vec<u8>)>;

fn key(i: u8) -> Vec<u8> {
    format!("m:default:/memories/k{i:03}").into_bytes()
}

fn opts(shared: bool) -> Options {
    // Small segments: a few commits each, so keys are overwritten and deleted across segments.
    Options { segment_bytes: 400, shared, ..Options::default() }
}

#[derive(Debug, Clone)]
enum Step {
    Put(u8, u8),
    Delete(u8),
    Compact,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        6 => (0..24u8, any::<u8>()).prop_map(|(k, v)| Step::Put(k, v)),
        3 => (0..24u8).prop_map(Step::Delete),
        1 => Just(Step::Compact),
    ]
}

fn apply(store: &Store, model: &mut Model, s: &Step) {
    match *s {
        Step::Put(k, v) => {
            let (value, meta) = (vec![v; 1 + v as usize % 50], vec![k, v]);
            let mut b = Batch::new();
            b.put(key(k), value.clone(), meta.clone());
            store.write(b).unwrap();
            model.insert(key(k), (value, meta));
        }
        Step::Delete(k) => {
            let mut b = Batch::new();
            b.delete(key(k));
            store.write(b).unwrap();
            model.remove(&key(k));
        }
        Step::Compact => {
            store.compact().unwrap();
        }
    }
}

/// Every key ever written and some never written (before, between and after them) answer as
/// the model says, by point reads only.
fn check_points(snap: &Snapshot, model: &Model) {
    let mut probes: Vec<Vec<u8>> = (0..24).map(key).collect();
    probes.extend([
        b"".to_vec(),
        b"m:default:/memories/k".to_vec(),
        b"m:default:/memories/k0005".to_vec(),
        b"z".to_vec(),
    ]);
    for k in &probes {
        let want = model.get(k);
        assert_eq!(snap.get(k).unwrap(), want.map(|(v, _)| v.clone()), "get {}", String::from_utf8_lossy(k));
        assert_eq!(snap.meta(k).unwrap(), want.map(|(_, m)| m.clone()), "meta {}", String::from_utf8_lossy(k));
        assert_eq!(snap.contains(k).unwrap(), want.is_some());
    }
}

fn check_all(snap: &Snapshot, model: &Model) {
    check_points(snap, model);
    let listed: Vec<(Vec<u8>, Vec<u8>)> = snap.scan_prefix(b"m:").map(|(k, m)| (k.to_vec(), m.to_vec())).collect();
    let want: Vec<(Vec<u8>, Vec<u8>)> = model.iter().map(|(k, (_, m))| (k.clone(), m.clone())).collect();
    assert_eq!(listed, want);
    assert_eq!(snap.len(), model.len());
}

fn hints(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".hint"))
        .collect();
    v.sort();
    v
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Reopened after a clean close, the store answers every point read from the hints (the
    /// map not built), then everything again once built; writes and compaction on the lazily
    /// opened store, and the next reopen, keep agreeing with the model.
    #[test]
    fn lazy_open_answers_as_the_built_map(steps in prop::collection::vec(step(), 1..60), more in prop::collection::vec(step(), 0..12)) {
        let dir = tempfile::tempdir().unwrap();
        let mut model = Model::new();
        {
            let store = Store::open(dir.path(), opts(false)).unwrap();
            for s in &steps {
                apply(&store, &mut model, s);
            }
            store.close().unwrap();
        }
        let store = Store::open(dir.path(), opts(false)).unwrap();
        let snap = store.snapshot().unwrap();
        check_points(&snap, &model);
        let counted = store.stats();
        // A store that holds no record at all (no hint to read) builds its empty map at open.
        let lazy = !hints(dir.path()).is_empty();
        prop_assert!(!lazy || !snap.is_built(), "point reads and stats must not build the key directory");
        check_all(&snap, &model);
        prop_assert!(!lazy || !snap.is_built(), "listings merge the hints: nothing builds the map");
        let built = store.stats();
        prop_assert_eq!((counted.keys, counted.live_bytes), (built.keys, built.live_bytes));
        prop_assert_eq!(built.keys, model.len() as u64);
        for s in &more {
            apply(&store, &mut model, s);
        }
        check_all(&store.snapshot().unwrap(), &model);
        store.verify().unwrap();
        drop(snap);
        store.close().unwrap();

        let store = Store::open(dir.path(), opts(false)).unwrap();
        let snap = store.snapshot().unwrap();
        check_points(&snap, &model);
        prop_assert!(hints(dir.path()).is_empty() || !snap.is_built());
        check_all(&snap, &model);
    }
}

fn seed(dir: &Path) -> Model {
    let store = Store::open(dir, opts(false)).unwrap();
    let mut model = Model::new();
    for round in 0..3u8 {
        for k in 0..24u8 {
            let s = match (k + round) % 5 {
                0 => Step::Delete(k),
                _ => Step::Put(k, k.wrapping_mul(7) ^ round),
            };
            apply(&store, &mut model, &s);
        }
    }
    store.close().unwrap();
    assert!(hints(dir).len() > 3, "the seed spans several segments");
    model
}

/// The first point read after open leaves the map unbuilt, and so does a scan (issue 36: it
/// merges the hints instead).
#[test]
fn first_point_read_does_not_build_the_key_directory() {
    let dir = tempfile::tempdir().unwrap();
    let model = seed(dir.path());
    let store = Store::open(dir.path(), opts(false)).unwrap();
    let snap = store.snapshot_if_current().unwrap().expect("nothing to catch up on");
    let (k, (v, _)) = model.iter().next().unwrap();
    assert_eq!(snap.get(k).unwrap().as_ref(), Some(v));
    assert!(!snap.is_built());
    assert_eq!(snap.scan_prefix(b"m:").count(), model.len());
    assert!(!snap.is_built());
}

/// Issue 36: open starts no thread to build the map (at a million keys it held 187 MB): the
/// directory stays on the hints through listings and writes, and answers as the model.
#[test]
fn open_leaves_the_key_directory_on_the_hints() {
    let dir = tempfile::tempdir().unwrap();
    let mut model = seed(dir.path());
    let store = Store::open(dir.path(), Options { segment_bytes: 400, ..Options::default() }).unwrap();
    check_all(&store.snapshot().unwrap(), &model);
    apply(&store, &mut model, &Step::Put(30, 1));
    apply(&store, &mut model, &Step::Delete(2));
    let snap = store.snapshot().unwrap();
    check_all(&snap, &model);
    assert!(!snap.is_built());
}

/// Whole hints (`RABOSHHT`, the layout before pages) that cannot be used lazily: damaged
/// (rebuilt from a scan) or with keys out of order (decoded and built at open). Either way the
/// answers are the model's. (A paged hint's damage is found late: `tests/paged_hint.rs`.)
#[test]
fn a_hint_that_does_not_fit_falls_back_to_the_eager_build() {
    for damage in ["flip a byte", "keys out of order"] {
        let dir = tempfile::tempdir().unwrap();
        let model = seed(dir.path());
        assert!(rabosh_testkit::rewrite_hints_whole(dir.path()).unwrap() >= 2);
        let victim = hints(dir.path())[1].clone();
        let mut buf = std::fs::read(&victim).unwrap();
        match damage {
            "flip a byte" => {
                let at = buf.len() / 2;
                buf[at] ^= 0x40;
            }
            _ => buf = swap_first_two_records(&buf),
        }
        std::fs::write(&victim, &buf).unwrap();
        let store = Store::open(dir.path(), opts(false)).unwrap();
        let snap = store.snapshot().unwrap();
        assert!(snap.is_built(), "{damage}: built at open");
        check_all(&snap, &model);
        drop(snap);
        store.close().unwrap();
    }
}

/// A v3 hint (FORMAT.md, "Hint file") with its first two records swapped and its checksum
/// recomputed: intact, but not in key order.
fn swap_first_two_records(buf: &[u8]) -> Vec<u8> {
    let u32_at = |at: usize| u32::from_le_bytes(buf[at..at + 4].try_into().unwrap()) as usize;
    let record_end = |at: usize| {
        let klen = u32_at(at + 9);
        let mut end = at + 13 + klen;
        if buf[at + 8] == 1 {
            end += 4 + u32_at(end) + 16;
        }
        end
    };
    let count = u64::from_le_bytes(buf[32..40].try_into().unwrap());
    assert!(count >= 2);
    let (a, b) = (40, record_end(40));
    let c = record_end(b);
    let body_end = buf.len() - 4;
    let mut out = buf[..a].to_vec();
    out.extend_from_slice(&buf[b..c]);
    out.extend_from_slice(&buf[a..b]);
    out.extend_from_slice(&buf[c..body_end]);
    let crc = crc32c::crc32c(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// Shared mode (the binding's default): another handle's commits, and its rotations (a
/// replaced MANIFEST: a reload), reach a handle that opened lazily.
#[test]
fn shared_catch_up_and_reload_work_on_a_lazy_open() {
    let dir = tempfile::tempdir().unwrap();
    let mut model = seed(dir.path());
    let a = Store::open(dir.path(), opts(true)).unwrap();
    let b = Store::open(dir.path(), opts(true)).unwrap();
    let first = a.snapshot().unwrap();
    check_points(&first, &model);
    assert!(!first.is_built());
    // One small commit: a tail to apply. Then enough to rotate: a reload.
    apply(&b, &mut model, &Step::Put(3, 99));
    check_all(&a.snapshot().unwrap(), &model);
    for k in 0..24u8 {
        apply(&b, &mut model, &Step::Put(k, 200 - k));
    }
    apply(&b, &mut model, &Step::Delete(5));
    let now = a.snapshot().unwrap();
    check_points(&now, &model);
    check_all(&now, &model);
    apply(&a, &mut model, &Step::Put(6, 1));
    check_all(&b.snapshot().unwrap(), &model);
    drop((first, now));
    a.close().unwrap();
    b.close().unwrap();
    let store = Store::open(dir.path(), Options { durability: Durability::Sync, ..opts(false) }).unwrap();
    check_all(&store.snapshot().unwrap(), &model);
}
