//! Zeros written ahead of the log (FORMAT.md, "Zeros ahead"): commits overwrite them instead of
//! growing the file, so a commit's fdatasync does not journal a new size. The log still ends
//! where its frames end: after a crash, at a clean close, at sealing, and for another handle.

mod common;

use common::{log_end, opts};
use rabosh::{Batch, Durability, Error, Options, Store, Vfs};
use rabosh_testkit::{FaultFs, SimFs};
use std::path::{Path, PathBuf};
use std::sync::Arc;

const DIR: &str = "/t/store";

fn options(fs: &SimFs, strict: bool) -> Options {
    Options { durability: Durability::Sync, strict, ..opts(Arc::new(fs.clone()) as Arc<dyn Vfs>, 8 << 20) }
}

fn segments(fs: &SimFs) -> Vec<PathBuf> {
    let d = Path::new(DIR);
    let mut segs: Vec<_> = fs.names(d).into_iter().filter(|n| n.ends_with(".seg")).map(|n| d.join(n)).collect();
    segs.sort();
    segs
}

fn put(store: &Store, i: usize) {
    let mut b = Batch::new();
    b.put(format!("k{i:04}").into_bytes(), vec![b'a' + (i % 26) as u8; 4096], vec![1, 2, 3]);
    store.write(b).unwrap();
}

fn assert_holds(store: &Store, n: usize) {
    let snap = store.snapshot().unwrap();
    for i in 0..n {
        let v = snap.get(format!("k{i:04}").as_bytes()).unwrap().unwrap_or_else(|| panic!("k{i:04} lost"));
        assert_eq!(v, vec![b'a' + (i % 26) as u8; 4096]);
    }
}

#[test]
fn commits_overwrite_zeros_instead_of_growing_the_file() {
    let fs = SimFs::new();
    let store = Store::open(DIR, options(&fs, false)).unwrap();
    put(&store, 0);
    let seg = segments(&fs).pop().unwrap();
    let len = fs.read_file(&seg).unwrap().len();
    for i in 1..20 {
        put(&store, i);
        assert_eq!(fs.read_file(&seg).unwrap().len(), len, "commit {i} grew the file");
    }
    let bytes = fs.read_file(&seg).unwrap();
    let end = log_end(&bytes) as usize;
    assert!(end < len && bytes[end..].iter().all(|&b| b == 0));
}

/// What a power loss leaves of a store after `n` acknowledged commits (never closed).
fn crashed_after(n: usize) -> SimFs {
    let fs = SimFs::new();
    let store = Store::open(DIR, options(&fs, false)).unwrap();
    for i in 0..n {
        put(&store, i);
    }
    fs.crash_durable()
}

#[test]
fn after_a_crash_the_log_ends_at_the_zeros_and_nothing_is_torn() {
    let img = crashed_after(10);
    // Strict mode refuses any torn tail: zeros ahead are not one.
    let reopened = Store::open(DIR, options(&img, true)).unwrap();
    assert_holds(&reopened, 10);
    put(&reopened, 10);
    assert_holds(&reopened, 11);
}

#[test]
fn bytes_behind_the_zeros_still_make_a_torn_tail() {
    let img = crashed_after(3);
    let seg = segments(&img).pop().unwrap();
    let mut bytes = img.read_file(&seg).unwrap();
    let end = log_end(&bytes) as usize;
    // A frame whose first sectors were lost (zeros) but whose last reached the disk.
    bytes[end + 5000] = 0x5a;
    img.write_file(&seg, &bytes).unwrap();
    match Store::open(DIR, options(&img, true)) {
        Err(Error::Corruption { offset, reason, .. }) => {
            assert_eq!(offset, end as u64, "{reason}");
            assert!(reason.contains("torn"), "{reason}");
        }
        other => panic!("strict open of a torn tail: {:?}", other.map(|_| ())),
    }
    let reopened = Store::open(DIR, options(&img, false)).unwrap();
    assert_holds(&reopened, 3);
    drop(reopened);
    assert_eq!(img.read_file(&seg).unwrap().len(), end, "the torn tail is cut at the log's end");
}

#[test]
fn a_clean_close_and_sealing_leave_exactly_the_frames() {
    let fs = SimFs::new();
    let store = Store::open(DIR, Options { segment_bytes: 64 << 10, ..options(&fs, false) }).unwrap();
    for i in 0..40 {
        put(&store, i);
    }
    store.close().unwrap();
    let segs = segments(&fs);
    assert!(segs.len() > 2, "rotated: {segs:?}");
    for seg in &segs {
        let bytes = fs.read_file(seg).unwrap();
        assert_eq!(log_end(&bytes) as usize, bytes.len(), "{} ends in zeros", seg.display());
    }
    let reopened = Store::open(DIR, Options { segment_bytes: 64 << 10, ..options(&fs, true) }).unwrap();
    assert_holds(&reopened, 40);
}

#[test]
fn another_handles_catch_up_reads_the_new_frame_not_the_zeros_ahead() {
    let tmp = tempfile::tempdir().unwrap();
    let shared = |fs: &FaultFs| Options { shared: true, vfs: Some(Arc::new(fs.clone())), ..Options::default() };
    let (fa, fb) = (FaultFs::std(), FaultFs::std());
    let a = Store::open(tmp.path(), shared(&fa)).unwrap();
    let b = Store::open(tmp.path(), shared(&fb)).unwrap();
    put(&a, 0);
    assert_holds(&b, 1);
    for i in 1..5 {
        put(&a, i);
        let before = fb.bytes_read();
        assert_holds(&b, i + 1);
        // The new frame and its value (about 8 KiB), not the megabyte of zeros behind it.
        let read = fb.bytes_read() - before;
        assert!(read < 64 << 10, "catch-up {i} read {read} bytes");
    }
}
