//! The version gate of encrypted stores: their MANIFEST and every segment header carry
//! `ENCRYPTED_FORMAT_VERSION` (4), which a build from before encryption checks first and refuses
//! as `Unsupported` (FORMAT.md, "Compatibility"); a plain store's files stay version 3, as the
//! golden stores pin. This build opens both, and a store moves between the two by `reencrypt`.

use rabosh::{Batch, ENCRYPTED_FORMAT_VERSION, Encryption, Error, FORMAT_VERSION, Options, Store, reencrypt};
use std::path::Path;

fn key(b: u8) -> Encryption {
    Encryption::new([b; 32])
}

fn opts(k: Option<u8>) -> Options {
    Options { encryption: k.map(key), segment_bytes: 4096, ..Options::default() }
}

fn fill(s: &Store, round: u32) {
    for i in 0..60 {
        let mut b = Batch::new();
        b.put(format!("k{}", i % 9), format!("value {round} {i} ").repeat(8), "m");
        s.write(b).unwrap();
    }
}

/// A store at `dir` written by [`fill`] and closed cleanly.
fn filled(dir: &Path, k: Option<u8>) {
    let s = Store::open(dir, opts(k)).unwrap();
    fill(&s, 0);
    s.close().unwrap();
}

/// The segment files in `dir`.
fn segments(dir: &Path) -> Vec<std::path::PathBuf> {
    let paths = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path());
    paths.filter(|p| p.extension().is_some_and(|x| x == "seg")).collect()
}

fn version_at(bytes: &[u8]) -> u32 {
    u32::from_le_bytes(bytes[8..12].try_into().unwrap())
}

/// The MANIFEST's version, and each segment's (version, byte 13); at least one segment.
fn versions(dir: &Path) -> (u32, Vec<(u32, u8)>) {
    let manifest = version_at(&std::fs::read(dir.join("MANIFEST")).unwrap());
    let segs: Vec<_> =
        segments(dir).iter().map(|p| std::fs::read(p).unwrap()).map(|b| (version_at(&b), b[13])).collect();
    assert!(!segs.is_empty());
    (manifest, segs)
}

fn assert_mode(dir: &Path, encrypted: bool) {
    let (want, flag) = if encrypted { (ENCRYPTED_FORMAT_VERSION, 1) } else { (FORMAT_VERSION, 0) };
    let (manifest, segs) = versions(dir);
    assert_eq!(manifest, want, "MANIFEST version of {}", dir.display());
    for (v, f) in segs {
        assert_eq!((v, f), (want, flag), "a segment header of {}", dir.display());
    }
}

#[test]
fn an_encrypted_store_is_version_4_everywhere_older_builds_look_and_a_plain_one_stays_3() {
    assert_eq!((FORMAT_VERSION, ENCRYPTED_FORMAT_VERSION), (3, 4));
    let tmp = tempfile::tempdir().unwrap();
    for k in [Some(1), None] {
        let dir = tmp.path().join(if k.is_some() { "enc" } else { "plain" });
        // Fresh (only the active segment), after rollovers, compaction, reopen and a checkpoint.
        let s = Store::open(&dir, opts(k)).unwrap();
        assert_mode(&dir, k.is_some());
        fill(&s, 0);
        assert_mode(&dir, k.is_some());
        s.compact().unwrap();
        fill(&s, 1);
        let cp = tmp.path().join(format!("cp-{}", k.is_some()));
        s.checkpoint(&cp).unwrap();
        if k.is_some() {
            s.rotate_key(key(2)).unwrap();
        }
        s.close().unwrap();
        drop(s);
        assert_mode(&dir, k.is_some());
        drop(Store::open(&cp, opts(k)).unwrap());
        assert_mode(&cp, k.is_some());
        let s = Store::open(&dir, opts(k.map(|_| 2))).unwrap();
        assert_eq!(s.snapshot().unwrap().len(), 9);
        s.close().unwrap();
    }
}

#[test]
fn reencrypt_moves_the_version_with_the_mode() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("s");
    filled(&dir, None);
    reencrypt(&dir, None, Some(key(5))).unwrap();
    drop(Store::open(&dir, opts(Some(5))).unwrap());
    assert_mode(&dir, true);
    reencrypt(&dir, Some(key(5)), None).unwrap();
    let s = Store::open(&dir, opts(None)).unwrap();
    assert_eq!(s.snapshot().unwrap().len(), 9);
    s.close().unwrap();
    drop(s);
    assert_mode(&dir, false);
}

/// A version-4 MANIFEST without its KEY file: the key file is missing, not "not encrypted" —
/// seen from the MANIFEST alone (here every segment is plain-flagged, so only it can tell).
#[test]
fn a_version_4_manifest_without_a_key_file_is_corruption_naming_it() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("s");
    drop(Store::open(&dir, opts(Some(1))).unwrap());
    std::fs::remove_file(dir.join("KEY")).unwrap();
    for p in segments(&dir) {
        std::fs::remove_file(p).unwrap();
    }
    for k in [None, Some(1)] {
        match Store::open(&dir, Options { create_if_missing: false, ..opts(k) }) {
            Err(Error::Corruption { file, .. }) => assert!(file.ends_with("KEY"), "{file:?}"),
            other => panic!("want Corruption naming KEY, got {:?}", other.map(|_| ())),
        }
    }
}

/// A version-4 segment header is always flagged encrypted: one that is not is damage.
#[test]
fn a_version_4_segment_header_without_the_flag_is_corruption() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("s");
    filled(&dir, None);
    let seg = segments(&dir).swap_remove(0);
    let mut b = std::fs::read(&seg).unwrap();
    b[8..12].copy_from_slice(&ENCRYPTED_FORMAT_VERSION.to_le_bytes());
    let c = crc32c::crc32c(&b[..32]);
    b[32..36].copy_from_slice(&c.to_le_bytes());
    std::fs::write(&seg, &b).unwrap();
    match Store::open(&dir, opts(None)) {
        Err(Error::Corruption { reason, .. }) => assert!(reason.contains("not flagged"), "{reason}"),
        other => panic!("want Corruption, got {:?}", other.map(|_| ())),
    }
}
