//! Issue 36: a scan of every key kept every hint page it opened, decoded, for the life of the
//! store (about the hints' size again in the heap), and the mapped hint pages it read stayed
//! counted in the process's resident memory. A walk now holds a few decoded pages at a time
//! within the page cache's budget, and lets the mapped pages go as it reads. Measured as the
//! process's resident growth across one scan (Linux), in a test binary of its own with one
//! test, so nothing else moves it meanwhile.

#[cfg(target_os = "linux")]
#[test]
fn a_scan_of_everything_leaves_little_resident() {
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

/// 60,000 keys with 300 bytes of metadata each, then a clean close: every segment gets its hint.
#[cfg(target_os = "linux")]
fn write_store(dir: &std::path::Path, encrypted: bool) {
    let store = rabosh::Store::open(dir, opts(encrypted)).unwrap();
    for chunk in 0..60u32 {
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

/// Resident KiB of the mapped hint files.
#[cfg(target_os = "linux")]
fn hint_rss_kb() -> u64 {
    let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
    let mut in_hint = false;
    let mut kb = 0;
    for line in smaps.lines() {
        if let Some(kb_field) = line.strip_prefix("Rss:") {
            if in_hint {
                kb += kb_field.trim().trim_end_matches("kB").trim().parse::<u64>().unwrap();
            }
        } else if line
            .split_whitespace()
            .next()
            .is_some_and(|t| t.contains('-') && t.chars().all(|c| c.is_ascii_hexdigit() || c == '-'))
        {
            // A mapping's first line: its address range, then what it maps.
            in_hint = line.trim_end().ends_with(".hint");
        }
    }
    kb
}

#[cfg(target_os = "linux")]
fn check(encrypted: bool) {
    let dir = tempfile::tempdir().unwrap();
    let mut child = std::process::Command::new(std::env::current_exe().unwrap());
    child.args(["--exact", "a_scan_of_everything_leaves_little_resident"]);
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
    assert!(hint_kb > 15_000, "the hints are large enough to see: {hint_kb} KiB");
    // A budget well under the hints' size, so what the scan keeps is told apart from them.
    rabosh::set_page_cache_bytes(2 << 20);
    let store = rabosh::Store::open(dir.path(), opts(encrypted)).unwrap();
    let snap = store.snapshot().unwrap();
    let before = rss_kb();
    let mut n = 0usize;
    snap.try_visit(b"", None, true, &mut |_, meta| {
        assert_eq!(meta.len(), 300);
        n += 1;
        std::ops::ControlFlow::Continue(())
    })
    .unwrap();
    assert_eq!(n, 60_000);
    let grown = rss_kb().saturating_sub(before);
    // A short listing (under the bytes a run reads between two releases) ends with the mapped
    // pages it read let go as well: none of the hints stays in place.
    let mut short = 0usize;
    snap.try_visit(b"key/00030000", Some(b"key/00032000"), true, &mut |_, _| {
        short += 1;
        std::ops::ControlFlow::Continue(())
    })
    .unwrap();
    assert_eq!(short, 2000);
    assert_eq!(hint_rss_kb(), 0, "encrypted {encrypted}: a listing left hint pages in place");
    // And so does a point read that opened a page.
    assert_eq!(snap.meta(b"key/00045678").unwrap(), Some(vec![45678u32 as u8; 300]));
    assert_eq!(hint_rss_kb(), 0, "encrypted {encrypted}: a point read left hint pages in place");
    // The cache's budget and a few MB of mapped hint between two releases may stay.
    assert!(grown < hint_kb / 2, "encrypted {encrypted}: a scan left {grown} KiB resident over {hint_kb} KiB of hints");
}
