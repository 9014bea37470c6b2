//! `SimFs`: an in-memory filesystem that keeps apart what is durable and what is only in the
//! "page cache", so a test can cut the power at any step and reopen on what a disk could hold.
//!
//! Files: the durable content plus the writes and truncations since the last `sync_data`.
//! Directories: the durable entries plus the creates, renames, removes and links since the last
//! `sync_dir` of that directory (a directory's own entry lives in its parent, like any other).
//! A crash image keeps all durable state and, per file and per directory, none, all, a prefix or
//! a random subset of the pending steps — writes possibly torn (a prefix of their bytes) or
//! reaching disk only as a size extension (zeros). That is weaker than any real filesystem
//! promises less than, so whatever survives it survives them.

use crate::Rng;
use rabosh::{CommitLock, LockGuard, OpenMode, VFile, Vfs};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::io;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};

#[derive(Debug, Clone)]
enum FileOp {
    Write { off: u64, data: Vec<u8> },
    SetLen(u64),
}

#[derive(Debug, Clone, Default)]
struct Inode {
    durable: Vec<u8>,
    cur: Vec<u8>,
    pending: Vec<FileOp>,
    handles: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Node {
    File(u64),
    Dir,
}

#[derive(Debug, Clone)]
enum DirOp {
    Set(String, Node),
    Unset(String),
    /// One atomic step: `to` names what `from` named, `from` is gone.
    Rename(String, String, Node),
}

#[derive(Debug, Clone, Default)]
struct Dir {
    durable: BTreeMap<String, Node>,
    cur: BTreeMap<String, Node>,
    pending: Vec<DirOp>,
}

/// The whole filesystem state; cloned for every captured crash point.
#[derive(Debug, Clone)]
struct Sim {
    inodes: HashMap<u64, Inode>,
    next_ino: u64,
    /// Every directory that exists now, by normalised path. "/" always exists and is durable.
    dirs: BTreeMap<PathBuf, Dir>,
    /// Mutating steps so far.
    steps: u64,
}

impl Default for Sim {
    fn default() -> Self {
        let mut dirs = BTreeMap::new();
        dirs.insert(PathBuf::from("/"), Dir::default());
        Sim { inodes: HashMap::new(), next_ino: 1, dirs, steps: 0 }
    }
}

#[derive(Debug, Default)]
struct Shared {
    sim: Mutex<Sim>,
    capturing: AtomicBool,
    captures: Mutex<Vec<Capture>>,
    locks: Mutex<HashSet<PathBuf>>,
    /// Shared holders per path (shared mode's directory lock); an exclusive one is refused
    /// while any is counted, and they while it is held. Locked after `locks`.
    lock_shares: Mutex<HashMap<PathBuf, usize>>,
    /// Commit locks held now; waiters sleep on `commit_freed`.
    commit_locks: Mutex<HashSet<PathBuf>>,
    commit_freed: Condvar,
    no_links: AtomicBool,
}

/// An in-memory filesystem with power-loss semantics. Clones share one filesystem.
#[derive(Debug, Clone)]
pub struct SimFs {
    id: u64,
    sh: Arc<Shared>,
}

/// The filesystem as it stood just before one mutating step.
#[derive(Debug, Clone)]
pub struct Capture {
    /// Mutating steps completed when it was taken (compare with [`SimFs::steps`]).
    pub step: u64,
    sim: Sim,
}

impl Capture {
    /// A post-crash filesystem: durable state plus a seeded random choice of pending steps.
    #[must_use]
    pub fn image(&self, seed: u64) -> SimFs {
        SimFs::from_sim(crash_image(&self.sim, &mut Rng::new(seed)))
    }
    /// Only what was durable: every pending step lost.
    #[must_use]
    pub fn durable_image(&self) -> SimFs {
        SimFs::from_sim(crash_image_with(&self.sim, &mut Rng::new(0), Some(0)))
    }
    /// A process crash (no power loss): every pending step stays, as the page cache keeps it.
    #[must_use]
    pub fn process_crash_image(&self) -> SimFs {
        let mut s = self.sim.clone();
        for i in s.inodes.values_mut() {
            i.handles = 0;
        }
        SimFs::from_sim(s)
    }
}

fn norm(p: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    for c in p.components() {
        match c {
            Component::Normal(s) => out.push(s),
            Component::ParentDir => {
                out.pop();
            }
            _ => {}
        }
    }
    out
}

fn split(p: &Path) -> io::Result<(PathBuf, String)> {
    let p = norm(p);
    let name = p.file_name().ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no file name"))?;
    let name = name.to_str().ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "non-UTF-8 name"))?.to_string();
    Ok((p.parent().unwrap_or(Path::new("/")).to_path_buf(), name))
}

