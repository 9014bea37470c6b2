//! A plain store's hints are paged too (FORMAT.md, "Hint file"): open checks each hint's small
//! directory only, and a page is checked against its own CRC-32C when a read first opens it.
//! Damage found then never answers: the segment's scan does, and the hint is rewritten. A
//! store whose hints are in the older whole layout (`RABOSHHT`) opens as before and its
//! writer rewrites them paged.

use rabosh::{Batch, Options, Store};
use rabosh_testkit::{hint_blobs, hint_pages_opened, hints_migrated, rewrite_hints_whole};
use std::path::{Path, PathBuf};

mod common;
use common::hint_files::{Answers, copy_dir, hints};

fn opts() -> Options {
    Options { segment_bytes: 8192, ..Options::default() }
}

fn key(i: u32) -> Vec<u8> {
    format!("m:default:/memories/d{:02}/f{i:03}.md", i % 7).into_bytes()
}

const KEYS: u32 = 200;

/// One big commit (a sealed segment whose hint has several pages), then overwrites and deletes
/// in the active segment (its hint written at close).
fn populate(dir: &Path) {
    let s = Store::open(dir, opts()).unwrap();
    let mut b = Batch::new();
    for i in 0..KEYS {
        b.put(key(i), vec![i as u8; 24], vec![(i % 251) as u8; 8]);
    }
    s.write(b).unwrap();
    let mut b = Batch::new();
    for i in (0..KEYS).filter(|i| i % 3 != 1) {
        match i % 3 {
            0 => b.delete(key(i)),
            _ => b.put(key(i), vec![!(i as u8); 24], vec![1; 8]),
        }
    }
    s.write(b).unwrap();
    s.close().unwrap();
}

/// Every key's value and metadata by point read (the lazy path), then the listing.
fn answers(dir: &Path) -> rabosh::Result<Answers> {
    common::hint_files::answers(dir, opts(), (0..KEYS + 20).map(key))
}

fn magic(dir: &Path, name: &str) -> Vec<u8> {
    std::fs::read(dir.join(name)).unwrap()[..8].to_vec()
}

struct Fixture {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    store: PathBuf,
    want: Answers,
}

fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().to_path_buf();
    let store = root.join("plain");
    populate(&store);
    let want = answers(&store).unwrap();
    Fixture { _tmp: tmp, root, store, want }
}

impl Fixture {
    /// A copy of the store with hint `name` replaced by `bytes`: it answers as the pristine one.
    fn check(&self, n: &mut u32, name: &str, bytes: &[u8], what: &str) -> PathBuf {
        let dir = self.root.join(format!("case{n}"));
        *n += 1;
        copy_dir(&self.store, &dir);
        std::fs::write(dir.join(name), bytes).unwrap();
        let got = answers(&dir).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert!(got == self.want, "{what}: a wrong answer");
        dir
    }
}

#[test]
fn open_checks_only_the_directory_and_a_point_read_one_page() {
    let f = fixture();
    let names = hints(&f.store);
    assert_eq!(names.len(), 2, "the sealed segment's hint and the active one's: {names:?}");
    for name in &names {
        assert_eq!(magic(&f.store, name), b"RABOSHHC", "{name}");
        let b = hint_blobs(&f.store, name, None).expect("its directory checks");
        assert!(b.len() >= 3, "{name}: a directory and at least two pages");
    }
    let before = hint_pages_opened();
    let s = Store::open(&f.store, opts()).unwrap();
    let snap = s.snapshot().unwrap();
    assert_eq!(hint_pages_opened(), before, "open opens no page");
    // Key 2 was overwritten in the active segment: its page there answers, nothing older.
    assert_eq!(snap.get(&key(2)).unwrap(), Some(vec![!2u8; 24]));
    assert_eq!(hint_pages_opened(), before + 1, "one page for one point read");
    assert!(!snap.is_built());
}

