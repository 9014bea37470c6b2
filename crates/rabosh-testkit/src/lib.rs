//! The engine's test instruments, a dev-dependency only (no release build compiles them): a
//! fault-injecting wrapper around any [`Vfs`] ([`FaultFs`]), an in-memory filesystem with
//! power-loss semantics ([`SimFs`]), a seeded generator, and, re-exported so that a test needs
//! one import, the engine's probes (counters production code keeps) and its sealed-file
//! inspection (compiled into the engine only with its `testkit` feature, which this crate turns
//! on).

mod simfs;
/// The trait the filesystems here implement, so a test needs no engine import for it.
pub use rabosh::Vfs;
pub use rabosh::probe::{heap_trims, hint_pages_opened, hints_mapped, hints_migrated};
pub use rabosh::sealed::{
    Sealed, hint_blobs, rewrite_hints_sealed_whole, rewrite_hints_unpacked, rewrite_hints_whole, sealed_blobs,
};
pub use simfs::{Capture, SimFs};

use rabosh::{LockGuard, OpenMode, VFile};
use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};

/// The kinds of IO step `FaultFs` counts and can fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IoKind {
    Create,
    Open,
    Read,
    Write,
    Sync,
    SyncDir,
    Rename,
    Remove,
    Truncate,
    Link,
}

#[derive(Debug, Default)]
struct State {
    counts: Mutex<HashMap<IoKind, u64>>,
    /// (kind, the count at which to fail)
    armed: Mutex<Option<(IoKind, u64)>>,
    fired: AtomicU64,
    /// The file (or path) of the step that fired last.
    fired_at: Mutex<Option<PathBuf>>,
    /// Bytes file reads returned: proves how much work a recovery did, whatever the content.
    bytes_read: AtomicU64,
    /// File fsyncs are held at this gate while it is shut.
    gate: Mutex<Gate>,
    gate_moved: Condvar,
}

#[derive(Debug, Default)]
struct Gate {
    shut: bool,
    /// fsyncs waiting at the shut gate right now.
    held: u64,
}

impl State {
    /// Waits while the gate is shut: lets a test look at the store mid-fsync, deterministically.
    fn pass_gate(&self) {
        let mut g = self.gate.lock().unwrap();
        if !g.shut {
            return;
        }
        g.held += 1;
        self.gate_moved.notify_all();
        while g.shut {
            g = self.gate_moved.wait(g).unwrap();
        }
        g.held -= 1;
        self.gate_moved.notify_all();
    }

    /// Counts one step on `path`; `Err` when it is the armed one (one-shot).
    fn step_on(&self, kind: IoKind, path: &Path) -> io::Result<()> {
        let r = self.step(kind);
        if r.is_err() {
            *self.fired_at.lock().unwrap() = Some(path.to_path_buf());
        }
        r
    }

    /// Counts one step; `Err` when it is the armed one (one-shot).
    fn step(&self, kind: IoKind) -> io::Result<()> {
        let n = {
            let mut c = self.counts.lock().unwrap();
            let e = c.entry(kind).or_insert(0);
            *e += 1;
            *e
        };
        let mut armed = self.armed.lock().unwrap();
        if *armed == Some((kind, n)) {
            *armed = None;
            self.fired.fetch_add(1, Ordering::SeqCst);
            return Err(io::Error::other(format!("injected fault: {kind:?} #{n}")));
        }
        Ok(())
    }
}

/// Wraps a filesystem, counts every step by kind, and fails the Nth step of a chosen kind.
/// A failing write first writes half its bytes (a torn write).
#[derive(Debug, Clone)]
pub struct FaultFs {
    inner: Arc<dyn Vfs>,
    state: Arc<State>,
}

impl FaultFs {
    pub fn new(inner: Arc<dyn Vfs>) -> FaultFs {
        FaultFs { inner, state: Arc::default() }
    }

    /// Over the real filesystem.
    #[must_use]
    pub fn std() -> FaultFs {
        FaultFs::new(Arc::new(rabosh::StdFs))
    }

    #[must_use]
    pub fn count(&self, kind: IoKind) -> u64 {
        self.state.counts.lock().unwrap().get(&kind).copied().unwrap_or(0)
    }

    /// Fail the `n`th step of `kind` from now (1 = the very next one).
    pub fn fail_nth(&self, kind: IoKind, n: u64) {
        assert!(n >= 1);
        let at = self.count(kind) + n;
        *self.state.armed.lock().unwrap() = Some((kind, at));
    }

    pub fn disarm(&self) {
        *self.state.armed.lock().unwrap() = None;
    }

    /// Hold every file fsync from now until [`FaultFs::release_syncs`].
    pub fn hold_syncs(&self) {
        self.state.gate.lock().unwrap().shut = true;
    }

    /// Let held fsyncs (and later ones) through.
    pub fn release_syncs(&self) {
        self.state.gate.lock().unwrap().shut = false;
        self.state.gate_moved.notify_all();
    }

    /// A guard that opens the fsync gate when dropped (a test's end, even by a panic, so closing
    /// the store cannot hang behind it) and after `hang` regardless, so a store that blocks
    /// where it must not fails its test instead of hanging it.
    #[must_use]
    pub fn release_on_drop(&self, hang: std::time::Duration) -> SyncRelease {
        let watchdog = self.clone();
        std::thread::spawn(move || {
            std::thread::sleep(hang);
            watchdog.release_syncs();
        });
        SyncRelease(self.clone())
    }

