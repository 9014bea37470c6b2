//! Point reads in key order over many sealed runs (issue 36 §1: an import reads each new key
//! before writing it, and such keys fall in one gap of every run). A run remembers where its last
//! miss landed, a slot a class of keys, and answers a key between the same two neighbours without
//! a search: these reads, interleaved across prefixes that share slots and that do not, present
//! and absent keys alike, must answer exactly what was written. The decoded pages the memo points
//! into may be let go by the bounded page cache at any read and opened again later: with room for
//! no page, about one, and a few, the answers must stay the same.
//!
//! One test in this binary: the page cache's budget is the process's.

use rabosh::{Batch, Encryption, Options, Store};
use std::collections::BTreeMap;

const PREFIXES: [&str; 4] = ["a/", "b/", "m/", "t/"];
const KEYS: u32 = 3000;

fn key(p: &str, i: u32) -> Vec<u8> {
    format!("{p}{i:06}").into_bytes()
}

#[test]
fn reads_in_key_order_across_prefixes_answer_what_was_written() {
    for encrypted in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let opts = Options {
            segment_bytes: 32 << 10,
            encryption: encrypted.then(|| Encryption::new([3; 32])),
            ..Options::default()
        };
        let store = Store::open(dir.path(), opts).unwrap();
        let mut model: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
        // Every third key left out; then a second round overwrites every fifth and deletes every
        // seventh, so later runs hold keys inside earlier runs' ranges.
        for round in 0..2u8 {
            for start in (0..KEYS).step_by(50) {
                let mut b = Batch::new();
                for i in start..start + 50 {
                    for p in PREFIXES {
                        let k = key(p, i);
                        if round == 0 && i % 3 != 0 || round == 1 && i % 5 == 0 && i % 3 != 0 {
                            b.put(k.clone(), vec![round; 40], vec![round, 1]);
                            model.insert(k, vec![round, 1]);
                        } else if round == 1 && i % 7 == 0 {
                            b.delete(k.clone());
                            model.remove(&k);
                        }
                    }
                }
                store.write(b).unwrap();
            }
        }
        let snap = store.snapshot().unwrap();
        assert!(!snap.is_built());
        // Interleaved by prefix, each prefix's keys ascending (with keys past the last and
        // between every pair); then each prefix on its own; then descending.
        let order: Vec<(usize, u32)> = (0..KEYS + 5).flat_map(|i| (0..PREFIXES.len()).map(move |p| (p, i))).collect();
        let by_prefix: Vec<(usize, u32)> =
            (0..PREFIXES.len()).flat_map(|p| (0..KEYS + 5).map(move |i| (p, i))).collect();
        let descending: Vec<(usize, u32)> = order.iter().rev().copied().collect();
        for budget in [usize::MAX, 0, 6_000, 20_000] {
            rabosh::set_page_cache_bytes(budget);
            // With a bounded cache every read may open its page again (slow in a debug build):
            // the interleaved order alone, whose prefixes' pages push each other out.
            let orders = [("interleaved", &order), ("by prefix", &by_prefix), ("descending", &descending)];
            let orders = if budget == usize::MAX { &orders[..] } else { &orders[..1] };
            for &(what, reads) in orders {
                for &(p, i) in reads {
                    let k = key(PREFIXES[p], i);
                    assert_eq!(
                        snap.meta(&k).unwrap(),
                        model.get(&k).cloned(),
                        "{what}, encrypted {encrypted}, cache {budget}: {}",
                        String::from_utf8_lossy(&k)
                    );
                }
            }
        }
        rabosh::set_page_cache_bytes(usize::MAX);
    }
}
