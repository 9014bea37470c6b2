//! One writer per directory: an OS lock on `LOCK` (never deleted, never stolen) and, where the
//! OS allows, on the directory itself (so a deleted or replaced LOCK frees nothing), a holder record
//! in `LOCK.holder` (a Windows lock is mandatory, so the record cannot live in the locked file),
//! and a process-wide set of open directories so a second open in this process fails on every OS.

use crate::error::{Error, LockHolder, Result};
use crate::io::os::{host_name, process_start_ms};
use crate::io::replace::replace_file;
use crate::io::vfs::{LockGuard, OpenMode, Vfs, read_exact_at};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

pub const LOCK: &str = "LOCK";
pub const HOLDER: &str = "LOCK.holder";
pub const HOLDER_TMP: &str = "LOCK.holder.tmp";

fn open_dirs() -> &'static Mutex<HashSet<PathBuf>> {
    static S: OnceLock<Mutex<HashSet<PathBuf>>> = OnceLock::new();
    S.get_or_init(Default::default)
}

/// Held for the store's lifetime; dropping releases both the OS lock and the in-process claim.
pub struct DirLock {
    /// The in-process claim; `None` in shared mode (several handles may share the directory).
    canon: Option<PathBuf>,
    vfs: Arc<dyn Vfs>,
    dir: PathBuf,
    _guard: LockGuard,
    _dir_guard: LockGuard,
}

impl Drop for DirLock {
    fn drop(&mut self) {
        // Blank the record while the lock is still held (the guard drops after this body): a
        // record left behind would name a holder that may still run — this very process, after
        // a close and a later open — and a contender racing the next winner could report it.
        let Some(canon) = &self.canon else {
            // Shared: other holders may still run; the record names the last one to open.
            return;
        };
        let _ = replace_file(&*self.vfs, &self.dir, HOLDER, HOLDER_TMP, b"", None);
        open_dirs().lock().unwrap_or_else(std::sync::PoisonError::into_inner).remove(canon);
    }
}

pub fn acquire(vfs: &Arc<dyn Vfs>, dir: &Path) -> Result<DirLock> {
    let canon = vfs.canonicalize(dir).map_err(|e| Error::io("canonicalize", dir, e))?;
    if !open_dirs().lock().unwrap_or_else(std::sync::PoisonError::into_inner).insert(canon.clone()) {
        let mut holder = read_holder_retrying(&**vfs, dir);
        holder.this_process = true;
        holder.is_running = true;
        if holder.pid.is_none() {
            holder.pid = Some(std::process::id());
        }
        return Err(Error::Locked { dir: dir.to_path_buf(), holder });
    }
    let claim = Claim(Some(canon.clone()));
    let path = dir.join(LOCK);
    let guard = match vfs.try_lock(&path) {
        Ok(Some(g)) => g,
        Ok(None) => {
            return Err(Error::Locked { dir: dir.to_path_buf(), holder: read_holder_retrying(&**vfs, dir) });
        }
        Err(e) => return Err(Error::io("lock", &path, e)),
    };
    // A holder whose LOCK was deleted (or replaced) still holds the directory.
    let dir_guard = match vfs.try_lock_dir(dir) {
        Ok(Some(g)) => g,
        Ok(None) => {
            return Err(Error::Locked { dir: dir.to_path_buf(), holder: read_holder_retrying(&**vfs, dir) });
        }
        Err(e) => return Err(Error::io("lock", dir, e)),
    };
    // Not fsynced: losing the record costs an error message, never data.
    let me = own_record();
    let _ = replace_file(&**vfs, dir, HOLDER, HOLDER_TMP, me.as_bytes(), None);
    std::mem::forget(claim);
    Ok(DirLock { canon: Some(canon), vfs: vfs.clone(), dir: dir.to_path_buf(), _guard: guard, _dir_guard: dir_guard })
}

