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

use crate::crypto::crypt::{AD_KEY, Crypt, OVERHEAD, random};
use crate::crypto::encryption::Encryption;
use crate::error::{Error, Result};
use crate::io::bytes::{crc, put_u32, put_u64};
use crate::io::vfs::{OpenMode, Vfs, read_exact_at};
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

/// Writes the KEY file durably: tmp → fsync → rename → fsync dir.
pub(crate) fn write(vfs: &dyn Vfs, dir: &Path, bytes: &[u8], fsyncs: &dyn Fn()) -> Result<()> {
    crate::io::replace::write_atomic(vfs, dir, KEY, KEY_TMP, bytes, fsyncs)
}

const NEXT_MAGIC: &[u8; 8] = b"RABOSHKN";

/// `KEY.next`: magic | `from_segment` u64 | plain u8 | 0 0 0 | crc u32 (of the bytes before it)
/// | the new KEY file's bytes (absent when plain).
pub(crate) fn encode_next(from_segment: u64, key_file: Option<&[u8]>) -> Vec<u8> {
    let mut out = NEXT_MAGIC.to_vec();
    put_u64(&mut out, from_segment);
    out.extend_from_slice(&[u8::from(key_file.is_none()), 0, 0, 0]);
    let c = crc(&[&out]);
    put_u32(&mut out, c);
    out.extend_from_slice(key_file.unwrap_or_default());
    out
}

/// A `KEY.next`: the first segment it applies to, and the KEY file it brings (`None`: plain).
pub(crate) fn decode_next(b: &[u8], path: &Path) -> Result<(u64, Option<Vec<u8>>)> {
    let ok = b.len() >= 24
        && &b[..8] == NEXT_MAGIC
        && b[16] <= 1
        && b[17..20] == [0; 3]
        && crc(&[&b[..20]]) == u32::from_le_bytes(b[20..24].try_into().unwrap());
    let plain = ok && b[16] == 1;
    if !ok || (plain && b.len() != 24) || (!plain && b.len() != 24 + KEY_LEN) {
        return Err(Error::Corruption { file: path.to_path_buf(), offset: 0, reason: "damaged KEY.next".into() });
    }
    let from = u64::from_le_bytes(b[8..16].try_into().unwrap());
    Ok((from, (!plain).then(|| b[24..].to_vec())))
}

/// After the swap: `KEY.next` becomes `KEY` (or, for plain, both go). Idempotent; open calls it
/// for a swap that happened before a kill.
pub(crate) fn finish_next(vfs: &dyn Vfs, dir: &Path, fsyncs: &dyn Fn()) -> Result<()> {
    let path = dir.join(KEY_NEXT);
    let Some(b) = read_small(vfs, dir, KEY_NEXT)? else { return Ok(()) };
    let (_, key_file) = decode_next(&b, &path)?;
    match key_file {
        Some(k) => write(vfs, dir, &k, fsyncs)?,
        None => {
            if vfs.exists(&dir.join(KEY)).map_err(|e| Error::io("stat", dir.join(KEY), e))? {
                vfs.remove(&dir.join(KEY)).map_err(|e| Error::io("remove", dir.join(KEY), e))?;
            }
        }
    }
    vfs.sync_dir(dir).map_err(|e| Error::io("fsync dir", dir, e))?;
    vfs.remove(&path).map_err(|e| Error::io("remove", &path, e))?;
    vfs.sync_dir(dir).map_err(|e| Error::io("fsync dir", dir, e))?;
    Ok(())
}
