//! Issue 9, case 3: group commit flags frames appended behind a pending fsync BUFFERED; once a
//! later fsync covers and acknowledges them, damage to any of them is corruption — after a
//! process crash too (no close), when the page cache still holds the synced record. A power
//! loss may lose the record: then the same damage is a torn tail, still legal.

mod common;

use common::{meta, opts};
use rabosh::{Batch, Error, Store, Vfs};
use rabosh_testkit::{FaultFs, SimFs};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

const DIR: &str = "/g/store";

fn put(key: &str) -> Batch {
    let mut b = Batch::new();
    b.put(key.as_bytes().to_vec(), vec![b'x'; 50], meta(3));
    b
}

/// (offset, buffered flag) of every frame of a segment file.
fn frames(bytes: &[u8]) -> Vec<(usize, bool)> {
    let mut out = Vec::new();
    let mut at = 40;
    // Up to the zeros written ahead of the log (a frame never starts with a zero byte).
    while at + 12 <= bytes.len() && bytes[at..at + 4] != [0; 4] {
        let word = u32::from_le_bytes(bytes[at + 4..at + 8].try_into().unwrap());
        out.push((at, word >> 31 == 1));
        at += 12 + (word & 0x7fff_ffff) as usize;
    }
    out
}

fn active_segment(fs: &SimFs) -> PathBuf {
    let d = Path::new(DIR);
    d.join(fs.names(d).into_iter().filter(|n| n.ends_with(".seg")).max().unwrap())
}

/// Two acknowledged groups: commit 1 alone, then `n` commits appended while its fsync was held
/// (all but the first of them flagged BUFFERED), all acknowledged by the next fsync.
fn grouped(n: usize) -> SimFs {
    let sim = SimFs::new();
    let fs = FaultFs::new(Arc::new(sim.clone()));
    let store = Arc::new(Store::open(DIR, opts(Arc::new(fs.clone()) as Arc<dyn Vfs>, 64 << 20)).unwrap());
    store.write(put("first")).unwrap();
    let _release = fs.release_on_drop(Duration::from_secs(20));
    fs.hold_syncs();
    let handles: Vec<_> = (0..n)
        .map(|t| {
            let store = store.clone();
            std::thread::spawn(move || store.write(put(&format!("g{t}"))).unwrap())
        })
        .collect();
    assert!(fs.wait_held(1, Duration::from_secs(20)));
    while store.latest_snapshot().unwrap().seq() < 1 + n as u64 {
        std::thread::yield_now();
    }
    fs.release_syncs();
    for h in handles {
        h.join().unwrap();
    }
    assert_eq!(store.snapshot().unwrap().seq(), 1 + n as u64, "every commit acknowledged");
    // A process crash: the store is never closed; the page cache (and the record) survive.
    let image = sim.fork();
    std::mem::forget(store); // no close: its drop would write and fsync the record again
    image
}

#[test]
fn damage_to_an_acknowledged_buffered_flagged_frame_is_corruption_after_a_process_crash() {
    let image = grouped(12);
    let seg = active_segment(&image);
    let bytes = image.read_file(&seg).unwrap();
    let fr = frames(&bytes);
    assert_eq!(fr.len(), 13);
    let flagged = fr.iter().filter(|f| f.1).count();
    assert!(flagged >= 10, "the group must have flagged frames: {fr:?}");
    for (i, &(at, buffered)) in fr.iter().enumerate() {
        let img = image.fork();
        let mut b = bytes.clone();
        b[at + 20] ^= 0x08;
        img.write_file(&seg, &b).unwrap();
        let r = Store::open(DIR, opts(Arc::new(img) as Arc<dyn Vfs>, 64 << 20));
        match r {
            Err(Error::Corruption { file, offset, .. }) => {
                assert_eq!(file, seg);
                assert_eq!(offset, at as u64, "frame {i}");
            }
            Err(e) => panic!("frame {i} (buffered {buffered}): {e}"),
            Ok(s) => panic!(
                "frame {i} (buffered {buffered}): damage to an acknowledged commit was dropped as a torn tail \
                 (opened at seq {})",
                s.stats().seq
            ),
        }
    }
    // Without the record (lost to a power loss) the damage to the last frames is a torn tail.
    let img = image.fork();
    let mut b = bytes.clone();
    let (last, _) = *fr.last().unwrap();
    b[last + 20] ^= 0x08;
    img.write_file(&seg, &b).unwrap();
    img.delete_file(&Path::new(DIR).join("SYNCED")).unwrap();
    let s = Store::open(DIR, opts(Arc::new(img) as Arc<dyn Vfs>, 64 << 20)).unwrap();
    assert_eq!(s.stats().seq, 12);
}
