//! Checkpoints taken while a writer thread keeps committing (real files): each checkpoint opens
//! at exactly the seq it reported, holding exactly that commit's state, and verifies clean.

use rabosh::{Batch, Options, Store};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

fn batch(i: u64) -> Batch {
    let mut b = Batch::new();
    b.put(
        format!("k{}", i % 7).into_bytes(),
        format!("v{i}-").repeat(1 + (i % 5) as usize).into_bytes(),
        [i as u8; 40],
    );
    if i.is_multiple_of(5) {
        b.delete(format!("k{}", (i + 3) % 7).into_bytes());
    }
    b
}

fn model(n: u64) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let mut m = BTreeMap::new();
    for i in 1..=n {
        m.insert(format!("k{}", i % 7).into_bytes(), format!("v{i}-").repeat(1 + (i % 5) as usize).into_bytes());
        if i % 5 == 0 {
            m.remove(format!("k{}", (i + 3) % 7).as_bytes());
        }
    }
    m
}

fn contents(store: &Store) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let s = store.snapshot().unwrap();
    s.range(b"", None).map(|(k, _)| (k.to_vec(), s.get(k).unwrap().unwrap())).collect()
}

#[test]
fn a_checkpoint_under_concurrent_commits_opens_at_exactly_its_seq() {
    let tmp = tempfile::tempdir().unwrap();
    let opts = Options { segment_bytes: 2048, ..Options::default() };
    let store = Arc::new(Store::open(tmp.path().join("src"), opts.clone()).unwrap());
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let (store, stop) = (store.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut i = 0;
            while !stop.load(Ordering::SeqCst) {
                i += 1;
                assert_eq!(store.write(batch(i)).unwrap(), i);
            }
            i
        })
    };
    let mut seqs = Vec::new();
    for round in 0..6 {
        // Let the writer make progress first, so every checkpoint lands between commits.
        let floor = seqs.last().copied().unwrap_or(0) + 3;
        while store.stats().seq < floor {
            std::thread::yield_now();
        }
        if round == 3 {
            store.compact().unwrap();
        }
        let cp = tmp.path().join(format!("cp{round}"));
        let info = store.checkpoint(&cp).unwrap();
        let c = Store::open(&cp, opts.clone()).unwrap();
        assert_eq!(c.stats().seq, info.seq, "checkpoint {round} opens at the seq it reported");
        assert_eq!(contents(&c), model(info.seq), "checkpoint {round} holds exactly commit {}", info.seq);
        c.verify().unwrap();
        seqs.push(info.seq);
    }
    // Writes went on during the checkpoints: the writer passed the last one.
    let floor = seqs.last().unwrap() + 3;
    while store.stats().seq < floor {
        std::thread::yield_now();
    }
    stop.store(true, Ordering::SeqCst);
    let last = writer.join().unwrap();
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "{seqs:?}");
    assert!(last > *seqs.last().unwrap());
    assert_eq!(contents(&store), model(last));
    store.verify().unwrap();
}
