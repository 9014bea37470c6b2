//! A listing straight after open builds the key directory from the sealed hint's pages, each
//! opened into one reused buffer and its records parsed once as they are checked, none kept
//! (`paged_run.rs`). The point-read path (`tests/paged_hint.rs`) opens and keeps pages first; this
//! is the other path: nothing opened before the build, or only some pages. A damaged page at
//! any place must be answered from the segment's scan, never a wrong or short listing. Each
//! case is compared with a plain store given the same writes.

use proptest::prelude::*;
use rabosh::{Batch, Encryption, Options, StdFs, Store};
use rabosh_testkit::{hint_pages_opened, sealed_blobs};
use std::path::Path;

const KEY: [u8; 32] = [11; 32];

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

/// Every key with its metadata and value, as a listing right after open finds them (merged from
/// the hints); and how many hint pages it opened.
fn listing(dir: &Path, encrypted: bool) -> rabosh::Result<(Listed, u64)> {
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

/// A plain and an encrypted store of the same 1,500 keys in `tmp`: the plain store's listing,
/// the encrypted store's directory, its hint's name and its pages.
fn twin_stores(tmp: &Path) -> (Listed, std::path::PathBuf, String, Vec<(usize, usize)>) {
    let (plain, enc) = (tmp.join("plain"), tmp.join("enc"));
    populate(&plain, false, 1500, &[], 1);
    let (hint, p) = one_hint(&enc, 1500);
    let (want, _) = listing(&plain, false).unwrap();
    (want, enc, hint, p)
}

#[test]
fn a_listing_first_opens_every_page_once_and_lists_what_the_plain_store_does() {
    let tmp = tempfile::tempdir().unwrap();
    let (want, enc, _, p) = twin_stores(tmp.path());
    assert!(p.len() >= 20, "{} pages", p.len());
    let (got, n) = listing(&enc, true).unwrap();
    assert_eq!(n, p.len() as u64, "each page opened once");
    assert!(got == want, "the encrypted store lists what the plain one does");
}

#[test]
fn a_damaged_page_anywhere_is_answered_from_the_scan() {
    let tmp = tempfile::tempdir().unwrap();
    let (want, enc, hint, p) = twin_stores(tmp.path());
    let n = p.len();
    for page in [0, 1, n / 2, n - 2, n - 1] {
        let dir = tmp.path().join(format!("case-{page}"));
        copy_dir(&enc, &dir);
        flip(&dir, &hint, p[page]);
        let (got, _) = listing(&dir, true).unwrap();
        assert!(got == want, "page {page} of {n} damaged: a wrong listing");
        // The scan rewrote the hint: every page opens again, and the next build agrees.
        let (again, opened) = listing(&dir, true).unwrap();
        assert!(again == want, "page {page} of {n}, after the rewrite");
        assert_eq!((pages(&dir)[0].1.len(), opened), (n, n as u64), "the rewritten hint's pages all open");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

/// Pages point reads opened before the build are used as they are, the others opened then.
#[test]
fn pages_opened_by_point_reads_join_the_build() {
    let tmp = tempfile::tempdir().unwrap();
    let (plain, enc) = (tmp.path().join("plain"), tmp.path().join("enc"));
    populate(&plain, false, 1500, &[], 1);
    one_hint(&enc, 1500);
    let (want, _) = listing(&plain, false).unwrap();
    let s = Store::open(&enc, opts(true)).unwrap();
    let snap = s.snapshot().unwrap();
    for i in [0, 700, 1499] {
        assert!(snap.get(&key(i)).unwrap().is_some());
    }
    let listed: Vec<_> = snap.range(b"", None).map(|(k, m)| (k.to_vec(), m.to_vec())).collect();
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

    /// Any store, any one page damaged or none: a listing first lists what the plain store
    /// lists.
    #[test]
    fn a_listing_first_agrees_with_the_plain_store((first, ops, per, damage) in workload()) {
        let tmp = tempfile::tempdir().unwrap();
        let (plain, enc) = (tmp.path().join("plain"), tmp.path().join("enc"));
        populate(&plain, false, first, &ops, per);
        populate(&enc, true, first, &ops, per);
        let (want, _) = listing(&plain, false).unwrap();
        if let Some((h, p)) = damage {
            let hints: Vec<_> = pages(&enc).into_iter().filter(|(_, p)| !p.is_empty()).collect();
            if !hints.is_empty() {
                let (file, ps) = &hints[h % hints.len()];
                flip(&enc, file, ps[p % ps.len()]);
            }
        }
        let (got, _) = listing(&enc, true).unwrap();
        prop_assert!(got == want, "the encrypted store lists other than the plain one");
    }
}
