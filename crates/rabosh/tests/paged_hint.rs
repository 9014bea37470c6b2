//! An encrypted store's hints are sealed in pages (FORMAT.md, "Sealed hint"): open opens only
//! each hint's directory, a point read only the page its key falls in. A page is checked only
//! when opened, so damage found then must still never answer wrong: the run answers from its
//! segment's scan. Every case here reads every key (point reads first, on the lazy path, then
//! the listing) and compares with a plain store given the same writes.

use rabosh::{Batch, Encryption, Options, StdFs, Store};
use rabosh_testkit::{hint_pages_opened, rewrite_hints_sealed_whole, rewrite_hints_unpacked, sealed_blobs};
use std::path::{Path, PathBuf};

mod common;
use common::hint_files::{Answers, copy_dir, hints};

const KEY: [u8; 32] = [3; 32];

fn opts(encrypted: bool) -> Options {
    Options { encryption: encrypted.then(|| Encryption::new(KEY)), segment_bytes: 8192, ..Options::default() }
}

fn key(i: u32) -> Vec<u8> {
    format!("n{i:03}").into_bytes()
}

/// Keys 0..KEYS, plus some never written (they must read as absent).
const KEYS: u32 = 200;

/// One big commit (a sealed segment whose hint has several pages), then overwrites and deletes
/// in the active segment (its hint written at close, several pages too).
fn populate(dir: &Path, encrypted: bool, keys: u32) {
    let s = Store::open(dir, opts(encrypted)).unwrap();
    let mut b = Batch::new();
    for i in 0..keys {
        b.put(key(i), vec![i as u8; 24], vec![(i % 251) as u8; 8]);
    }
    s.write(b).unwrap();
    let mut b = Batch::new();
    for i in (0..keys).filter(|i| i % 3 != 1) {
        match i % 3 {
            0 => b.delete(key(i)),
            _ => b.put(key(i), vec![!(i as u8); 24], vec![1; 8]),
        }
    }
    s.write(b).unwrap();
    s.close().unwrap();
}

/// Every key's value and metadata by point read (before anything builds the key directory),
/// then the listing.
fn answers(dir: &Path, encrypted: bool, keys: u32) -> rabosh::Result<Answers> {
    common::hint_files::answers(dir, opts(encrypted), (0..keys + 20).map(key))
}

/// The sealed blobs (offset, length) of a paged hint: its directory, then its pages.
fn blobs(dir: &Path, name: &str) -> Vec<(usize, usize)> {
    sealed_blobs(&StdFs, dir, &Encryption::new(KEY))
        .unwrap()
        .into_iter()
        .filter(|b| b.file == name)
        .map(|b| (b.offset as usize, b.bytes.len()))
        .collect()
}

struct Fixture {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    enc: PathBuf,
    want: Answers,
    keys: u32,
}

fn fixture(keys: u32) -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().to_path_buf();
    let (plain, enc) = (root.join("plain"), root.join("enc"));
    populate(&plain, false, keys);
    populate(&enc, true, keys);
    let want = answers(&plain, false, keys).unwrap();
    Fixture { _tmp: tmp, root, enc, want, keys }
}

