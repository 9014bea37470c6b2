//! A small file replaced whole (MANIFEST, KEY, hints, the lock holder's record): written
//! beside it under a temporary name, then renamed over it.

use crate::error::{Error, Result};
use crate::io::vfs::{OpenMode, Vfs, write_all_at};
use std::path::Path;

/// tmp → write → fsync → rename → fsync dir.
pub fn write_atomic(
    vfs: &dyn Vfs,
    dir: &Path,
    name: &str,
    tmp_name: &str,
    bytes: &[u8],
    fsyncs: &dyn Fn(),
) -> Result<()> {
    replace_file(vfs, dir, name, tmp_name, bytes, Some(fsyncs))
}

/// tmp → write → rename, with the fsyncs only when `fsyncs` is given.
pub fn replace_file(
    vfs: &dyn Vfs,
    dir: &Path,
    name: &str,
    tmp_name: &str,
    bytes: &[u8],
    fsyncs: Option<&dyn Fn()>,
) -> Result<()> {
    let tmp = dir.join(tmp_name);
    let dst = dir.join(name);
    if vfs.exists(&tmp).map_err(|e| Error::io("stat", &tmp, e))? {
        vfs.remove(&tmp).map_err(|e| Error::io("remove", &tmp, e))?;
    }
    let f = vfs.open(&tmp, OpenMode::CreateNew).map_err(|e| Error::io("create", &tmp, e))?;
    write_all_at(&*f, bytes, 0).map_err(|e| Error::io("write", &tmp, e))?;
    if let Some(fsyncs) = fsyncs {
        f.sync_data().map_err(|e| Error::io("fsync", &tmp, e))?;
        fsyncs();
    }
    drop(f);
    vfs.rename(&tmp, &dst).map_err(|e| Error::io("rename", &dst, e))?;
    if let Some(fsyncs) = fsyncs {
        vfs.sync_dir(dir).map_err(|e| Error::io("fsync dir", dir, e))?;
        fsyncs();
    }
    Ok(())
}
