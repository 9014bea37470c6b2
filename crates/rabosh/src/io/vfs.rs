//! The one seam every byte of file IO goes through, so tests can fail or drop any step.

use std::any::Any;
use std::fmt::Debug;
use std::fs::{File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// An open file. Positional IO only: the writer and any number of readers share one handle.
#[allow(clippy::len_without_is_empty)] // a file's length, not a collection
pub trait VFile: Send + Sync + Debug {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize>;
    fn write_at(&self, buf: &[u8], offset: u64) -> io::Result<usize>;
    fn sync_data(&self) -> io::Result<()>;
    fn set_len(&self, len: u64) -> io::Result<()>;
    fn len(&self) -> io::Result<u64>;
    /// True when no directory entry names this file any more (its store was removed).
    fn unlinked(&self) -> io::Result<bool> {
        Ok(false)
    }
    /// Its first `len` bytes mapped read-only, where this file system can (None: the caller
    /// reads them instead). Asked only of files written once and never changed in place (hint
    /// files, see [`Mapped`]).
    fn map_read_only(&self, len: u64) -> Option<Mapped> {
        let _ = len;
        None
    }
}

pub use crate::io::os::Mapped;

/// How to open a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpenMode {
    Read,
    ReadWrite,
    /// Create; fail if the name exists.
    CreateNew,
}

/// A held exclusive lock; dropping it releases the lock.
pub type LockGuard = Box<dyn Any + Send + Sync>;

/// Shared mode's cross-process commit lock (`WRITER`): taken and released around every commit,
/// on one handle kept for the store's lifetime. Its holder's death releases it.
pub trait CommitLock: Send + Sync + Debug {
    /// Waits until this handle holds the lock exclusively.
    fn lock(&self) -> io::Result<()>;
    /// Takes the lock if no one holds it; `false` (at once) when someone does.
    fn try_lock(&self) -> io::Result<bool>;
    fn unlock(&self);
}

/// The filesystem as the engine sees it.
pub trait Vfs: Send + Sync + Debug {
    fn open(&self, path: &Path, mode: OpenMode) -> io::Result<Arc<dyn VFile>>;
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()>;
    fn remove(&self, path: &Path) -> io::Result<()>;
    fn hard_link(&self, from: &Path, to: &Path) -> io::Result<()>;
    /// Make the directory's entries (creates, renames, removes) durable.
    fn sync_dir(&self, dir: &Path) -> io::Result<()>;
    /// File names (not paths) in `dir`.
    fn list(&self, dir: &Path) -> io::Result<Vec<String>>;
    fn create_dir_all(&self, dir: &Path) -> io::Result<()>;
    fn exists(&self, path: &Path) -> io::Result<bool>;
    /// Take an exclusive OS lock on `path` (created if absent); `None` when someone holds it.
    fn try_lock(&self, path: &Path) -> io::Result<Option<LockGuard>>;
    /// Take an exclusive OS lock on the directory itself, where the OS allows it (a lock that
    /// deleting or replacing a file inside cannot free). Default: nothing to take.
    fn try_lock_dir(&self, _dir: &Path) -> io::Result<Option<LockGuard>> {
        Ok(Some(Box::new(())))
    }
    /// Shared mode (several processes, one store): a shared OS lock on `path` (created if
    /// absent), compatible with other shared holders and refused while an exclusive one holds
    /// it. Default: unsupported, so a filesystem that cannot lock cannot be shared.
    fn try_lock_shared(&self, _path: &Path) -> io::Result<Option<LockGuard>> {
        Err(io::Error::new(io::ErrorKind::Unsupported, "shared locks are not supported by this filesystem"))
    }
    /// Shared mode's commit lock on `path` (created if absent, never truncated or deleted).
    /// Default: unsupported, like [`Vfs::try_lock_shared`].
    fn commit_lock(&self, _path: &Path) -> io::Result<Box<dyn CommitLock>> {
        Err(io::Error::new(io::ErrorKind::Unsupported, "commit locks are not supported by this filesystem"))
    }
    /// Shared counterpart of [`Vfs::try_lock_dir`].
    fn try_lock_dir_shared(&self, _dir: &Path) -> io::Result<Option<LockGuard>> {
        Ok(Some(Box::new(())))
    }
    /// A stable identity for `dir` (the process-wide open-store set is keyed by it).
    fn canonicalize(&self, dir: &Path) -> io::Result<PathBuf>;
}