impl Fixture {
    /// The store with hint `name` replaced by `bytes`, answering exactly as the plain one.
    fn check(&self, n: &mut u32, name: &str, bytes: &[u8], what: &str) {
        let dir = self.root.join(format!("case{n}"));
        *n += 1;
        copy_dir(&self.enc, &dir);
        std::fs::write(dir.join(name), bytes).unwrap();
        let got = answers(&dir, true, self.keys).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert!(got == self.want, "{what}: a wrong answer");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[test]
fn hints_are_paged_and_a_point_read_opens_one_page() {
    let f = fixture(KEYS);
    let names = hints(&f.enc);
    assert_eq!(names.len(), 2, "the sealed segment's hint and the active one's: {names:?}");
    for name in &names {
        let bytes = std::fs::read(f.enc.join(name)).unwrap();
        assert_eq!(&bytes[..8], b"RABOSHHP", "{name}");
        assert!(blobs(&f.enc, name).len() >= 3, "{name}: a directory and at least two pages");
    }
    assert!(answers(&f.enc, true, f.keys).unwrap() == f.want);

    let before = hint_pages_opened();
    let s = Store::open(&f.enc, opts(true)).unwrap();
    let snap = s.snapshot().unwrap();
    assert_eq!(hint_pages_opened(), before, "open opens no page");
    // Key 2 was overwritten in the active segment: its page there answers, nothing older.
    assert_eq!(snap.get(&key(2)).unwrap(), Some(vec![!2u8; 24]));
    assert_eq!(hint_pages_opened(), before + 1, "one page for one point read");
    assert!(!snap.is_built());
}

/// The bytes the sweep flips in a hint whose sealed blobs are `b` (its directory, then its
/// pages): every byte up to the first page (the header and the directory) and after the last,
/// every byte of page `whole` (when this hint holds it), and in every other page its first 24
/// bytes (nonce and the first record), its last 16 (the tag) and every 29th byte between.
/// Every byte of every page took 2.5-5 minutes in a debug build (each case opens a store and
/// reads every key: decryption dominates); the pages are alike, so one page in full and a
/// stride through the others keeps what the sweep can catch (a page that does not open, found
/// at any of its bytes).
fn flips(len: usize, b: &[(usize, usize)], whole: Option<usize>) -> Vec<usize> {
    let first_page = b.get(1).map_or(len, |p| p.0);
    let end = b.last().map_or(len, |p| p.0 + p.1);
    let mut at: Vec<usize> = (0..first_page).chain(end..len).collect();
    for (i, &(off, n)) in b.iter().enumerate().skip(1) {
        let all = whole == Some(i);
        at.extend((off..off + n).filter(|j| all || j - off < 24 || off + n - j <= 16 || (j - off) % 29 == 0));
    }
    at.sort_unstable();
    at.dedup();
    at
}

/// The lengths the sweep cuts a hint to: each blob's start and end ±2, and every 97th length.
fn cuts(len: usize, b: &[(usize, usize)]) -> Vec<usize> {
    let edges = b.iter().flat_map(|&(off, n)| [off, off + n]).chain([0, len]);
    let mut at: Vec<usize> = edges.flat_map(|e| e.saturating_sub(2)..=e + 2).chain((0..len).step_by(97)).collect();
    at.retain(|&l| l < len);
    at.sort_unstable();
    at.dedup();
    at
}

#[test]
fn flipped_bytes_and_cuts_of_a_paged_hint_answer_right() {
    // Fewer keys (each case opens a store): still two pages in each hint.
    let f = fixture(100);
    let names = hints(&f.enc);
    let layouts: Vec<_> = names.iter().map(|name| blobs(&f.enc, name)).collect();
    // The page flipped in full: the smallest of all (the others are strided).
    let (whole_in, whole) = (0..names.len())
        .flat_map(|h| (1..layouts[h].len()).map(move |p| (h, p)))
        .min_by_key(|&(h, p)| layouts[h][p].1)
        .expect("pages");
    let mut n = 0;
    for (h, name) in names.iter().enumerate() {
        let bytes = std::fs::read(f.enc.join(name)).unwrap();
        let b = &layouts[h];
        assert!(b.len() >= 3, "{name}: a directory and two pages");
        for i in flips(bytes.len(), b, (h == whole_in).then_some(whole)) {
            let mut c = bytes.clone();
            c[i] ^= 0x04;
            f.check(&mut n, name, &c, &format!("{name}: byte {i} flipped"));
        }
        for len in cuts(bytes.len(), b) {
            f.check(&mut n, name, &bytes[..len], &format!("{name}: cut to {len} bytes"));
        }
    }
    assert!(n > 1000, "{n} cases");
}

#[test]
fn pages_moved_swapped_dropped_or_taken_from_another_hint_never_answer() {
    let f = fixture(KEYS);
    let mut n = 0;
    let names = hints(&f.enc);
    for name in &names {
        let bytes = std::fs::read(f.enc.join(name)).unwrap();
        let b = blobs(&f.enc, name);
        let pages = &b[1..];
        assert!(pages.len() >= 2, "{name}: two pages");
        // Two pages swapped (packed pages differ in length by a few bytes: the later ones
        // then shift by the difference).
        let (x, y) = (pages[0], pages[1]);
        let mut s = bytes[..x.0].to_vec();
        s.extend_from_slice(&bytes[y.0..y.0 + y.1]);
        s.extend_from_slice(&bytes[x.0..x.0 + x.1]);
        s.extend_from_slice(&bytes[y.0 + y.1..]);
        f.check(&mut n, name, &s, &format!("{name}: two pages swapped"));
        // One page copied over the other (a page duplicated, one lost).
        let mut d = bytes[..y.0].to_vec();
        d.extend_from_slice(&bytes[x.0..x.0 + x.1]);
        d.extend_from_slice(&bytes[y.0 + y.1..]);
        f.check(&mut n, name, &d, &format!("{name}: a page duplicated"));
        // A page dropped: the later ones move down.
        for p in pages {
            let mut cut = bytes[..p.0].to_vec();
            cut.extend_from_slice(&bytes[p.0 + p.1..]);
            f.check(&mut n, name, &cut, &format!("{name}: page at {} dropped", p.0));
        }
        // The pages moved to the end in reverse order.
        let mut r = bytes[..pages[0].0].to_vec();
        for p in pages.iter().rev() {
            r.extend_from_slice(&bytes[p.0..p.0 + p.1]);
        }
        f.check(&mut n, name, &r, &format!("{name}: pages reversed"));
    }
}

/// A round's value. Its length takes one varint byte in either round, so the pages of both
/// rounds' hints lie alike, but the values of round 2 lie elsewhere: a page of the other
/// round's hint points at the wrong bytes, not at values at the same offsets.
fn round_value(round: u8) -> Vec<u8> {
    vec![round; 16 * round as usize]
}

/// A round's writes: a pad value first (its key sorts last), so every other value's offset
/// takes three varint bytes in either round and pages of both rounds have one length.
fn round_batch(round: u8) -> Batch {
    let mut b = Batch::new();
    b.put(b"~pad".to_vec(), vec![0; 1 << 14], vec![0; 8]);
    for i in 0..KEYS {
        b.put(key(i), round_value(round), vec![round; 8]);
    }
    b
}

/// Two rounds of the same keys with values of one size, so every page of one hint lies where
/// the other's does. `segment_bytes`: large, one active segment (its hint rewritten at each
/// close); small, each round its own sealed segment.
fn two_rounds(dir: &Path, encrypted: bool, segment_bytes: u64, close_between: bool) {
    let o = || Options { segment_bytes, ..opts(encrypted) };
    let mut s = Store::open(dir, o()).unwrap();
    for round in [1u8, 2] {
        s.write(round_batch(round)).unwrap();
        if close_between && round == 1 {
            s.close().unwrap();
            s = Store::open(dir, o()).unwrap();
        }
    }
    s.close().unwrap();
}

fn point_reads(dir: &Path, encrypted: bool, segment_bytes: u64) -> Vec<Option<Vec<u8>>> {
    let s = Store::open(dir, Options { segment_bytes, ..opts(encrypted) }).unwrap();
    let snap = s.snapshot().unwrap();
    (0..KEYS).map(|i| snap.get(&key(i)).unwrap()).collect()
}

/// Every page of hint `into` replaced, one at a time, by the page of the same index in `from`
/// (whose blobs are `from_blobs`; the same layout): the store answers as the plain one.
type Blobs = Vec<(usize, usize)>;
fn pages_from(
    tmp: &Path,
    enc: &Path,
    (from, from_blobs, into): (&[u8], Blobs, &str),
    want: &[Option<Vec<u8>>],
    segment_bytes: u64,
) {
    let new = std::fs::read(enc.join(into)).unwrap();
    let pages = blobs(enc, into);
    assert!(pages.len() >= 4, "{into}: a directory and three pages");
    let alike: Vec<_> = pages[1..].iter().zip(&from_blobs[1..]).filter(|(p, q)| p.1 == q.1).collect();
    assert!(alike.len() >= 3, "{into}: three pages of one length in both hints");
    for (p, q) in alike {
        let dir = tmp.join(format!("case{}", p.0));
        copy_dir(enc, &dir);
        let mut b = new.clone();
        b[p.0..p.0 + p.1].copy_from_slice(&from[q.0..q.0 + q.1]);
        std::fs::write(dir.join(into), &b).unwrap();
        assert!(point_reads(&dir, true, segment_bytes) == want, "{into}: other page at {}: a wrong answer", p.0);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

/// The same segment's hint written twice (at two clean closes): a page of the older hint in the
/// newer one's place names the same segment, place and page count; only the hint's own id
/// tells it apart. It must not answer (its offsets are stale).
#[test]
fn a_page_of_an_older_hint_of_the_same_segment_does_not_answer() {
    let tmp = tempfile::tempdir().unwrap();
    let (plain, enc) = (tmp.path().join("plain"), tmp.path().join("enc"));
    let big = 1 << 20;
    two_rounds(&plain, false, big, true);
    let want = point_reads(&plain, false, big);
    // The first round's hint, kept before the second close rewrites it.
    let s = Store::open(&enc, Options { segment_bytes: big, ..opts(true) }).unwrap();
    s.write(round_batch(1)).unwrap();
    s.close().unwrap();
    let name = hints(&enc).pop().unwrap();
    let old = std::fs::read(enc.join(&name)).unwrap();
    let old_pages = blobs(&enc, &name);
    let s = Store::open(&enc, Options { segment_bytes: big, ..opts(true) }).unwrap();
    s.write(round_batch(2)).unwrap();
    s.close().unwrap();
    assert_eq!(hints(&enc), vec![name.clone()], "one active segment, its hint rewritten");
    // The last page holds the pad, whose own offset differs: every other page lies alike.
    let now = blobs(&enc, &name);
    assert_eq!(old_pages[..old_pages.len() - 1], now[..now.len() - 1], "the same layout: pages at the same place");
    pages_from(tmp.path(), &enc, (&old, old_pages, &name), &want, big);
}

/// A page of another segment's hint, at the same place in a hint of the same layout.
#[test]
fn a_page_of_another_segments_hint_does_not_answer() {
    let tmp = tempfile::tempdir().unwrap();
    let (plain, enc) = (tmp.path().join("plain"), tmp.path().join("enc"));
    two_rounds(&plain, false, 8192, false);
    two_rounds(&enc, true, 8192, false);
    let want = point_reads(&plain, false, 8192);
    let names: Vec<_> = hints(&enc).into_iter().filter(|n| blobs(&enc, n).len() >= 4).collect();
    assert!(names.len() >= 2, "each round's sealed segment has a hint: {names:?}");
    let (a, b) = (&names[0], &names[1]);
    let from = std::fs::read(enc.join(a)).unwrap();
    pages_from(tmp.path(), &enc, (&from, blobs(&enc, a), b), &want, 8192);
}

/// Hints written by the build before pages (`RABOSHHX`, the plain hint sealed whole) still open
/// and answer, lazily.
#[test]
fn a_store_with_whole_sealed_hints_opens_and_reads_right() {
    let f = fixture(KEYS);
    let n = rewrite_hints_sealed_whole(&f.enc, &Encryption::new(KEY)).unwrap();
    assert_eq!(n, 2);
    for name in hints(&f.enc) {
        assert_eq!(&std::fs::read(f.enc.join(&name)).unwrap()[..8], b"RABOSHHX");
    }
    let s = Store::open(&f.enc, opts(true)).unwrap();
    assert!(!s.snapshot().unwrap().is_built(), "opened from the old hints, not a scan");
    drop(s);
    assert!(answers(&f.enc, true, f.keys).unwrap() == f.want);
}

/// Paged hints written before pages were packed (records in the whole layout) still open
/// lazily, a point read opening one page, and answer right.
#[test]
fn a_store_with_unpacked_pages_opens_and_reads_right() {
    let f = fixture(KEYS);
    assert_eq!(rewrite_hints_unpacked(&f.enc, &Encryption::new(KEY)).unwrap(), 2);
    let files: Vec<_> = hints(&f.enc).iter().map(|n| std::fs::read(f.enc.join(n)).unwrap()).collect();
    let before = hint_pages_opened();
    let s = Store::open(&f.enc, opts(true)).unwrap();
    let snap = s.snapshot().unwrap();
    assert_eq!(snap.get(&key(2)).unwrap(), Some(vec![!2u8; 24]));
    assert_eq!(hint_pages_opened(), before + 1, "one page for one point read");
    assert!(!snap.is_built(), "opened from the unpacked hints, not a scan");
    drop(snap);
    drop(s);
    assert!(answers(&f.enc, true, f.keys).unwrap() == f.want);
    // Read as they are: no page was found damaged (its hint would have been rewritten).
    let now: Vec<_> = hints(&f.enc).iter().map(|n| std::fs::read(f.enc.join(n)).unwrap()).collect();
    assert!(now == files, "the unpacked hints were rewritten");
}

/// A page found damaged is answered from the segment's scan, and the hint is rewritten from it
/// (best effort, as open does for a hint that does not open): the next open has whole hints.
#[test]
fn a_hint_with_a_damaged_page_is_rewritten_from_the_scan() {
    let f = fixture(KEYS);
    for name in hints(&f.enc) {
        let dir = f.root.join(format!("rewrite-{name}"));
        copy_dir(&f.enc, &dir);
        let mut bytes = std::fs::read(dir.join(&name)).unwrap();
        let last = *blobs(&dir, &name).last().unwrap();
        bytes[last.0 + last.1 / 2] ^= 1;
        std::fs::write(dir.join(&name), &bytes).unwrap();
        assert!(answers(&dir, true, f.keys).unwrap() == f.want, "{name}");
        // Every page of every hint opens again (the rewrite helper opens them all).
        assert_eq!(rewrite_hints_sealed_whole(&dir, &Encryption::new(KEY)).unwrap(), 2, "{name}");
    }
}
