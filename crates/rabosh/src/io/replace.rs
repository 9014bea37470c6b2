//! A small file replaced whole (MANIFEST, KEY, hints, the lock holder's record): written
//! beside it under a temporary name, then renamed over it.

use crate::error::{Error, Result};
use crate::io::vfs::{OpenMode, VFile, Vfs, write_all_at};
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
    replace_file_with(vfs, dir, (name, tmp_name), fsyncs, &mut |f| {
        write_all_at(f, bytes, 0).map_err(|e| Error::io("write", &tmp, e))
    })
}

/// [`replace_file`] with the temporary file's bytes written by `fill` (a hint streamed in
/// blocks, never whole in memory).
pub fn replace_file_with(
    vfs: &dyn Vfs,
    dir: &Path,
    (name, tmp_name): (&str, &str),
    fsyncs: Option<&dyn Fn()>,
    fill: &mut dyn FnMut(&dyn VFile) -> Result<()>,
) -> Result<()> {
    let tmp = dir.join(tmp_name);
    let dst = dir.join(name);
    if vfs.exists(&tmp).map_err(|e| Error::io("stat", &tmp, e))? {
        vfs.remove(&tmp).map_err(|e| Error::io("remove", &tmp, e))?;
    }
    let f = vfs.open(&tmp, OpenMode::CreateNew).map_err(|e| Error::io("create", &tmp, e))?;
    fill(&*f)?;
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
