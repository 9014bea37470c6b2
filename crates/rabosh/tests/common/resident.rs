//! What the resident-memory tests share: a store of large-metadata keys written by a child
//! process (so the heap of the process that measures has not grown by writing it), and the
//! process's resident KiB. Linux only: they read /proc/self.

use std::path::Path;

const SEED_ENV: &str = "RABOSH_TEST_SEED";
const ENCRYPTED_ENV: &str = "RABOSH_TEST_ENCRYPTED";

/// Small segments, so a store of tens of thousands of keys has several hints.
pub fn opts(encrypted: bool) -> rabosh::Options {
    rabosh::Options {
        segment_bytes: 8 << 20,
        encryption: encrypted.then(|| rabosh::Encryption::new([9; 32])),
        ..rabosh::Options::default()
    }
}

/// In the child `seeded_store` starts: writes the store and says so (the test then returns).
pub fn seed_if_child(thousands: u32) -> bool {
    let Ok(seed) = std::env::var(SEED_ENV) else { return false };
    write_store(Path::new(&seed), std::env::var(ENCRYPTED_ENV).is_ok(), thousands);
    true
}

/// `thousands` × 1,000 keys `key/{i:08}` with 300 bytes of metadata each, then a clean close:
/// every segment gets its hint.
fn write_store(dir: &Path, encrypted: bool, thousands: u32) {
    let store = rabosh::Store::open(dir, opts(encrypted)).unwrap();
    for chunk in 0..thousands {
        let mut b = rabosh::Batch::new();
        for i in chunk * 1000..(chunk + 1) * 1000 {
            b.put(format!("key/{i:08}").into_bytes(), b"v".to_vec(), vec![i as u8; 300]);
        }
        store.write(b).unwrap();
    }
    store.close().unwrap();
}

/// A store written by a child run of `test` (this binary, `--exact`), and its hints' KiB.
pub fn seeded_store(test: &str, encrypted: bool) -> (tempfile::TempDir, u64) {
    let dir = tempfile::tempdir().unwrap();
    let mut child = std::process::Command::new(std::env::current_exe().unwrap());
    child.args(["--exact", test]);
    child.env(SEED_ENV, dir.path());
    if encrypted {
        child.env(ENCRYPTED_ENV, "1");
    }
    assert!(child.status().unwrap().success());
    let hint_kb = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "hint"))
        .map(|p| std::fs::metadata(p).unwrap().len() / 1024)
        .sum();
    (dir, hint_kb)
}

/// Resident KiB: file-backed plus anonymous.
pub fn rss_kb() -> u64 {
    let st = std::fs::read_to_string("/proc/self/status").unwrap();
    let field = |name: &str| -> u64 {
        let line = st.lines().find(|l| l.starts_with(name)).unwrap();
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    };
    field("RssFile:") + field("RssAnon:")
}