/// A bit flipped in each page in turn (at its start, middle and checksum), and in the directory
/// and header: the store answers exactly as before, and a page found damaged has its hint
/// rewritten from the segment's scan.
#[test]
fn a_flipped_bit_in_a_page_is_found_and_answered_from_the_segment() {
    let f = fixture();
    let mut n = 0;
    for name in hints(&f.store) {
        let bytes = std::fs::read(f.store.join(&name)).unwrap();
        let b = hint_blobs(&f.store, &name, None).unwrap();
        let (dir_end, pages) = (b[0].0 + b[0].1, &b[1..]);
        for at in (0..dir_end).step_by(5) {
            let mut c = bytes.clone();
            c[at] ^= 0x10;
            let d = f.check(&mut n, &name, &c, &format!("{name}: directory byte {at}"));
            std::fs::remove_dir_all(d).unwrap();
        }
        for &(off, len) in pages {
            for at in [off, off + 1, off + len / 2, off + len - 5, off + len - 1] {
                let mut c = bytes.clone();
                c[at] ^= 0x01;
                let d = f.check(&mut n, &name, &c, &format!("{name}: page byte {at}"));
                // Rewritten from the scan: every page of it checks again.
                let again = hint_blobs(&d, &name, None).expect("rewritten");
                assert!(again.len() == b.len(), "{name}: page byte {at}: the hint rewritten whole");
                std::fs::remove_dir_all(d).unwrap();
            }
        }
    }
    assert!(n > 100, "{n} cases");
}

/// A hint cut short (a torn write that reached the file's name: the rename of an unsynced
/// active hint, a power loss) at each blob's edges and through the pages.
#[test]
fn a_hint_cut_short_answers_right() {
    let f = fixture();
    let mut n = 0;
    for name in hints(&f.store) {
        let bytes = std::fs::read(f.store.join(&name)).unwrap();
        let b = hint_blobs(&f.store, &name, None).unwrap();
        let edges = b.iter().flat_map(|&(off, len)| [off, off + len]).chain([0, 8, 12]);
        let mut cuts: Vec<usize> =
            edges.flat_map(|e| e.saturating_sub(1)..=e + 1).chain((0..bytes.len()).step_by(61)).collect();
        cuts.retain(|&l| l < bytes.len());
        cuts.sort_unstable();
        cuts.dedup();
        for len in cuts {
            let d = f.check(&mut n, &name, &bytes[..len], &format!("{name}: cut to {len} bytes"));
            std::fs::remove_dir_all(d).unwrap();
        }
    }
}

/// A store written before plain hints were paged (every hint `RABOSHHT`): it opens lazily from
/// those hints and answers right, and the open rewrites both (the sealed segment's and the
/// active one's) paged.
#[test]
fn a_store_with_whole_hints_opens_and_is_migrated() {
    let f = fixture();
    assert_eq!(rewrite_hints_whole(&f.store).unwrap(), 2);
    let names = hints(&f.store);
    for name in &names {
        assert_eq!(magic(&f.store, name), b"RABOSHHT", "{name}");
    }
    let before = hints_migrated();
    let s = Store::open(&f.store, opts()).unwrap();
    assert!(!s.snapshot().unwrap().is_built(), "opened from the old hints, not a scan");
    assert_eq!(hints_migrated(), before + 2, "the sealed and the active segment's hints rewritten");
    for name in &names {
        assert_eq!(magic(&f.store, name), b"RABOSHHC", "{name}");
    }
    let mut b = Batch::new();
    b.put(key(KEYS + 1), b"new".to_vec(), b"m".to_vec());
    s.write(b).unwrap();
    s.close().unwrap();
    drop(s);
    let before = hints_migrated();
    let (points, listed) = answers(&f.store).unwrap();
    assert_eq!(hints_migrated(), before, "nothing left to migrate");
    let (mut want_points, mut want_listed) = f.want.clone();
    want_points[(KEYS + 1) as usize] = Some((b"new".to_vec(), b"m".to_vec()));
    want_listed.push((key(KEYS + 1), b"m".to_vec()));
    want_listed.sort();
    assert!(points == want_points && listed == want_listed);
}
