//! Issue 9, case 8: recovery work stays linear in the store's size whatever the values hold.
//! Values that repeat a frame magic and a large (in-range) length word turn every repeat into
//! a frame candidate for the probe behind a damaged frame; checking each one by reading its
//! claimed payload made open quadratic (66 s on 10 MB). Counted in bytes read through the Vfs,
//! not in time.

use rabosh::{Batch, Error, Options, Store};
use rabosh_testkit::FaultFs;
use std::sync::Arc;

const MAGIC: u32 = 0x5246_4252;

/// A value whose every 4 KiB holds a frame header claiming a `claim`-byte payload.
fn hostile_value(len: usize, claim: u32) -> Vec<u8> {
    let mut v = vec![b'a'; len];
    for at in (0..len.saturating_sub(12)).step_by(4096) {
        v[at..at + 4].copy_from_slice(&MAGIC.to_le_bytes());
        v[at + 4..at + 8].copy_from_slice(&claim.to_le_bytes());
        v[at + 8..at + 12].copy_from_slice(&0xdead_beefu32.to_le_bytes());
    }
    v
}

#[test]
fn recovery_behind_an_early_flip_reads_a_bounded_multiple_of_the_store() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("s");
    let store = Store::open(&dir, Options::default()).unwrap();
    // The probe starts inside the damaged frame: make that one hold the hostile bytes.
    for i in 0..5u32 {
        let len = if i == 0 { 3 << 20 } else { 64 << 10 };
        let mut b = Batch::new();
        b.put(format!("m{i}").into_bytes(), hostile_value(len, 1 << 20), [0u8; 8]);
        store.write(b).unwrap();
    }
    store.close().unwrap();
    drop(store);
    let seg = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "seg"))
        .unwrap();
    let mut bytes = std::fs::read(&seg).unwrap();
    let size = bytes.len() as u64;
    // One flipped byte in the first frame's payload.
    bytes[40 + 12 + 30] ^= 0x01;
    std::fs::write(&seg, &bytes).unwrap();
    // As after a power loss that lost the synced record: the probe behind the flip decides.
    std::fs::remove_file(dir.join("SYNCED")).unwrap();

    let fs = FaultFs::std();
    let r = Store::open(&dir, Options { vfs: Some(Arc::new(fs.clone())), ..Options::default() });
    assert!(
        matches!(r, Err(Error::Corruption { offset: 40, .. })),
        "the Sync-mode commits behind the flip prove it was durable: {:?}",
        r.err()
    );
    let read = fs.bytes_read();
    eprintln!("open read {read} bytes of a {size}-byte store");
    assert!(read <= 5 * size, "open read {read} bytes of a {size}-byte store: not linear");
}
