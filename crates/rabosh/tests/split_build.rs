//! The key directory's build opens a large sealed hint's pages on two threads, the second half
//! on a thread of its own (paged_run.rs), and parses each page's records once as it checks
//! them. Its result must be one thread's: the same keys, metadata and values whatever the store
//! holds, and a damaged page in either half answered from the segment's scan exactly as the
//! serial build answers it. Each case is compared with a plain store given the same writes.

use proptest::prelude::*;
use rabosh::testing::{hint_pages_opened, sealed_blobs, set_background_build, set_split_pages};
use rabosh::{Batch, Encryption, Options, StdFs, Store};
use std::path::Path;

const KEY: [u8; 32] = [11; 32];
const SERIAL: Option<usize> = Some(usize::MAX);

fn opts(encrypted: bool) -> Options {
    Options { encryption: encrypted.then(|| Encryption::new(KEY)), segment_bytes: 96 << 10, ..Options::default() }
}

fn key(i: u32) -> Vec<u8> {
    format!("key/{:02}/{i:05}", i % 7).into_bytes()
}

/// One operation of a workload: a put of key `.0` (value length, metadata byte) or a delete.
type Op = (u32, Option<(u8, u8)>);

/// `first` keys in one commit (one hint of many pages), then `ops` in commits of `per` each,
/// then a clean close (every segment gets its hint).
fn populate(dir: &Path, encrypted: bool, first: u32, ops: &[Op], per: usize) {
    let s = Store::open(dir, opts(encrypted)).unwrap();
    let mut b = Batch::new();
    for i in 0..first {
        b.put(key(i), vec![i as u8; 20 + (i % 13) as usize], vec![(i % 251) as u8; 8]);
    }
    s.write(b).unwrap();
    for chunk in ops.chunks(per.max(1)) {
        let mut b = Batch::new();
        for &(k, op) in chunk {
            match op {
                Some((len, meta)) => b.put(key(k), vec![meta; len as usize], vec![meta; 3]),
                None => b.delete(key(k)),
            }
        }
        s.write(b).unwrap();
    }
    s.close().unwrap();
}

type Listed = Vec<(Vec<u8>, Vec<u8>, Vec<u8>)>;

/// Every key with its metadata and value, as a listing right after open finds them (the
/// listing builds the key directory on this thread), with the build split as `split` says;
/// and how many hint pages this thread opened for it.
fn listing(dir: &Path, encrypted: bool, split: Option<usize>) -> rabosh::Result<(Listed, u64)> {
    set_background_build(false);
    set_split_pages(split);
    let s = Store::open(dir, opts(encrypted))?;
    let snap = s.snapshot()?;
    let before = hint_pages_opened();
    let keys: Vec<(Vec<u8>, Vec<u8>)> = snap.range(b"", None).map(|(k, m)| (k.to_vec(), m.to_vec())).collect();
    let opened = hint_pages_opened() - before;
    let mut out = Vec::with_capacity(keys.len());
    for (k, m) in keys {
        let v = snap.get(&k)?.expect("a listed key has a value");
        out.push((k, m, v));
    }
    assert_eq!(s.stats().keys, out.len() as u64, "the count agrees with the listing");
    drop(snap);
    s.close()?;
    set_split_pages(None);
    Ok((out, opened))
}

/// The pages of each paged hint in `dir` (file, offset, length), directory left out.
fn pages(dir: &Path) -> Vec<(String, Vec<(usize, usize)>)> {
    let blobs = sealed_blobs(&StdFs, dir, &Encryption::new(KEY)).unwrap();
    let mut files: Vec<String> = blobs.iter().filter(|b| b.file.ends_with(".hint")).map(|b| b.file.clone()).collect();
    files.dedup();
    files
        .into_iter()
        .map(|f| {
            let p = blobs.iter().filter(|b| b.file == f).skip(1).map(|b| (b.offset as usize, b.bytes.len())).collect();
            (f, p)
        })
        .collect()
}

fn flip(dir: &Path, file: &str, (off, len): (usize, usize)) {
    let path = dir.join(file);
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[off + len / 2] ^= 0x20;
    std::fs::write(&path, &bytes).unwrap();
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
}

/// The hint of `keys` records in one segment, and its page count.
fn one_hint(dir: &Path, keys: u32) -> (String, Vec<(usize, usize)>) {
    populate(dir, true, keys, &[], 1);
    let mut hints = pages(dir);
    assert_eq!(hints.len(), 1, "one segment, one hint: {hints:?}");
    hints.pop().unwrap()
}

