//! A poisoned store answers nothing from the commit that failed (issue 9, case 1; issue 10):
//! after a failed fsync, or a panic while the writer mutex was held, every call answers
//! `Poisoned` until reopen; only verify, stats and close still run.

use rabosh::{Batch, Error, LockGuard, OpenMode, Options, StdFs, Store, VFile, Vfs};
use rabosh_testkit::{FaultFs, IoKind};
use std::io;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

fn put(i: u64) -> Batch {
    let mut b = Batch::new();
    b.put(format!("k{i}").into_bytes(), format!("v{i}").into_bytes(), vec![i as u8; 3]);
    b
}

fn poisoned<T: std::fmt::Debug>(r: &rabosh::Result<T>, what: &str) {
    assert!(matches!(r, Err(Error::Poisoned { .. })), "{what} must answer Poisoned, got {r:?}");
}

/// Every call the lead's choice lists answers Poisoned; verify, stats and close still run.
fn every_call_is_poisoned(store: &Store, cp: &Path) {
    assert!(store.stats().poisoned);
    poisoned(&store.snapshot().map(|s| s.seq()), "snapshot");
    poisoned(&store.latest_snapshot().map(|s| s.seq()), "latest_snapshot");
    poisoned(&store.append(put(100)), "append");
    poisoned(&store.append(Batch::new()), "an empty append");
    poisoned(&store.write(put(101)), "write");
    poisoned(&store.wait_durable(store.stats().seq + 1), "wait_durable");
    poisoned(&store.sync(), "sync");
    poisoned(&store.compact(), "compact");
    poisoned(&store.checkpoint(cp), "checkpoint");
    store.verify().unwrap();
    store.close().unwrap();
}

#[test]
fn after_a_failed_fsync_every_call_answers_poisoned() {
    let tmp = tempfile::tempdir().unwrap();
    let fs = FaultFs::std();
    let o = Options { vfs: Some(Arc::new(fs.clone())), ..Options::default() };
    let store = Store::open(tmp.path().join("s"), o).unwrap();
    for i in 1..=3 {
        store.write(put(i)).unwrap();
    }
    let before = store.snapshot().unwrap();
    fs.fail_nth(IoKind::Sync, 1);
    assert!(matches!(store.write(put(4)), Err(Error::Io { op: "fsync", .. })));
    every_call_is_poisoned(&store, &tmp.path().join("cp"));
    // A view taken before the failure keeps reading what it saw.
    assert_eq!(before.get(b"k3").unwrap().unwrap(), b"v3");
    drop(before);
    drop(store);
    let store = Store::open(tmp.path().join("s"), Options::default()).unwrap();
    assert!(store.stats().seq >= 3);
}

/// Panics inside a file write when armed: a bug under the writer mutex.
#[derive(Debug, Default)]
struct PanicFs {
    armed: Arc<AtomicBool>,
}

#[derive(Debug)]
struct PanicFile {
    inner: Arc<dyn VFile>,
    armed: Arc<AtomicBool>,
}

impl VFile for PanicFile {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        self.inner.read_at(buf, offset)
    }
    fn write_at(&self, buf: &[u8], offset: u64) -> io::Result<usize> {
        assert!(!self.armed.swap(false, Ordering::SeqCst), "planted panic in a write");
        self.inner.write_at(buf, offset)
    }
    fn sync_data(&self) -> io::Result<()> {
        self.inner.sync_data()
    }
    fn set_len(&self, len: u64) -> io::Result<()> {
        self.inner.set_len(len)
    }
    fn len(&self) -> io::Result<u64> {
        self.inner.len()
    }
}

impl Vfs for PanicFs {
    fn open(&self, path: &Path, mode: OpenMode) -> io::Result<Arc<dyn VFile>> {
        Ok(Arc::new(PanicFile { inner: StdFs.open(path, mode)?, armed: self.armed.clone() }))
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        StdFs.rename(from, to)
    }
    fn remove(&self, path: &Path) -> io::Result<()> {
        StdFs.remove(path)
    }
    fn hard_link(&self, from: &Path, to: &Path) -> io::Result<()> {
        StdFs.hard_link(from, to)
    }
    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        StdFs.sync_dir(dir)
    }
    fn list(&self, dir: &Path) -> io::Result<Vec<String>> {
        StdFs.list(dir)
    }
    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        StdFs.create_dir_all(dir)
    }
    fn exists(&self, path: &Path) -> io::Result<bool> {
        StdFs.exists(path)
    }
    fn try_lock(&self, path: &Path) -> io::Result<Option<LockGuard>> {
        StdFs.try_lock(path)
    }
    fn canonicalize(&self, dir: &Path) -> io::Result<PathBuf> {
        StdFs.canonicalize(dir)
    }
}

#[test]
fn a_panic_under_the_writer_mutex_poisons_the_store() {
    let tmp = tempfile::tempdir().unwrap();
    let fs = PanicFs::default();
    let armed = fs.armed.clone();
    let o = Options { vfs: Some(Arc::new(fs)), ..Options::default() };
    let store = Store::open(tmp.path().join("s"), o).unwrap();
    for i in 1..=3 {
        store.write(put(i)).unwrap();
    }
    armed.store(true, Ordering::SeqCst);
    let r = catch_unwind(AssertUnwindSafe(|| store.write(put(4))));
    assert!(r.is_err(), "the planted panic must fire inside the commit");
    every_call_is_poisoned(&store, &tmp.path().join("cp"));
    drop(store);
    let store = Store::open(tmp.path().join("s"), Options::default()).unwrap();
    assert_eq!(store.stats().seq, 3, "the panicked commit never reached the log");
    store.verify().unwrap();
}