fn not_found(p: &Path) -> io::Error {
    io::Error::new(io::ErrorKind::NotFound, format!("simfs: {} not found", p.display()))
}

impl Sim {
    fn dir_mut(&mut self, d: &Path) -> io::Result<&mut Dir> {
        self.dirs.get_mut(d).ok_or_else(|| not_found(d))
    }

    fn lookup(&self, p: &Path) -> io::Result<Node> {
        let (d, name) = split(p)?;
        self.dirs.get(&d).and_then(|dir| dir.cur.get(&name).copied()).ok_or_else(|| not_found(p))
    }

    fn file(&self, p: &Path) -> io::Result<u64> {
        match self.lookup(p)? {
            Node::File(ino) => Ok(ino),
            Node::Dir => Err(io::Error::new(io::ErrorKind::IsADirectory, format!("{} is a directory", p.display()))),
        }
    }

    /// Forget an inode nothing can reach any more: no current, durable or pending name, no handle.
    fn maybe_free(&mut self, ino: u64) {
        let node = Node::File(ino);
        let named = self.dirs.values().any(|d| {
            d.cur.values().any(|n| *n == node)
                || d.durable.values().any(|n| *n == node)
                || d.pending.iter().any(|op| matches!(op, DirOp::Set(_, n) | DirOp::Rename(_, _, n) if *n == node))
        });
        if !named && self.inodes.get(&ino).is_some_and(|i| i.handles == 0) {
            self.inodes.remove(&ino);
        }
    }

    fn gc(&mut self) {
        let inos: Vec<u64> = self.inodes.iter().filter(|(_, i)| i.handles == 0).map(|(n, _)| *n).collect();
        for ino in inos {
            self.maybe_free(ino);
        }
    }

    fn set(&mut self, d: &Path, name: String, node: Node) -> io::Result<Option<Node>> {
        let dir = self.dir_mut(d)?;
        let old = dir.cur.insert(name.clone(), node);
        dir.pending.push(DirOp::Set(name, node));
        Ok(old)
    }
}

