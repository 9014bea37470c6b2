//! Issue 36: open reads every byte of a mapped hint to check it, which left the whole of every
//! hint counted in the process's resident memory (270 MB of a million-key store's hints) where
//! reads then touch a few pages. Open lets the checked pages go; reads map back what they touch.
//! Measured as the process's file-backed resident growth across one open (Linux), in a test
//! binary of its own so no other test's files move it meanwhile.

#[cfg(target_os = "linux")]
#[test]
fn open_leaves_the_checked_hints_out_of_resident_memory() {
    use rabosh::{Batch, Options, Store};

    fn rss_file_kb() -> u64 {
        let st = std::fs::read_to_string("/proc/self/status").unwrap();
        let line = st.lines().find(|l| l.starts_with("RssFile:")).unwrap();
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    }
    let dir = tempfile::tempdir().unwrap();
    let opts = || Options { segment_bytes: 8 << 20, ..Options::default() };
    let keys = 40_000u32;
    {
        let store = Store::open(dir.path(), opts()).unwrap();
        for chunk in 0..keys / 1000 {
            let mut b = Batch::new();
            for i in chunk * 1000..(chunk + 1) * 1000 {
                b.put(format!("key/{i:08}").into_bytes(), b"v".to_vec(), vec![i as u8; 300]);
            }
            store.write(b).unwrap();
        }
        store.close().unwrap();
    }
    let hint_kb: u64 = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "hint"))
        .map(|p| std::fs::metadata(p).unwrap().len() / 1024)
        .sum();
    assert!(hint_kb > 10_000, "the hints are large enough to see: {hint_kb} KiB");
    let before = rss_file_kb();
    let store = Store::open(dir.path(), opts()).unwrap();
    let grown = rss_file_kb().saturating_sub(before);
    assert!(rabosh::probe::hints_mapped() > 0, "the hints were mapped");
    assert!(grown < hint_kb / 4, "open left {grown} KiB of {hint_kb} KiB of hints resident");
    // Reads still answer from the released pages.
    let snap = store.snapshot().unwrap();
    assert_eq!(snap.meta(b"key/00012345").unwrap(), Some(vec![12345u32 as u8; 300]));
    assert_eq!(snap.range(b"key/0003", Some(b"key/0004")).count(), 10_000);
}
