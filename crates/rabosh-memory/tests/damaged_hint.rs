//! An encrypted store whose sealed hint has a damaged page over a damaged segment: the engine
//! cannot build its key directory, so a directory view answers Corruption (an Error result for
//! the binding to settle its promise with), never a panic in the caller or a worker; a view of
//! a memory whose page is whole still answers.

use rabosh_memory::{EmbeddedOptions, EmbeddedStore, EncryptionKey, Error, Memories, MemoryOptions, View};
use rabosh_testkit::sealed_blobs;
use std::path::Path;

const KEY: [u8; 32] = [9; 32];
const N: u32 = 400;

fn options() -> EmbeddedOptions {
    EmbeddedOptions { segment_bytes: 32 << 10, encryption: Some(EncryptionKey::new(KEY)), ..Default::default() }
}

fn path(i: u32) -> String {
    format!("/memories/n{i:03}")
}

fn memories(store: &std::sync::Arc<EmbeddedStore>, listing_index: bool) -> Memories {
    Memories::new(store.clone(), MemoryOptions { listing_index, ..Default::default() }).unwrap()
}

/// Flips a byte in the middle of the sealed blob of `file` that is `from_end` blobs before its
/// last.
fn flip_blob(dir: &Path, file: &str, from_end: usize) {
    let (off, len) = sealed_blobs(&rabosh::StdFs, dir, &rabosh::Encryption::new(KEY))
        .unwrap()
        .into_iter()
        .filter(|b| b.file == file)
        .map(|b| (b.offset as usize, b.bytes.len()))
        .nth_back(from_end)
        .unwrap_or_else(|| panic!("{file}: no sealed blob {from_end} before the last"));
    let mut bytes = std::fs::read(dir.join(file)).unwrap();
    bytes[off + len / 2] ^= 0x10;
    std::fs::write(dir.join(file), &bytes).unwrap();
}

#[test]
fn a_directory_view_over_a_damaged_page_and_segment_is_an_error_not_a_panic() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    let store = EmbeddedStore::open(&dir, options()).unwrap();
    let m = memories(&store, false);
    for i in 0..N {
        m.create(&path(i), &format!("memory {i}")).unwrap();
    }
    drop(m);
    store.close().unwrap();
    drop(store);
    assert!(dir.join("0000000002.seg").exists(), "segment 1 is sealed");
    let pages = sealed_blobs(&rabosh::StdFs, &dir, &rabosh::Encryption::new(KEY))
        .unwrap()
        .into_iter()
        .filter(|b| b.file == "0000000001.hint")
        .count();
    assert!(pages >= 4, "segment 1's hint: a directory and three pages at least ({pages})");
    // Not the last page: it may hold only the keys that sort after every memory (the directory
    // totals); the one before it holds memories (the feed's entries sort before them).
    flip_blob(&dir, "0000000001.hint", 1);
    flip_blob(&dir, "0000000001.seg", 0);

    for listing_index in [false, true] {
        let store = EmbeddedStore::open(&dir, options()).expect("open reads only the hints' directories");
        let m = memories(&store, listing_index);
        // The last memory lies in a later segment, whose hint is whole.
        match m.view(&path(N - 1)) {
            Ok(View::File { .. }) => {}
            other => panic!("index {listing_index}: a view of a whole page's memory: {other:?}"),
        }
        match m.view("/memories") {
            Err(Error::Corruption(why)) => assert!(why.contains("0000000001.seg"), "{why}"),
            other => panic!("index {listing_index}: expected Corruption, got {other:?}"),
        }
        let _ = store.stats();
        assert!(matches!(store.verify(), Err(Error::Corruption(_))), "index {listing_index}: verify");
        assert!(matches!(store.compact(), Err(Error::Corruption(_))), "index {listing_index}: compact");
        drop(m);
        store.close().unwrap();
    }
}