fn apply_dir_op(entries: &mut BTreeMap<String, Node>, op: &DirOp) {
    match op {
        DirOp::Set(n, node) => {
            entries.insert(n.clone(), *node);
        }
        DirOp::Unset(n) => {
            entries.remove(n);
        }
        DirOp::Rename(from, to, node) => {
            entries.remove(from);
            entries.insert(to.clone(), *node);
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fate {
    Kept,
    Lost,
    /// A prefix of the bytes reached disk.
    Torn,
    Zeros,
}

/// What became of each of `n` pending file steps: none, all, an in-order prefix (the first lost
/// one perhaps in part), or any subset (reordered), some torn.
fn file_fates(rng: &mut Rng, n: usize, forced: Option<u32>) -> Vec<Fate> {
    let partial = |rng: &mut Rng| match rng.below(3) {
        0 => Fate::Torn,
        1 => Fate::Zeros,
        _ => Fate::Lost,
    };
    match forced.unwrap_or_else(|| rng.below(4) as u32) {
        0 => vec![Fate::Lost; n],
        1 => vec![Fate::Kept; n],
        2 => {
            let k = rng.below(n as u64 + 1) as usize;
            let torn = partial(rng);
            (0..n)
                .map(|i| match i.cmp(&k) {
                    std::cmp::Ordering::Less => Fate::Kept,
                    std::cmp::Ordering::Equal => torn,
                    std::cmp::Ordering::Greater => Fate::Lost,
                })
                .collect()
        }
        _ => (0..n)
            .map(|_| match rng.below(20) {
                0..10 => Fate::Kept,
                10..15 => Fate::Lost,
                15..18 => Fate::Torn,
                _ => Fate::Zeros,
            })
            .collect(),
    }
}

/// Which of `n` pending directory steps reach disk: none, all, a prefix, or any subset.
fn choose(rng: &mut Rng, n: usize, forced: Option<u32>) -> Vec<bool> {
    let mode = forced.unwrap_or_else(|| rng.below(4) as u32);
    match mode {
        0 => vec![false; n],
        1 => vec![true; n],
        2 => {
            let k = rng.below(n as u64 + 1) as usize;
            (0..n).map(|i| i < k).collect()
        }
        _ => (0..n).map(|_| rng.below(2) == 0).collect(),
    }
}

fn crash_image(sim: &Sim, rng: &mut Rng) -> Sim {
    crash_image_with(sim, rng, None)
}

fn crash_image_with(sim: &Sim, rng: &mut Rng, forced: Option<u32>) -> Sim {
    let mut out = Sim { next_ino: sim.next_ino, ..Sim::default() };
    out.dirs.clear();
    let mut files = BTreeSet::new();
    let mut stack = vec![PathBuf::from("/")];
    while let Some(p) = stack.pop() {
        let Some(d) = sim.dirs.get(&p) else { continue };
        let mut entries = d.durable.clone();
        for (op, keep) in d.pending.iter().zip(choose(rng, d.pending.len(), forced)) {
            if keep {
                apply_dir_op(&mut entries, op);
            }
        }
        for (name, node) in &entries {
            match node {
                Node::Dir => stack.push(p.join(name)),
                Node::File(ino) => {
                    files.insert(*ino);
                }
            }
        }
        entries.retain(|name, node| *node != Node::Dir || sim.dirs.contains_key(&p.join(name)));
        out.dirs.insert(p, Dir { durable: entries.clone(), cur: entries, pending: Vec::new() });
    }
    for ino in files {
        let Some(i) = sim.inodes.get(&ino) else { continue };
        let mut c = i.durable.clone();
        for (op, fate) in i.pending.iter().zip(file_fates(rng, i.pending.len(), forced)) {
            match (op, fate) {
                // A size change is all or nothing: torn or zeroed, it did not happen.
                (_, Fate::Lost) | (FileOp::SetLen(_), Fate::Torn | Fate::Zeros) => {}
                (FileOp::Write { off, data }, Fate::Kept) => write_into(&mut c, *off, data, false),
                (FileOp::Write { off, data }, Fate::Torn) => {
                    let n = rng.below(data.len() as u64 + 1) as usize;
                    write_into(&mut c, *off, &data[..n], false);
                }
                // Only the size reached disk: the new bytes read as zeros.
                (FileOp::Write { off, data }, Fate::Zeros) => write_into(&mut c, *off, &vec![0; data.len()], true),
                (FileOp::SetLen(l), Fate::Kept) => c.resize(*l as usize, 0),
            }
        }
        out.inodes.insert(ino, Inode { durable: c.clone(), cur: c, pending: Vec::new(), handles: 0 });
    }
    out
}

/// `zeros_keep_old`: a zero-filled extension does not overwrite bytes that already exist.
fn write_into(c: &mut Vec<u8>, off: u64, data: &[u8], zeros_keep_old: bool) {
    let end = off as usize + data.len();
    if c.len() < end {
        c.resize(end, 0);
    }
    if zeros_keep_old && data.iter().all(|b| *b == 0) {
        return;
    }
    c[off as usize..end].copy_from_slice(data);
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

impl Default for SimFs {
    fn default() -> Self {
        SimFs::new()
    }
}

impl SimFs {
    #[must_use]
    pub fn new() -> SimFs {
        SimFs::from_sim(Sim::default())
    }

    fn from_sim(sim: Sim) -> SimFs {
        let sh = Shared { sim: Mutex::new(sim), ..Shared::default() };
        SimFs { id: NEXT_ID.fetch_add(1, Ordering::Relaxed), sh: Arc::new(sh) }
    }

    fn sim(&self) -> std::sync::MutexGuard<'_, Sim> {
        self.sh.sim.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Runs one mutating step (capturing the state before it when asked to).
    fn step<R>(&self, f: impl FnOnce(&mut Sim) -> io::Result<R>) -> io::Result<R> {
        let mut sim = self.sim();
        if self.sh.capturing.load(Ordering::Relaxed) {
            let c = Capture { step: sim.steps, sim: sim.clone() };
            self.sh.captures.lock().unwrap().push(c);
        }
        sim.steps += 1;
        f(&mut sim)
    }

    /// An independent filesystem with the same current state (pending steps stay pending).
    #[must_use]
    pub fn fork(&self) -> SimFs {
        let mut s = self.sim().clone();
        for i in s.inodes.values_mut() {
            i.handles = 0;
        }
        SimFs::from_sim(s)
    }

    /// Cut the power now: a new filesystem holding a seeded post-crash image.
    #[must_use]
    pub fn crash(&self, seed: u64) -> SimFs {
        SimFs::from_sim(crash_image(&self.sim(), &mut Rng::new(seed)))
    }

    /// Cut the power now, losing every pending step.
    #[must_use]
    pub fn crash_durable(&self) -> SimFs {
        SimFs::from_sim(crash_image_with(&self.sim(), &mut Rng::new(0), Some(0)))
    }

    /// Mutating steps so far (creates, writes, syncs, renames, removes, links, truncations).
    #[must_use]
    pub fn steps(&self) -> u64 {
        self.sim().steps
    }

    /// Record the state before every mutating step from now on (or stop recording).
    pub fn set_capture(&self, on: bool) {
        self.sh.capturing.store(on, Ordering::Relaxed);
    }

    #[must_use]
    pub fn take_captures(&self) -> Vec<Capture> {
        std::mem::take(&mut *self.sh.captures.lock().unwrap())
    }

    /// Refuse hard links (as across devices), so checkpoints copy.
    pub fn set_hard_links(&self, allowed: bool) {
        self.sh.no_links.store(!allowed, Ordering::Relaxed);
    }

    /// The current bytes of a file.
    pub fn read_file(&self, path: &Path) -> io::Result<Vec<u8>> {
        let sim = self.sim();
        let ino = sim.file(path)?;
        Ok(sim.inodes[&ino].cur.clone())
    }

    /// Replace a file's bytes (and name, and missing parent directories) durably, as damage on
    /// disk would: no step is counted.
    pub fn write_file(&self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        let mut sim = self.sim();
        let (d, name) = split(path)?;
        let mut missing = Vec::new();
        let mut p = d.as_path();
        while !sim.dirs.contains_key(p) {
            missing.push(p.to_path_buf());
            p = p.parent().unwrap_or(Path::new("/"));
        }
        for m in missing.into_iter().rev() {
            let (parent, n) = split(&m)?;
            let pd = sim.dir_mut(&parent)?;
            pd.cur.insert(n.clone(), Node::Dir);
            pd.durable.insert(n, Node::Dir);
            sim.dirs.insert(m, Dir::default());
        }
        let ino = if let Ok(ino) = sim.file(path) {
            ino
        } else {
            let ino = sim.next_ino;
            sim.next_ino += 1;
            sim.inodes.insert(ino, Inode::default());
            let dir = sim.dir_mut(&d)?;
            dir.cur.insert(name.clone(), Node::File(ino));
            dir.durable.insert(name, Node::File(ino));
            ino
        };
        let i = sim.inodes.get_mut(&ino).unwrap();
        i.cur = bytes.to_vec();
        i.durable = bytes.to_vec();
        i.pending.clear();
        Ok(())
    }

    /// Remove a name durably (damage, not a step).
    pub fn delete_file(&self, path: &Path) -> io::Result<()> {
        let mut sim = self.sim();
        let (d, name) = split(path)?;
        let dir = sim.dir_mut(&d)?;
        dir.cur.remove(&name).ok_or_else(|| not_found(path))?;
        dir.durable.remove(&name);
        Ok(())
    }

    /// Names in a directory, sorted.
    #[must_use]
    pub fn names(&self, dir: &Path) -> Vec<String> {
        self.sim().dirs.get(&norm(dir)).map(|d| d.cur.keys().cloned().collect()).unwrap_or_default()
    }

    /// True when nothing is pending anywhere: the image a crash would leave is the current state.
    #[must_use]
    pub fn all_durable(&self) -> bool {
        let sim = self.sim();
        sim.dirs.values().all(|d| d.pending.is_empty()) && sim.inodes.values().all(|i| i.pending.is_empty())
    }
}

#[derive(Debug)]
struct SimFile {
    fs: SimFs,
    ino: u64,
    writable: bool,
}

impl Drop for SimFile {
    fn drop(&mut self) {
        let mut sim = self.fs.sim();
        if let Some(i) = sim.inodes.get_mut(&self.ino) {
            i.handles -= 1;
        }
        sim.maybe_free(self.ino);
    }
}

impl SimFile {
    fn check_writable(&self) -> io::Result<()> {
        if self.writable {
            Ok(())
        } else {
            Err(io::Error::new(io::ErrorKind::PermissionDenied, "simfs: file opened read-only"))
        }
    }
}

impl VFile for SimFile {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        let sim = self.fs.sim();
        let c = &sim.inodes[&self.ino].cur;
        if offset >= c.len() as u64 {
            return Ok(0);
        }
        let n = buf.len().min(c.len() - offset as usize);
        buf[..n].copy_from_slice(&c[offset as usize..offset as usize + n]);
        Ok(n)
    }
    fn write_at(&self, buf: &[u8], offset: u64) -> io::Result<usize> {
        self.check_writable()?;
        self.fs.step(|sim| {
            let i = sim.inodes.get_mut(&self.ino).unwrap();
            write_into(&mut i.cur, offset, buf, false);
            i.pending.push(FileOp::Write { off: offset, data: buf.to_vec() });
            Ok(buf.len())
        })
    }
    fn sync_data(&self) -> io::Result<()> {
        self.fs.step(|sim| {
            let i = sim.inodes.get_mut(&self.ino).unwrap();
            i.durable = i.cur.clone();
            i.pending.clear();
            Ok(())
        })
    }
    fn set_len(&self, len: u64) -> io::Result<()> {
        self.check_writable()?;
        self.fs.step(|sim| {
            let i = sim.inodes.get_mut(&self.ino).unwrap();
            i.cur.resize(len as usize, 0);
            i.pending.push(FileOp::SetLen(len));
            Ok(())
        })
    }
    fn len(&self) -> io::Result<u64> {
        Ok(self.fs.sim().inodes[&self.ino].cur.len() as u64)
    }
    fn unlinked(&self) -> io::Result<bool> {
        let sim = self.fs.sim();
        Ok(!sim.dirs.values().any(|d| d.cur.values().any(|n| *n == Node::File(self.ino))))
    }
}

struct SimSharedLock {
    fs: SimFs,
    path: PathBuf,
}

impl Drop for SimSharedLock {
    fn drop(&mut self) {
        let mut shared = self.fs.sh.lock_shares.lock().unwrap();
        if let Some(n) = shared.get_mut(&self.path) {
            *n -= 1;
            if *n == 0 {
                shared.remove(&self.path);
            }
        }
    }
}

/// A commit lock on one `SimFs`: handles on the same machine (modelling processes) exclude each
/// other; a crash image is a new machine, with no lock held.
#[derive(Debug)]
struct SimCommitLock {
    fs: SimFs,
    path: PathBuf,
}

impl CommitLock for SimCommitLock {
    fn lock(&self) -> io::Result<()> {
        let mut held = self.fs.sh.commit_locks.lock().unwrap();
        while held.contains(&self.path) {
            held = self.fs.sh.commit_freed.wait(held).unwrap();
        }
        held.insert(self.path.clone());
        Ok(())
    }
    fn try_lock(&self) -> io::Result<bool> {
        Ok(self.fs.sh.commit_locks.lock().unwrap().insert(self.path.clone()))
    }
    fn unlock(&self) {
        self.fs.sh.commit_locks.lock().unwrap().remove(&self.path);
        self.fs.sh.commit_freed.notify_all();
    }
}

struct SimLock {
    fs: SimFs,
    path: PathBuf,
}

impl Drop for SimLock {
    fn drop(&mut self) {
        self.fs.sh.locks.lock().unwrap().remove(&self.path);
    }
}

impl Vfs for SimFs {
    fn open(&self, path: &Path, mode: OpenMode) -> io::Result<Arc<dyn VFile>> {
        let ino = if mode == OpenMode::CreateNew {
            self.step(|sim| {
                let (d, name) = split(path)?;
                if sim.dirs.get(&d).ok_or_else(|| not_found(&d))?.cur.contains_key(&name) {
                    return Err(io::Error::new(io::ErrorKind::AlreadyExists, format!("{} exists", path.display())));
                }
                let ino = sim.next_ino;
                sim.next_ino += 1;
                sim.inodes.insert(ino, Inode::default());
                sim.set(&d, name, Node::File(ino))?;
                Ok(ino)
            })?
        } else {
            self.sim().file(path)?
        };
        self.sim().inodes.get_mut(&ino).unwrap().handles += 1;
        Ok(Arc::new(SimFile { fs: self.clone(), ino, writable: mode != OpenMode::Read }))
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.step(|sim| {
            let node = sim.lookup(from)?;
            let (fd, fname) = split(from)?;
            let (td, tname) = split(to)?;
            sim.dir_mut(&td)?;
            let old = if fd == td {
                let dir = sim.dir_mut(&fd)?;
                dir.cur.remove(&fname);
                let old = dir.cur.insert(tname.clone(), node);
                dir.pending.push(DirOp::Rename(fname, tname, node));
                old
            } else {
                let dir = sim.dir_mut(&fd)?;
                dir.cur.remove(&fname);
                dir.pending.push(DirOp::Unset(fname));
                sim.set(&td, tname, node)?
            };
            if let Some(Node::File(ino)) = old {
                sim.maybe_free(ino);
            }
            Ok(())
        })
    }

    fn remove(&self, path: &Path) -> io::Result<()> {
        self.step(|sim| {
            let ino = sim.file(path)?;
            let (d, name) = split(path)?;
            let dir = sim.dir_mut(&d)?;
            dir.cur.remove(&name);
            dir.pending.push(DirOp::Unset(name));
            sim.maybe_free(ino);
            Ok(())
        })
    }

    fn hard_link(&self, from: &Path, to: &Path) -> io::Result<()> {
        if self.sh.no_links.load(Ordering::Relaxed) {
            return Err(io::Error::new(io::ErrorKind::CrossesDevices, "simfs: hard links refused"));
        }
        self.step(|sim| {
            let ino = sim.file(from)?;
            if sim.lookup(to).is_ok() {
                return Err(io::Error::new(io::ErrorKind::AlreadyExists, format!("{} exists", to.display())));
            }
            let (d, name) = split(to)?;
            sim.set(&d, name, Node::File(ino))?;
            Ok(())
        })
    }

    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        self.step(|sim| {
            let d = sim.dir_mut(&norm(dir))?;
            d.durable = d.cur.clone();
            d.pending.clear();
            sim.gc();
            Ok(())
        })
    }

    fn list(&self, dir: &Path) -> io::Result<Vec<String>> {
        let sim = self.sim();
        let d = sim.dirs.get(&norm(dir)).ok_or_else(|| not_found(dir))?;
        Ok(d.cur.keys().cloned().collect())
    }

    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        let dir = norm(dir);
        let mut missing = Vec::new();
        {
            let sim = self.sim();
            let mut p = dir.as_path();
            while !sim.dirs.contains_key(p) {
                if sim.lookup(p).is_ok() {
                    return Err(io::Error::new(io::ErrorKind::NotADirectory, format!("{} is a file", p.display())));
                }
                missing.push(p.to_path_buf());
                p = p.parent().unwrap_or(Path::new("/"));
            }
        }
        for p in missing.into_iter().rev() {
            self.step(|sim| {
                let (d, name) = split(&p)?;
                sim.set(&d, name, Node::Dir)?;
                sim.dirs.insert(p.clone(), Dir::default());
                Ok(())
            })?;
        }
        Ok(())
    }

    fn exists(&self, path: &Path) -> io::Result<bool> {
        let p = norm(path);
        let sim = self.sim();
        Ok(sim.dirs.contains_key(&p) || sim.lookup(&p).is_ok())
    }

    fn try_lock(&self, path: &Path) -> io::Result<Option<LockGuard>> {
        if self.sim().lookup(path).is_err() {
            self.open(path, OpenMode::CreateNew)?;
        }
        let p = norm(path);
        let mut locks = self.sh.locks.lock().unwrap();
        if self.sh.lock_shares.lock().unwrap().contains_key(&p) || !locks.insert(p.clone()) {
            return Ok(None);
        }
        Ok(Some(Box::new(SimLock { fs: self.clone(), path: p })))
    }

    fn try_lock_shared(&self, path: &Path) -> io::Result<Option<LockGuard>> {
        if self.sim().lookup(path).is_err() {
            self.open(path, OpenMode::CreateNew)?;
        }
        let p = norm(path);
        let locks = self.sh.locks.lock().unwrap();
        if locks.contains(&p) {
            return Ok(None);
        }
        *self.sh.lock_shares.lock().unwrap().entry(p.clone()).or_insert(0) += 1;
        Ok(Some(Box::new(SimSharedLock { fs: self.clone(), path: p })))
    }

    fn commit_lock(&self, path: &Path) -> io::Result<Box<dyn CommitLock>> {
        if self.sim().lookup(path).is_err() {
            self.open(path, OpenMode::CreateNew)?;
        }
        Ok(Box::new(SimCommitLock { fs: self.clone(), path: norm(path) }))
    }

    fn canonicalize(&self, dir: &Path) -> io::Result<PathBuf> {
        let p = norm(dir);
        if !self.exists(&p)? {
            return Err(not_found(&p));
        }
        // Each SimFs is its own machine: the same path on two of them is two stores.
        Ok(PathBuf::from(format!("/simfs-{}", self.id)).join(p.strip_prefix("/").unwrap()))
    }
}
