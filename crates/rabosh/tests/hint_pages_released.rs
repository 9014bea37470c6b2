//! Issue 36: open reads every byte of a mapped hint to check it, which left the whole of every
//! hint counted in the process's resident memory (270 MB of a million-key store's hints) where
//! reads then touch a few pages; an encrypted store's paged hints were read whole into the heap.
//! Open now lets the checked pages go and maps paged hints too; reads map back what they touch.
//! Measured as the process's resident growth across one open (Linux), in a test binary of its
//! own with one test, so nothing else moves it meanwhile.

#[cfg(target_os = "linux")]
#[test]
fn open_leaves_the_checked_hints_out_of_resident_memory() {
    // The child this test starts to write a store (below) does only that.
    if let Ok(seed) = std::env::var("RABOSH_TEST_SEED") {
        write_store(std::path::Path::new(&seed), std::env::var("RABOSH_TEST_ENCRYPTED").is_ok());
        return;
    }
    check(false);
    check(true);
}

#[cfg(target_os = "linux")]
fn opts(encrypted: bool) -> rabosh::Options {
    rabosh::Options {
        segment_bytes: 8 << 20,
        encryption: encrypted.then(|| rabosh::Encryption::new([9; 32])),
        ..rabosh::Options::default()
    }
}

/// 40,000 keys with 300 bytes of metadata each, then a clean close: every segment gets its hint.
#[cfg(target_os = "linux")]
fn write_store(dir: &std::path::Path, encrypted: bool) {
    let store = rabosh::Store::open(dir, opts(encrypted)).unwrap();
    for chunk in 0..40u32 {
        let mut b = rabosh::Batch::new();
        for i in chunk * 1000..(chunk + 1) * 1000 {
            b.put(format!("key/{i:08}").into_bytes(), b"v".to_vec(), vec![i as u8; 300]);
        }
        store.write(b).unwrap();
    }
    store.close().unwrap();
}

/// Resident KiB: file-backed plus anonymous.
#[cfg(target_os = "linux")]
fn rss_kb() -> u64 {
    let st = std::fs::read_to_string("/proc/self/status").unwrap();
    let field = |name: &str| -> u64 {
        let line = st.lines().find(|l| l.starts_with(name)).unwrap();
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    };
    field("RssFile:") + field("RssAnon:")
}

#[cfg(target_os = "linux")]
fn check(encrypted: bool) {
    // Written by another process: the heap this one has not grown by writing it can only grow
    // by what open keeps.
    let dir = tempfile::tempdir().unwrap();
    let mut child = std::process::Command::new(std::env::current_exe().unwrap());
    child.args(["--exact", "open_leaves_the_checked_hints_out_of_resident_memory"]);
    child.env("RABOSH_TEST_SEED", dir.path());
    if encrypted {
        child.env("RABOSH_TEST_ENCRYPTED", "1");
    }
    assert!(child.status().unwrap().success());
    let hint_kb: u64 = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "hint"))
        .map(|p| std::fs::metadata(p).unwrap().len() / 1024)
        .sum();
    assert!(hint_kb > 10_000, "the hints are large enough to see: {hint_kb} KiB");
    let before = rss_kb();
    let store = rabosh::Store::open(dir.path(), opts(encrypted)).unwrap();
    let grown = rss_kb().saturating_sub(before);
    assert!(grown < hint_kb / 4, "encrypted {encrypted}: open left {grown} KiB of {hint_kb} KiB of hints resident");
    // Reads still answer from the released pages.
    let snap = store.snapshot().unwrap();
    assert_eq!(snap.meta(b"key/00012345").unwrap(), Some(vec![12345u32 as u8; 300]));
    assert_eq!(snap.range(b"key/0003", Some(b"key/0004")).count(), 10_000);
}
