//! What open does about encryption: the key given judged against the store (before anything
//! is written), a killed `reencrypt`'s `KEY.next` settled, and the key rotated.

use crate::crypto::crypt::Crypt;
use crate::crypto::encryption::Encryption;
use crate::crypto::keyfile::{DataKey, KEY, KEY_NEXT, decode, decode_next, encode, finish_next, read_small, write};
use crate::error::{Error, Result};
use crate::io::vfs::{OpenMode, Vfs, read_exact_at};
use crate::store::handle::Store;
use crate::store::options::Options;
use std::path::Path;
use std::sync::Arc;

/// What open does about encryption, decided before anything is written.
pub(crate) enum KeyState {
    Plain,
    /// An encrypted store's data key, unwrapped.
    Open(DataKey),
    /// A store about to be created encrypted: this data key's KEY file is written (under the
    /// lock, before the MANIFEST) when the store is initialised.
    Create(DataKey),
}

impl KeyState {
    pub fn into_data_key(self) -> Option<DataKey> {
        match self {
            KeyState::Plain => None,
            KeyState::Open(dk) | KeyState::Create(dk) => Some(dk),
        }
    }

    pub fn crypt(&self) -> Option<Arc<Crypt>> {
        match self {
            KeyState::Plain => None,
            KeyState::Open(dk) | KeyState::Create(dk) => Some(dk.crypt.clone()),
        }
    }
}

/// Judges the key given against the store in `dir`: `KeyRequired`, `WrongKey`, `NotEncrypted`,
/// or what to open with. Reads only. A KEY without a MANIFEST (a create killed between the two)
/// protects no data: a plain open removes it at initialisation, a keyed one must still open it.
pub(crate) fn resolve(vfs: &dyn Vfs, dir: &Path, options: &Options, is_store: bool) -> Result<KeyState> {
    let file = effective_key_file(vfs, dir, is_store)?;
    let dir_buf = || dir.to_path_buf();
    if file.is_none() && is_store {
        check_segments_plain(vfs, dir)?;
    }
    match (file, &options.encryption) {
        (None, None) => Ok(KeyState::Plain),
        (Some(_), None) if !is_store => Ok(KeyState::Plain),
        (Some(_), None) => Err(Error::KeyRequired { dir: dir_buf() }),
        (None, Some(_)) if is_store => Err(Error::NotEncrypted { dir: dir_buf() }),
        (None, Some(_)) => Ok(KeyState::Create(DataKey::fresh()?)),
        (Some(b), Some(host)) => match decode(&b, host, &dir.join(KEY))? {
            Some(dk) => Ok(KeyState::Open(dk)),
            None => Err(Error::WrongKey { dir: dir_buf() }),
        },
    }
}

/// A store without a KEY file whose MANIFEST (version 4) or newest segment says it is encrypted
/// lost its KEY file:
/// `Corruption` naming it (not `NotEncrypted`, which would send the user the wrong way).
fn check_segments_plain(vfs: &dyn Vfs, dir: &Path) -> Result<()> {
    let Ok(m) = crate::log::manifest::Manifest::read(vfs, dir) else { return Ok(()) };
    let newest_sealed = || {
        let Some(last) = m.segments.last() else { return false };
        let path = dir.join(crate::log::segment::seg_name(last.number));
        let Ok(f) = vfs.open(&path, OpenMode::Read) else { return false };
        let mut h = [0u8; crate::log::format::SEG_HEADER];
        read_exact_at(&*f, &mut h, 0).is_ok() && crate::log::format::decode_seg_header(&h).is_ok_and(|h| h.encrypted)
    };
    if m.encrypted || newest_sealed() {
        return Err(Error::Corruption {
            file: dir.join(KEY),
            offset: 0,
            reason: "the store is encrypted but its key file is missing".into(),
        });
    }
    Ok(())
}

/// The KEY file that describes the store's segments: `KEY`, unless a `reencrypt` was killed
/// after its MANIFEST swap, when `KEY.next` says what applies (FORMAT.md, "Re-encryption").
fn effective_key_file(vfs: &dyn Vfs, dir: &Path, is_store: bool) -> Result<Option<Vec<u8>>> {
    let Some(next) = read_small(vfs, dir, KEY_NEXT)? else { return read_small(vfs, dir, KEY) };
    if !is_store {
        return read_small(vfs, dir, KEY);
    }
    let (from, key_file) = decode_next(&next, &dir.join(KEY_NEXT))?;
    let m = crate::log::manifest::Manifest::read(vfs, dir)?;
    if m.segments.first().is_some_and(|s| s.number >= from) { Ok(key_file) } else { read_small(vfs, dir, KEY) }
}

/// Under the lock at open: a killed `reencrypt`'s `KEY.next` is applied (its swap happened)
/// or dropped (it did not). Only after [`resolve`] accepted the key given.
pub(crate) fn settle_next(vfs: &dyn Vfs, dir: &Path, fsyncs: &dyn Fn()) -> Result<()> {
    let Some(next) = read_small(vfs, dir, KEY_NEXT)? else { return Ok(()) };
    let (from, _) = decode_next(&next, &dir.join(KEY_NEXT))?;
    let m = crate::log::manifest::Manifest::read(vfs, dir)?;
    if m.segments.first().is_some_and(|s| s.number >= from) {
        finish_next(vfs, dir, fsyncs)
    } else {
        let path = dir.join(KEY_NEXT);
        vfs.remove(&path).map_err(|e| Error::io("remove", &path, e))?;
        vfs.sync_dir(dir).map_err(|e| Error::io("fsync dir", dir, e))
    }
}

impl Store {
    /// Whether this store is encrypted (opened with `Options::encryption`).
    pub fn is_encrypted(&self) -> bool {
        self.data_key.is_some()
    }

    /// Rewraps the data key under `new`: crash-safe (the KEY file is replaced by an atomic
    /// rename, so after a kill the old key or the new one opens the store, never neither); no
    /// data is rewritten. `NotEncrypted` on a plain store. In shared mode the other processes
    /// keep working (the data key is unchanged); the next open anywhere needs `new`. A copy of
    /// the old KEY file still opens the store with the old key: [`crate::store::reencrypt`] re-keys.
    #[allow(clippy::needless_pass_by_value)] // the key is handed over: zeroized when this call drops it
    pub fn rotate_key(&self, new: Encryption) -> Result<()> {
        let Some(dk) = &self.data_key else {
            return Err(Error::NotEncrypted { dir: self.dir.clone() });
        };
        let _guard = self.commit_guard()?;
        let _w = self.writable()?;
        let bytes = encode(&new, dk)?;
        write(&*self.vfs, &self.dir, &bytes, &self.fsyncs())
    }
}
