//! No two sealed blobs ever share a nonce: across commits, reopens, power losses (a torn tail
//! is cut and its offsets written again), compaction, checkpoints and key rotation. Every
//! sealed blob of every file is collected after every step; a nonce seen with two different
//! blobs is a reuse.

use proptest::prelude::*;
use rabosh::{Batch, Durability, Encryption, Options, Store, Vfs};
use rabosh_testkit::{SimFs, sealed_blobs};
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

const DIR: &str = "/n";
const CP: &str = "/n-cp";

#[derive(Debug, Clone)]
enum Step {
    Write(u8, u16),
    Reopen,
    Crash(u64),
    Compact,
    Rotate,
    Checkpoint,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        6 => (any::<u8>(), 0u16..300).prop_map(|(k, n)| Step::Write(k, n)),
        1 => Just(Step::Reopen),
        2 => any::<u64>().prop_map(Step::Crash),
        1 => Just(Step::Compact),
        1 => Just(Step::Rotate),
        1 => Just(Step::Checkpoint),
    ]
}

fn open(fs: &SimFs, key: u8) -> Store {
    let o = Options {
        segment_bytes: 2048,
        durability: Durability::Buffered,
        vfs: Some(Arc::new(fs.clone()) as Arc<dyn Vfs>),
        encryption: Some(Encryption::new([key; 32])),
        ..Options::default()
    };
    Store::open(DIR, o).unwrap()
}

fn collect(fs: &SimFs, dir: &str, key: u8, seen: &mut HashMap<[u8; 24], Vec<u8>>) -> Result<(), TestCaseError> {
    for b in sealed_blobs(fs, Path::new(dir), &Encryption::new([key; 32])).unwrap() {
        if let Some(old) = seen.insert(b.nonce, b.bytes.clone()) {
            prop_assert_eq!(old, b.bytes, "nonce reused in {}/{} at {}", dir, b.file, b.offset);
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]
    #[test]
    fn no_two_sealed_blobs_share_a_nonce(steps in proptest::collection::vec(step(), 1..40)) {
        let mut fs = SimFs::new();
        let mut key = 1u8;
        let mut store = Some(open(&fs, key));
        let mut seen = HashMap::new();
        let mut checkpointed: Option<u8> = None;
        for s in steps {
            let st = store.as_ref().unwrap();
            match s {
                Step::Write(k, n) => {
                    let mut b = Batch::new();
                    b.put(vec![k], vec![k; n as usize], vec![n as u8]);
                    st.write(b).unwrap();
                    if n % 3 == 0 {
                        st.sync().unwrap();
                    }
                }
                Step::Reopen => {
                    drop(store.take());
                    store = Some(open(&fs, key));
                }
                Step::Crash(seed) => {
                    let img = fs.crash(seed);
                    drop(store.take());
                    fs = img;
                    store = Some(open(&fs, key));
                }
                Step::Compact => {
                    st.compact().unwrap();
                }
                Step::Rotate => {
                    key = key.wrapping_add(1).max(1);
                    st.rotate_key(Encryption::new([key; 32])).unwrap();
                }
                Step::Checkpoint => {
                    if checkpointed.is_none() {
                        st.checkpoint(CP).unwrap();
                        checkpointed = Some(key);
                    }
                }
            }
            // The live store, and the checkpoint under the key it was taken with (its KEY
            // file is a copy; a crash may have lost the checkpoint's unsynced steps: skip it then).
            collect(&fs, DIR, key, &mut seen)?;
            if let Some(k) = checkpointed && fs.names(Path::new(CP)).iter().any(|n| n == "MANIFEST") {
                collect(&fs, CP, k, &mut seen)?;
            }
        }
        prop_assert!(!seen.is_empty(), "the KEY file's blob at least");
    }
}
