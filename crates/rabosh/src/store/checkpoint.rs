//! checkpoint(target): seal the active segment, pin a version, hard-link (or copy) every sealed
//! segment and hint, fsync each and the directory, write the MANIFEST last. Until that MANIFEST
//! exists the target is visibly not a store and `open()` refuses it.

use crate::error::{Error, Result};
use crate::io::vfs::{OpenMode, Vfs, read_exact_at, write_all_at};
use crate::log::segment::{hint_name, seg_name};
use crate::store::handle::Store;
use std::path::Path;

impl Store {
    /// Write a durable, openable copy of the current state into `target` (empty or absent).
    pub fn checkpoint(&self, target: impl AsRef<Path>) -> Result<CheckpointInfo> {
        let _guard = self.commit_guard()?;
        checkpoint(self, target.as_ref())
    }
}

fn checkpoint(store: &Store, target: &Path) -> Result<CheckpointInfo> {
    let mut ours = false;
    let r = checkpoint_inner(store, target, &mut ours);
    if ours && r.is_err() {
        // The failing step may have come after the MANIFEST rename (its directory fsync):
        // the caller was told it failed, so the target must not open as a store either.
        let _ = store.vfs.remove(&target.join(crate::log::manifest::MANIFEST));
        let _ = store.vfs.remove(&target.join(crate::log::manifest::MANIFEST_TMP));
    }
    r
}

/// `ours` turns true once the target is known empty: only then may a failure clean it up.
fn checkpoint_inner(store: &Store, target: &Path, ours: &mut bool) -> Result<CheckpointInfo> {
    let vfs = &*store.vfs;
    let (version, manifest) = {
        let mut w = store.writable()?;
        store.settle(&mut w)?;
        if w.log().len > crate::log::format::SEG_HEADER as u64 {
            store.rotate(&mut w)?;
        }
        let mut m = w.manifest.clone();
        m.segments.pop(); // the (now empty) active segment stays behind
        // Holding the version pins every sealed segment: compaction cannot unlink one mid-copy.
        (store.current.load_full(), m)
    };
    if vfs.exists(target).map_err(|e| Error::io("stat", target, e))? {
        let names = vfs.list(target).map_err(|e| Error::io("list", target, e))?;
        if !names.is_empty() {
            return Err(Error::InvalidArgument(format!(
                "checkpoint target {} must be empty or absent",
                target.display()
            )));
        }
    } else {
        crate::io::vfs::create_dir_durable(vfs, target).map_err(|e| Error::io("create directory", target, e))?;
    }
    *ours = true;
    let mut hard_linked = true;
    for sm in &manifest.segments {
        for name in [seg_name(sm.number), hint_name(sm.number)] {
            let src = store.dir.join(&name);
            let dst = target.join(&name);
            if name.ends_with(".hint") && !vfs.exists(&src).unwrap_or(false) {
                continue; // derived data: the checkpoint's open rebuilds it
            }
            if vfs.hard_link(&src, &dst).is_err() {
                hard_linked = false;
                copy(vfs, &src, &dst)?;
            }
            let f = vfs.open(&dst, OpenMode::ReadWrite).map_err(|e| Error::io("open", &dst, e))?;
            f.sync_data().map_err(|e| Error::io("fsync", &dst, e))?;
            store.counters.fsync();
        }
    }
    if store.is_encrypted() {
        // Same data key, same wrapping: the checkpoint opens with the store's key. Before the
        // MANIFEST, like every file it needs.
        let key =
            crate::crypto::keyfile::read_small(vfs, &store.dir, crate::crypto::keyfile::KEY)?.ok_or_else(|| {
                Error::Corruption {
                    file: store.dir.join(crate::crypto::keyfile::KEY),
                    offset: 0,
                    reason: "the key file of an open encrypted store is missing".into(),
                }
            })?;
        crate::crypto::keyfile::write(vfs, target, &key, &store.fsyncs())?;
    }
    vfs.sync_dir(target).map_err(|e| Error::io("fsync dir", target, e))?;
    manifest.write(vfs, target, &store.fsyncs())?;
    Ok(CheckpointInfo { seq: version.seq, hard_linked })
}

fn copy(vfs: &dyn Vfs, src: &Path, dst: &Path) -> Result<()> {
    let from = vfs.open(src, OpenMode::Read).map_err(|e| Error::io("open", src, e))?;
    let to = vfs.open(dst, OpenMode::CreateNew).map_err(|e| Error::io("create", dst, e))?;
    let len = from.len().map_err(|e| Error::io("stat", src, e))?;
    let mut buf = vec![0u8; 1 << 20];
    let mut off = 0;
    while off < len {
        let n = ((len - off) as usize).min(buf.len());
        read_exact_at(&*from, &mut buf[..n], off).map_err(|e| Error::io("read", src, e))?;
        write_all_at(&*to, &buf[..n], off).map_err(|e| Error::io("write", dst, e))?;
        off += n as u64;
    }
    Ok(())
}

/// What a checkpoint produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckpointInfo {
    /// The sequence number of the last commit the checkpoint holds.
    pub seq: u64,
    /// True when every data file was hard-linked rather than copied.
    pub hard_linked: bool,
}