    /// Block until `n` fsyncs are held at the gate; false if that has not happened within
    /// `limit` (a hang guard for tests, so a broken store fails instead of hanging CI).
    #[must_use]
    pub fn wait_held(&self, n: u64, limit: std::time::Duration) -> bool {
        let deadline = std::time::Instant::now() + limit;
        let mut g = self.state.gate.lock().unwrap();
        while g.held < n {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                return false;
            }
            g = self.state.gate_moved.wait_timeout(g, left).unwrap().0;
        }
        true
    }

    /// How many faults fired so far.
    #[must_use]
    pub fn fired(&self) -> u64 {
        self.state.fired.load(Ordering::SeqCst)
    }

    /// The path the last fired fault hit.
    #[must_use]
    pub fn fired_at(&self) -> Option<PathBuf> {
        self.state.fired_at.lock().unwrap().clone()
    }

    /// Bytes returned by file reads so far.
    #[must_use]
    pub fn bytes_read(&self) -> u64 {
        self.state.bytes_read.load(Ordering::SeqCst)
    }
}

#[derive(Debug)]
struct FaultFile {
    path: PathBuf,
    inner: Arc<dyn VFile>,
    state: Arc<State>,
}

impl VFile for FaultFile {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        self.state.step_on(IoKind::Read, &self.path)?;
        let n = self.inner.read_at(buf, offset)?;
        self.state.bytes_read.fetch_add(n as u64, Ordering::SeqCst);
        Ok(n)
    }
    fn write_at(&self, buf: &[u8], offset: u64) -> io::Result<usize> {
        if let Err(e) = self.state.step_on(IoKind::Write, &self.path) {
            let _ = rabosh::write_all_at(&*self.inner, &buf[..buf.len() / 2], offset);
            return Err(e);
        }
        self.inner.write_at(buf, offset)
    }
    fn sync_data(&self) -> io::Result<()> {
        self.state.pass_gate();
        self.state.step_on(IoKind::Sync, &self.path)?;
        self.inner.sync_data()
    }
    fn set_len(&self, len: u64) -> io::Result<()> {
        self.state.step_on(IoKind::Truncate, &self.path)?;
        self.inner.set_len(len)
    }
    fn len(&self) -> io::Result<u64> {
        self.inner.len()
    }
    fn unlinked(&self) -> io::Result<bool> {
        self.inner.unlinked()
    }
}

impl Vfs for FaultFs {
    fn open(&self, path: &Path, mode: OpenMode) -> io::Result<Arc<dyn VFile>> {
        self.state.step_on(if mode == OpenMode::CreateNew { IoKind::Create } else { IoKind::Open }, path)?;
        let inner = self.inner.open(path, mode)?;
        Ok(Arc::new(FaultFile { path: path.to_path_buf(), inner, state: self.state.clone() }))
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.state.step(IoKind::Rename)?;
        self.inner.rename(from, to)
    }
    fn remove(&self, path: &Path) -> io::Result<()> {
        self.state.step(IoKind::Remove)?;
        self.inner.remove(path)
    }
    fn hard_link(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.state.step(IoKind::Link)?;
        self.inner.hard_link(from, to)
    }
    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        self.state.step(IoKind::SyncDir)?;
        self.inner.sync_dir(dir)
    }
    fn list(&self, dir: &Path) -> io::Result<Vec<String>> {
        self.inner.list(dir)
    }
    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        self.inner.create_dir_all(dir)
    }
    fn exists(&self, path: &Path) -> io::Result<bool> {
        self.inner.exists(path)
    }
    fn try_lock(&self, path: &Path) -> io::Result<Option<LockGuard>> {
        self.inner.try_lock(path)
    }
    fn try_lock_dir(&self, dir: &Path) -> io::Result<Option<LockGuard>> {
        self.inner.try_lock_dir(dir)
    }
    fn try_lock_shared(&self, path: &Path) -> io::Result<Option<LockGuard>> {
        self.inner.try_lock_shared(path)
    }
    fn try_lock_dir_shared(&self, dir: &Path) -> io::Result<Option<LockGuard>> {
        self.inner.try_lock_dir_shared(dir)
    }
    fn commit_lock(&self, path: &Path) -> io::Result<Box<dyn rabosh::CommitLock>> {
        self.inner.commit_lock(path)
    }
    fn canonicalize(&self, dir: &Path) -> io::Result<PathBuf> {
        self.inner.canonicalize(dir)
    }
}

/// What group commit promises, from the counters read before and after concurrent commits:
/// `commits` commits landed, and fewer fsyncs than commits covered them (some shared one). The
/// memory crate's counters are the engine's, so both layers' tests check with this.
pub fn assert_fsyncs_shared(before: &rabosh::Stats, after: &rabosh::Stats, commits: u64) {
    let landed = after.commits - before.commits;
    let fsyncs = after.fsyncs - before.fsyncs;
    assert_eq!(landed, commits);
    assert!(fsyncs < landed, "{fsyncs} fsyncs for {landed} commits: nothing grouped");
}

/// A small seeded generator (SplitMix64): reproducible crash images without a dependency.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    #[must_use]
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x5DEE_CE66_D1CE_4E5B)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (0 when n is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 { 0 } else { self.next_u64() % n }
    }
}

/// Opens a [`FaultFs`]'s fsync gate when dropped; see [`FaultFs::release_on_drop`].
pub struct SyncRelease(FaultFs);

impl Drop for SyncRelease {
    fn drop(&mut self) {
        self.0.release_syncs();
    }
}