#[test]
fn a_split_build_opens_half_the_pages_on_the_callers_thread_and_lists_the_same() {
    let tmp = tempfile::tempdir().unwrap();
    let (plain, enc) = (tmp.path().join("plain"), tmp.path().join("enc"));
    populate(&plain, false, 1500, &[], 1);
    let (_, p) = one_hint(&enc, 1500);
    assert!(p.len() >= 20, "{} pages", p.len());
    let (want, _) = listing(&plain, false, None).unwrap();
    let (serial, n) = listing(&enc, true, SERIAL).unwrap();
    assert_eq!(n, p.len() as u64, "the serial build opens every page here");
    let (split, half) = listing(&enc, true, Some(2)).unwrap();
    assert_eq!(half, (p.len() / 2) as u64, "the second half was opened on another thread");
    let (default, _) = listing(&enc, true, None).unwrap();
    assert!(want == serial && serial == split && split == default, "a split build lists what a serial one does");
    // Below the threshold: one thread.
    assert_eq!(listing(&enc, true, Some(p.len() + 1)).unwrap().1, p.len() as u64);
}

#[test]
fn a_damaged_page_in_either_half_is_answered_from_the_scan() {
    let tmp = tempfile::tempdir().unwrap();
    let (plain, enc) = (tmp.path().join("plain"), tmp.path().join("enc"));
    populate(&plain, false, 1500, &[], 1);
    let (hint, p) = one_hint(&enc, 1500);
    let (want, _) = listing(&plain, false, None).unwrap();
    let n = p.len();
    for page in [0, n / 2 - 1, n / 2, n / 2 + 3, n - 1] {
        for split in [Some(2), SERIAL] {
            let dir = tmp.path().join(format!("case-{page}-{split:?}"));
            copy_dir(&enc, &dir);
            flip(&dir, &hint, p[page]);
            let (got, _) = listing(&dir, true, split).unwrap();
            assert!(got == want, "page {page} of {n} damaged, split {split:?}: a wrong listing");
            // The scan rewrote the hint: every page opens again, and the next build agrees.
            let (again, _) = listing(&dir, true, split).unwrap();
            assert!(again == want, "page {page} of {n}, after the rewrite");
            assert_eq!(pages(&dir)[0].1.len(), n, "the rewritten hint has its pages again");
            std::fs::remove_dir_all(&dir).unwrap();
        }
    }
}

/// A page a point read opened before the build is used as it is, in either half.
#[test]
fn pages_opened_by_point_reads_join_the_split_build() {
    let tmp = tempfile::tempdir().unwrap();
    let (plain, enc) = (tmp.path().join("plain"), tmp.path().join("enc"));
    populate(&plain, false, 1500, &[], 1);
    one_hint(&enc, 1500);
    let (want, _) = listing(&plain, false, None).unwrap();
    set_background_build(false);
    set_split_pages(Some(2));
    let s = Store::open(&enc, opts(true)).unwrap();
    let snap = s.snapshot().unwrap();
    for i in [0, 700, 1499] {
        assert!(snap.get(&key(i)).unwrap().is_some());
    }
    let listed: Vec<_> = snap.range(b"", None).map(|(k, m)| (k.to_vec(), m.to_vec())).collect();
    set_split_pages(None);
    let want: Vec<_> = want.into_iter().map(|(k, m, _)| (k, m)).collect();
    assert!(listed == want);
}

fn workload() -> impl Strategy<Value = (u32, Vec<Op>, usize, Option<(usize, usize)>)> {
    let op = (0u32..1600, prop::option::weighted(0.8, (0u8..60, any::<u8>())));
    (
        0u32..1400,
        prop::collection::vec(op, 0..900),
        1usize..400,
        // A page to damage: (which hint, which page), taken modulo what the store has.
        prop::option::of((any::<usize>(), any::<usize>())),
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Any store, any one page damaged or none: the split build (at every size from two pages)
    /// lists what the serial build and the plain store list.
    #[test]
    fn split_and_serial_builds_agree_with_the_plain_store((first, ops, per, damage) in workload()) {
        let tmp = tempfile::tempdir().unwrap();
        let (plain, enc) = (tmp.path().join("plain"), tmp.path().join("enc"));
        populate(&plain, false, first, &ops, per);
        populate(&enc, true, first, &ops, per);
        let (want, _) = listing(&plain, false, None).unwrap();
        if let Some((h, p)) = damage {
            let hints: Vec<_> = pages(&enc).into_iter().filter(|(_, p)| !p.is_empty()).collect();
            if !hints.is_empty() {
                let (file, ps) = &hints[h % hints.len()];
                flip(&enc, file, ps[p % ps.len()]);
            }
        }
        let (split_dir, serial_dir) = (tmp.path().join("split"), tmp.path().join("serial"));
        copy_dir(&enc, &split_dir);
        copy_dir(&enc, &serial_dir);
        let (split, _) = listing(&split_dir, true, Some(2)).unwrap();
        let (serial, _) = listing(&serial_dir, true, SERIAL).unwrap();
        prop_assert!(split == serial, "split and serial builds differ");
        prop_assert!(serial == want, "the encrypted store lists other than the plain one");
    }
}
