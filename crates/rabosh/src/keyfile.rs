//! The `KEY` file: the store's random data key wrapped (sealed) by the host's key, the check at
//! open that the right key was given, and rotation (a rewrap: no data is rewritten).
//!
//! ```text
//! 0   magic    8  "RABOSHKY"
//! 8   version  u32  1
//! 12  flags    u32  0
//! 16  wrapped  24 + 32 + 16  the data key sealed by the host key, AD = "RBK1" ‖ bytes 0..16
//! 88  crc      u32  CRC-32C of bytes 0..88 (damage reads as Corruption, not as a wrong key)
//! ```

use crate::crypt::{AD_KEY, Crypt, OVERHEAD, random};
use crate::format::{crc, put_u32};
use crate::vfs::{OpenMode, Vfs, read_exact_at};
use crate::{Encryption, Error, Options, Result, Store};
use std::path::Path;
use std::sync::Arc;

pub const KEY: &str = "KEY";
pub const KEY_TMP: &str = "KEY.tmp";
/// A `reencrypt` in progress: the mode that applies once the MANIFEST lists its segments.
pub const KEY_NEXT: &str = "KEY.next";
pub const KEY_NEXT_TMP: &str = "KEY.next.tmp";
const MAGIC: &[u8; 8] = b"RABOSHKY";
const VERSION: u32 = 1;
const HEAD: usize = 16;
pub const KEY_LEN: usize = HEAD + 32 + OVERHEAD + 4;

/// The data key and the cipher built from it.
pub(crate) struct DataKey {
    pub key: zeroize::Zeroizing<[u8; 32]>,
    pub crypt: Arc<Crypt>,
}

impl DataKey {
    pub fn fresh() -> Result<DataKey> {
        let key = random::<32>()?;
        Ok(DataKey { crypt: Arc::new(Crypt::new(&key)), key })
    }
    fn from_bytes(b: &[u8]) -> Option<DataKey> {
        let key: [u8; 32] = b.try_into().ok()?;
        let key = zeroize::Zeroizing::new(key);
        Some(DataKey { crypt: Arc::new(Crypt::new(&key)), key })
    }
}

fn head() -> Vec<u8> {
    let mut h = Vec::with_capacity(KEY_LEN);
    h.extend_from_slice(MAGIC);
    put_u32(&mut h, VERSION);
    put_u32(&mut h, 0);
    h
}

/// The KEY file's bytes: `dk` wrapped by `host`.
pub(crate) fn encode(host: &Encryption, dk: &DataKey) -> Result<Vec<u8>> {
    let mut out = head();
    let ad = out.clone();
    Crypt::new(host.bytes()).seal_into(&[AD_KEY, &ad], &dk.key[..], &mut out)?;
    let c = crc(&[&out]);
    put_u32(&mut out, c);
    debug_assert_eq!(out.len(), KEY_LEN);
    Ok(out)
}

/// Unwraps a KEY file's bytes with `host`: `Ok(None)` when the key does not open it.
pub(crate) fn decode(b: &[u8], host: &Encryption, path: &Path) -> Result<Option<DataKey>> {
    let corrupt = |reason: &str| Error::Corruption { file: path.to_path_buf(), offset: 0, reason: reason.into() };
    if b.len() < HEAD || &b[..8] != MAGIC {
        return Err(corrupt("not a rabosh key file"));
    }
    let version = u32::from_le_bytes(b[8..12].try_into().unwrap());
    if version > VERSION {
        return Err(Error::Unsupported { file: path.to_path_buf(), version });
    }
    if b.len() != KEY_LEN || crc(&[&b[..KEY_LEN - 4]]) != u32::from_le_bytes(b[KEY_LEN - 4..].try_into().unwrap()) {
        return Err(corrupt("key file checksum mismatch"));
    }
    if b[12..16] != [0; 4] {
        return Err(corrupt("key file flags are not zero"));
    }
    let plain = Crypt::new(host.bytes()).open(&[AD_KEY, &b[..HEAD]], &b[HEAD..KEY_LEN - 4]);
    Ok(plain.map(zeroize::Zeroizing::new).and_then(|p| DataKey::from_bytes(&p)))
}

/// The bytes of `name` in `dir`, or `None` when there is no such file.
pub(crate) fn read_small(vfs: &dyn Vfs, dir: &Path, name: &str) -> Result<Option<Vec<u8>>> {
    let path = dir.join(name);
    let f = match vfs.open(&path, OpenMode::Read) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io("open", &path, e)),
    };
    let len = f.len().map_err(|e| Error::io("stat", &path, e))?;
    if len > 4096 {
        return Err(Error::Corruption { file: path, offset: 0, reason: "key file too large".into() });
    }
    let mut buf = vec![0u8; len as usize];
    read_exact_at(&*f, &mut buf, 0).map_err(|e| Error::io("read", &path, e))?;
    Ok(Some(buf))
}

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
    let Ok(m) = crate::manifest::Manifest::read(vfs, dir) else { return Ok(()) };
    let newest_sealed = || {
        let Some(last) = m.segments.last() else { return false };
        let path = dir.join(crate::segment::seg_name(last.number));
        let Ok(f) = vfs.open(&path, OpenMode::Read) else { return false };
        let mut h = [0u8; crate::format::SEG_HEADER];
        read_exact_at(&*f, &mut h, 0).is_ok() && crate::format::decode_seg_header(&h).is_ok_and(|h| h.encrypted)
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
    let (from, key_file) = crate::reencrypt::decode_next(&next, &dir.join(KEY_NEXT))?;
    let m = crate::manifest::Manifest::read(vfs, dir)?;
    if m.segments.first().is_some_and(|s| s.number >= from) { Ok(key_file) } else { read_small(vfs, dir, KEY) }
}

/// Under the lock at open: a killed `reencrypt`'s `KEY.next` is applied (its swap happened)
/// or dropped (it did not). Only after [`resolve`] accepted the key given.
pub(crate) fn settle_next(vfs: &dyn Vfs, dir: &Path, fsyncs: &dyn Fn()) -> Result<()> {
    let Some(next) = read_small(vfs, dir, KEY_NEXT)? else { return Ok(()) };
    let (from, _) = crate::reencrypt::decode_next(&next, &dir.join(KEY_NEXT))?;
    let m = crate::manifest::Manifest::read(vfs, dir)?;
    if m.segments.first().is_some_and(|s| s.number >= from) {
        crate::reencrypt::finish_next(vfs, dir, fsyncs)
    } else {
        let path = dir.join(KEY_NEXT);
        vfs.remove(&path).map_err(|e| Error::io("remove", &path, e))?;
        vfs.sync_dir(dir).map_err(|e| Error::io("fsync dir", dir, e))
    }
}

/// Writes the KEY file durably: tmp → fsync → rename → fsync dir.
pub(crate) fn write(vfs: &dyn Vfs, dir: &Path, bytes: &[u8], fsyncs: &dyn Fn()) -> Result<()> {
    crate::manifest::write_atomic(vfs, dir, KEY, KEY_TMP, bytes, fsyncs)
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
    /// the old KEY file still opens the store with the old key: [`crate::reencrypt`] re-keys.
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