/// Read exactly `buf.len()` bytes at `offset`; short files give `UnexpectedEof`.
pub fn read_exact_at(f: &dyn VFile, mut buf: &mut [u8], mut offset: u64) -> io::Result<()> {
    while !buf.is_empty() {
        match f.read_at(buf, offset) {
            Ok(0) => return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "short read")),
            Ok(n) => {
                buf = &mut buf[n..];
                offset += n as u64;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

pub fn write_all_at(f: &dyn VFile, mut buf: &[u8], mut offset: u64) -> io::Result<()> {
    while !buf.is_empty() {
        match f.write_at(buf, offset) {
            Ok(0) => return Err(io::Error::new(io::ErrorKind::WriteZero, "write returned 0")),
            Ok(n) => {
                buf = &buf[n..];
                offset += n as u64;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Creates `dir` and any missing parents so that they survive a power loss: a new directory's
/// name lives in its parent, which needs its own fsync (a store acknowledged inside a directory
/// whose entry was never synced can vanish whole).
pub fn create_dir_durable(vfs: &dyn Vfs, dir: &Path) -> io::Result<()> {
    let mut missing = Vec::new();
    let mut p = dir;
    while !vfs.exists(p)? {
        missing.push(p);
        match p.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => p = parent,
            _ => break,
        }
    }
    if missing.is_empty() {
        return Ok(());
    }
    vfs.create_dir_all(dir)?;
    for created in missing.iter().rev() {
        let parent = created.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        vfs.sync_dir(parent)?;
    }
    Ok(())
}

/// Takes `f`'s lock without waiting, exclusive or `shared`: `None` while another holds it.
fn try_flock(f: File, shared: bool) -> io::Result<Option<LockGuard>> {
    match if shared { f.try_lock_shared() } else { f.try_lock() } {
        Ok(()) => Ok(Some(Box::new(f))),
        Err(std::fs::TryLockError::WouldBlock) => Ok(None),
        Err(std::fs::TryLockError::Error(e)) => Err(e),
    }
}

/// `LOCK` opened to be locked: created when missing, never truncated. Without `FILE_SHARE_DELETE`
/// (Windows): while held, LOCK cannot be deleted or replaced.
fn try_lock_file(path: &Path, shared: bool) -> io::Result<Option<LockGuard>> {
    let mut o = OpenOptions::new();
    o.read(true).write(true).create(true).truncate(false);
    #[cfg(windows)]
    std::os::windows::fs::OpenOptionsExt::share_mode(&mut o, 0x1 | 0x2);
    try_flock(o.open(path)?, shared)
}

/// flock on the directory's own fd: deleting or replacing LOCK does not free it (Unix; elsewhere
/// no directory lock is taken).
#[cfg_attr(not(unix), allow(clippy::unnecessary_wraps))] // Unix's signature; elsewhere it cannot fail
fn try_lock_dir_fd(dir: &Path, shared: bool) -> io::Result<Option<LockGuard>> {
    #[cfg(unix)]
    {
        try_flock(File::open(dir)?, shared)
    }
    #[cfg(not(unix))]
    {
        let _ = (dir, shared);
        Ok(Some(Box::new(())))
    }
}

/// The real filesystem through std.
#[derive(Debug, Default, Clone, Copy)]
pub struct StdFs;

/// `flock` (Unix) / `LockFileEx` (Windows) through std's `File::lock`.
#[derive(Debug)]
struct StdCommitLock(File);

impl CommitLock for StdCommitLock {
    fn lock(&self) -> io::Result<()> {
        self.0.lock()
    }
    fn try_lock(&self) -> io::Result<bool> {
        match self.0.try_lock() {
            Ok(()) => Ok(true),
            Err(std::fs::TryLockError::WouldBlock) => Ok(false),
            Err(std::fs::TryLockError::Error(e)) => Err(e),
        }
    }
    fn unlock(&self) {
        let _ = self.0.unlock();
    }
}

#[derive(Debug)]
struct StdFile(File);

impl VFile for StdFile {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        #[cfg(unix)]
        {
            std::os::unix::fs::FileExt::read_at(&self.0, buf, offset)
        }
        #[cfg(windows)]
        {
            std::os::windows::fs::FileExt::seek_read(&self.0, buf, offset)
        }
    }
    fn write_at(&self, buf: &[u8], offset: u64) -> io::Result<usize> {
        #[cfg(unix)]
        {
            std::os::unix::fs::FileExt::write_at(&self.0, buf, offset)
        }
        #[cfg(windows)]
        {
            std::os::windows::fs::FileExt::seek_write(&self.0, buf, offset)
        }
    }
    fn sync_data(&self) -> io::Result<()> {
        self.0.sync_data()
    }
    fn set_len(&self, len: u64) -> io::Result<()> {
        self.0.set_len(len)
    }
    fn len(&self) -> io::Result<u64> {
        // Without asking for timestamps: see `os::statx_field`.
        #[cfg(all(target_os = "linux", any(target_env = "gnu", target_env = "musl")))]
        if let Some(st) = crate::io::os::statx_field(&self.0, libc::STATX_SIZE) {
            return Ok(st.stx_size);
        }
        Ok(self.0.metadata()?.len())
    }
    fn unlinked(&self) -> io::Result<bool> {
        // Asked after every commit's fsync: without timestamps, or the next fdatasync writes
        // the inode too (see `os::statx_field`).
        #[cfg(all(target_os = "linux", any(target_env = "gnu", target_env = "musl")))]
        if let Some(st) = crate::io::os::statx_field(&self.0, libc::STATX_NLINK) {
            return Ok(st.stx_nlink == 0);
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            Ok(self.0.metadata()?.nlink() == 0)
        }
        #[cfg(not(unix))]
        {
            Ok(false)
        }
    }
    #[cfg(unix)]
    fn map_read_only(&self, len: u64) -> Option<Mapped> {
        Mapped::of(&self.0, usize::try_from(len).ok()?)
    }
}

impl Vfs for StdFs {
    fn open(&self, path: &Path, mode: OpenMode) -> io::Result<Arc<dyn VFile>> {
        let mut o = OpenOptions::new();
        match mode {
            OpenMode::Read => o.read(true),
            OpenMode::ReadWrite => o.read(true).write(true),
            OpenMode::CreateNew => o.read(true).write(true).create_new(true),
        };
        Ok(Arc::new(StdFile(o.open(path)?)))
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        std::fs::rename(from, to)
    }
    fn remove(&self, path: &Path) -> io::Result<()> {
        std::fs::remove_file(path)
    }
    fn hard_link(&self, from: &Path, to: &Path) -> io::Result<()> {
        std::fs::hard_link(from, to)
    }
    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        // Windows cannot open a directory as a file without backup semantics; NTFS journals
        // the entry together with the file, so the directory barrier is skipped there only.
        #[cfg(not(windows))]
        {
            File::open(dir)?.sync_all()
        }
        #[cfg(windows)]
        {
            let _ = dir;
            Ok(())
        }
    }
    fn list(&self, dir: &Path) -> io::Result<Vec<String>> {
        let mut out = Vec::new();
        for e in std::fs::read_dir(dir)? {
            let e = e?;
            if let Ok(name) = e.file_name().into_string() {
                out.push(name);
            }
        }
        Ok(out)
    }
    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        std::fs::create_dir_all(dir)
    }
    fn exists(&self, path: &Path) -> io::Result<bool> {
        path.try_exists()
    }
    fn try_lock(&self, path: &Path) -> io::Result<Option<LockGuard>> {
        try_lock_file(path, false)
    }
    fn try_lock_dir(&self, dir: &Path) -> io::Result<Option<LockGuard>> {
        try_lock_dir_fd(dir, false)
    }
    fn try_lock_shared(&self, path: &Path) -> io::Result<Option<LockGuard>> {
        try_lock_file(path, true)
    }
    fn commit_lock(&self, path: &Path) -> io::Result<Box<dyn CommitLock>> {
        let f = OpenOptions::new().read(true).write(true).create(true).truncate(false).open(path)?;
        Ok(Box::new(StdCommitLock(f)))
    }
    fn try_lock_dir_shared(&self, dir: &Path) -> io::Result<Option<LockGuard>> {
        try_lock_dir_fd(dir, true)
    }
    fn canonicalize(&self, dir: &Path) -> io::Result<PathBuf> {
        std::fs::canonicalize(dir)
    }
}

/// A file seen only up to `len`: a lockless catch-up reads the durable frames and nothing a
/// live writer may be writing past them (and a paged hint's fallback scan what open saw).
#[derive(Debug)]
pub(crate) struct Bounded<'a> {
    pub inner: &'a dyn VFile,
    pub len: u64,
}

impl VFile for Bounded<'_> {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        let room = self.len.saturating_sub(offset).min(buf.len() as u64) as usize;
        if room == 0 {
            return Ok(0);
        }
        self.inner.read_at(&mut buf[..room], offset)
    }
    fn write_at(&self, _: &[u8], _: u64) -> io::Result<usize> {
        Err(io::Error::other("read-only view"))
    }
    fn sync_data(&self) -> io::Result<()> {
        Ok(())
    }
    fn set_len(&self, _: u64) -> io::Result<()> {
        Err(io::Error::other("read-only view"))
    }
    fn len(&self) -> io::Result<u64> {
        Ok(self.inner.len()?.min(self.len))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The length and link count the commit path asks for (statx of one field on Linux, the
    /// standard library's metadata elsewhere) are the file's, before and after its unlink.
    #[test]
    fn length_and_link_count_are_the_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let f = StdFs.open(&path, OpenMode::CreateNew).unwrap();
        assert_eq!(f.len().unwrap(), 0);
        f.write_at(&[7u8; 5000], 100).unwrap();
        assert_eq!(f.len().unwrap(), 5100);
        assert!(!f.unlinked().unwrap());
        std::fs::remove_file(&path).unwrap();
        assert_eq!(f.len().unwrap(), 5100);
        #[cfg(unix)]
        assert!(f.unlinked().unwrap());
    }

    /// On Linux the answer comes from statx itself, not the fallback: a statx that always
    /// failed would silently bring back the timestamp query (see `os::statx_field`).
    #[cfg(all(target_os = "linux", any(target_env = "gnu", target_env = "musl")))]
    #[test]
    fn linux_asks_statx_for_one_field() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let file = std::fs::File::create(&path).unwrap();
        std::io::Write::write_all(&mut &file, &[1u8; 300]).unwrap();
        assert_eq!(crate::io::os::statx_field(&file, libc::STATX_SIZE).map(|s| s.stx_size), Some(300));
        assert_eq!(crate::io::os::statx_field(&file, libc::STATX_NLINK).map(|s| s.stx_nlink), Some(1));
    }
}