/// Shared mode: a shared lock on `LOCK` and the directory. Any number of shared holders (in
/// this process or others) coexist; an exclusive holder refuses them and they refuse it.
pub fn acquire_shared(vfs: &Arc<dyn Vfs>, dir: &Path) -> Result<DirLock> {
    let path = dir.join(LOCK);
    let locked = || Error::Locked { dir: dir.to_path_buf(), holder: read_holder_retrying(&**vfs, dir) };
    let guard = match vfs.try_lock_shared(&path) {
        Ok(Some(g)) => g,
        Ok(None) => return Err(locked()),
        Err(e) => return Err(Error::io("lock", &path, e)),
    };
    let dir_guard = match vfs.try_lock_dir_shared(dir) {
        Ok(Some(g)) => g,
        Ok(None) => return Err(locked()),
        Err(e) => return Err(Error::io("lock", dir, e)),
    };
    // An exclusive contender names the last shared holder to open (best effort, never fsynced).
    let _ = replace_file(&**vfs, dir, HOLDER, HOLDER_TMP, own_record().as_bytes(), None);
    Ok(DirLock { canon: None, vfs: vfs.clone(), dir: dir.to_path_buf(), _guard: guard, _dir_guard: dir_guard })
}

/// Releases the in-process claim if acquiring fails half-way.
struct Claim(Option<PathBuf>);
impl Drop for Claim {
    fn drop(&mut self) {
        if let Some(c) = self.0.take() {
            open_dirs().lock().unwrap_or_else(std::sync::PoisonError::into_inner).remove(&c);
        }
    }
}

fn own_record() -> String {
    let pid = std::process::id();
    let started = process_start_ms(pid).unwrap_or(0);
    let host = host_name();
    format!("pid={pid}\nhost={host}\nstarted_ms={started}\n")
}

fn parse_holder(text: &str) -> LockHolder {
    let mut h = LockHolder { pid: None, host: None, started_at_ms: None, is_running: false, this_process: false };
    for line in text.lines() {
        match line.split_once('=') {
            Some(("pid", v)) => h.pid = v.trim().parse().ok(),
            Some(("host", v)) => h.host = Some(v.trim().to_string()),
            Some(("started_ms", v)) => h.started_at_ms = v.trim().parse().ok(),
            _ => {}
        }
    }
    h
}

fn read_holder(vfs: &dyn Vfs, dir: &Path) -> Option<LockHolder> {
    let path = dir.join(HOLDER);
    let f = vfs.open(&path, OpenMode::Read).ok()?;
    let len = f.len().ok()?.min(4096);
    let mut buf = vec![0u8; len as usize];
    read_exact_at(&*f, &mut buf, 0).ok()?;
    let h = parse_holder(&String::from_utf8_lossy(&buf));
    h.pid.map(|_| h)
}

/// Judges whether the recorded holder still runs: same host, pid alive, same start time
/// (pids are reused; start times have one-second granularity).
fn judge(mut h: LockHolder) -> LockHolder {
    let own_host = host_name();
    let pid = h.pid.unwrap_or(0);
    h.this_process = pid == std::process::id();
    let same_host = h.host.as_deref() == Some(own_host.as_str());
    h.is_running = same_host
        && match (process_start_ms(pid), h.started_at_ms) {
            (Some(now), Some(rec)) => now.abs_diff(rec) <= 2000,
            _ => false,
        };
    h
}

/// The winner of the lock may not have written its record yet: give it about a second, and
/// prefer a record whose holder runs over a stale one left by an earlier holder.
fn read_holder_retrying(vfs: &dyn Vfs, dir: &Path) -> LockHolder {
    let deadline = Instant::now() + Duration::from_secs(1);
    let mut last = None;
    loop {
        if let Some(h) = read_holder(vfs, dir) {
            let j = judge(h);
            if j.is_running {
                return j;
            }
            last = Some(j);
        }
        if Instant::now() >= deadline {
            break;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    last.unwrap_or(LockHolder { pid: None, host: None, started_at_ms: None, is_running: false, this_process: false })
}
