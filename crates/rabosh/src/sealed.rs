//! Every sealed blob in a store's files, found by walking them as FORMAT.md lays them out:
//! the wrapped key in `KEY`, each sealed hint that opens, and in every segment each frame's sealed head
//! and each value. For the nonce-uniqueness test.

use crate::crypto::crypt::{AD_HINT, Crypt, NONCE, OVERHEAD};
use crate::crypto::encryption::Encryption;
use crate::crypto::keyfile::{KEY, decode};
use crate::error::Result;
use crate::io::vfs::{OpenMode, Vfs, read_exact_at};
use crate::log::format::{FRAME_HEADER, KIND_SYNCED, SEG_HEADER, decode_payload, decode_seg_header, frame_header};
use crate::log::hint_rec::ActiveTail;
use crate::log::record::SegRecs;
use crate::log::segment::parse_numbered;
use std::path::Path;

/// One sealed blob: its file, offset, nonce and whole bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sealed {
    pub file: String,
    pub offset: u64,
    pub nonce: [u8; NONCE],
    pub bytes: Vec<u8>,
}

fn read_all(vfs: &dyn Vfs, path: &Path) -> Option<Vec<u8>> {
    let f = vfs.open(path, OpenMode::Read).ok()?;
    let mut buf = vec![0u8; f.len().ok()? as usize];
    read_exact_at(&*f, &mut buf, 0).ok()?;
    Some(buf)
}

fn blob(file: &str, bytes: &[u8], offset: usize, len: usize) -> Option<Sealed> {
    let b = bytes.get(offset..offset.checked_add(len)?)?;
    Some(Sealed { file: file.into(), offset: offset as u64, nonce: b[..NONCE].try_into().ok()?, bytes: b.to_vec() })
}

/// The sealed blobs of the encrypted store in `dir`, opened with `host`. Stops reading a segment
/// at its first frame that does not decode (a torn tail, zeros ahead).
pub fn sealed_blobs(vfs: &dyn Vfs, dir: &Path, host: &Encryption) -> Result<Vec<Sealed>> {
    let mut out = Vec::new();
    let key = read_all(vfs, &dir.join(KEY)).unwrap_or_default();
    let Some(dk) = decode(&key, host, &dir.join(KEY))? else {
        return Err(crate::error::Error::WrongKey { dir: dir.to_path_buf() });
    };
    out.extend(blob(KEY, &key, 16, 32 + OVERHEAD));
    let crypt: &Crypt = &dk.crypt;
    let mut names = vfs.list(dir).map_err(|e| crate::error::Error::io("list", dir, e))?;
    names.sort();
    for name in names {
        let Some((number, ext)) = parse_numbered(&name) else { continue };
        let Some(bytes) = read_all(vfs, &dir.join(&name)) else { continue };
        if ext == "hint" && bytes.starts_with(crate::log::hint_pages::MAGIC) {
            // Paged: the directory and every page, when the directory opens.
            for (at, len) in crate::log::hint_pages::blobs(Some(crypt), &bytes, number).unwrap_or_default() {
                out.extend(blob(&name, &bytes, at, len));
            }
            continue;
        }
        if ext == "hint" {
            // Only a hint that opens: a torn one (a power loss mid-write) is ignored by open and
            // holds a prefix of a blob, not a second sealing under its nonce.
            if bytes.len() >= 8 + OVERHEAD && crypt.open(&[AD_HINT, &number.to_le_bytes()], &bytes[8..]).is_some() {
                out.extend(blob(&name, &bytes, 8, bytes.len() - 8));
            }
            continue;
        }
        if ext != "seg" || bytes.len() < SEG_HEADER {
            continue;
        }
        let Ok(h) = decode_seg_header(&bytes[..SEG_HEADER]) else { continue };
        let mut off = SEG_HEADER;
        while off + FRAME_HEADER <= bytes.len() {
            let Ok(head) = frame_header(bytes[off..off + FRAME_HEADER].try_into().unwrap()) else { break };
            let body = off + FRAME_HEADER;
            let Some(p) = bytes.get(body..body + head.len) else { break };
            let Ok(fr) = decode_payload(p, off as u64, h.version, Some(crypt), number) else { break };
            if fr.kind != KIND_SYNCED {
                let head_len = u32::from_le_bytes(p[13..17].try_into().unwrap()) as usize;
                out.extend(blob(&name, &bytes, body + 17, head_len + OVERHEAD));
                for op in &fr.ops {
                    if let Some((_, voff, vlen, _)) = &op.put {
                        out.extend(blob(&name, &bytes, *voff as usize, *vlen as usize));
                    }
                }
            }
            off = body + head.len;
        }
    }
    Ok(out)
}

/// Rewrites every paged sealed hint of the encrypted store in `dir` in the layout main wrote
/// before pages (`RABOSHHX`, the plain hint sealed whole); returns how many. For the test that
/// a store written by that build still opens and reads right.
pub fn rewrite_hints_sealed_whole(dir: &Path, host: &Encryption) -> Result<usize> {
    let dk = data_key(dir, host)?;
    rewrite_hints(dir, Some(&dk.crypt), |number, seg_len, recs, tail| {
        Some(crate::log::hint::encode_sealed_whole(&dk.crypt, number, seg_len, recs, tail))
    })
}

/// The data key of the encrypted store in `dir`, opened with `host`.
fn data_key(dir: &Path, host: &Encryption) -> Result<crate::crypto::keyfile::DataKey> {
    let key = read_all(&crate::io::vfs::StdFs, &dir.join(KEY)).unwrap_or_default();
    decode(&key, host, &dir.join(KEY))?.ok_or_else(|| crate::error::Error::WrongKey { dir: dir.to_path_buf() })
}

/// Rewrites each paged hint in `dir` that opens (with `crypt`, or checksummed) as `rewrite`
/// encodes its records (`None`: left as it is); returns how many were rewritten.
fn rewrite_hints(
    dir: &Path,
    crypt: Option<&Crypt>,
    rewrite: impl Fn(u64, u64, &SegRecs, Option<ActiveTail>) -> Option<Vec<u8>>,
) -> Result<usize> {
    let vfs = &crate::io::vfs::StdFs;
    let mut n = 0;
    for name in vfs.list(dir).map_err(|e| crate::error::Error::io("list", dir, e))? {
        let Some((number, "hint")) = parse_numbered(&name) else { continue };
        let Some(bytes) = read_all(vfs, &dir.join(&name)) else { continue };
        let Some((seg_len, recs, tail)) = crate::log::hint_pages::open_whole(crypt, &bytes, number) else {
            continue;
        };
        let Some(new) = rewrite(number, seg_len, &recs, tail) else { continue };
        let path = dir.join(&name);
        std::fs::write(&path, new).map_err(|e| crate::error::Error::io("write", &path, e))?;
        n += 1;
    }
    Ok(n)
}

/// Rewrites every paged hint of the plain store in `dir` in the whole layout (`RABOSHHT`) that
/// stores wrote before plain hints were paged; returns how many. For the tests that such a
/// store still opens, reads right and is migrated.
pub fn rewrite_hints_whole(dir: &Path) -> Result<usize> {
    rewrite_hints(dir, None, |number, seg_len, recs, tail| Some(crate::log::hint::encode(number, seg_len, recs, tail)))
}

/// Where the blobs of the paged hint `name` in `dir` lie (offset, length): its directory, then
/// each page. `host`: the store's key, or `None` for a plain store. `None` when the hint's
/// directory does not open.
#[must_use]
pub fn hint_blobs(dir: &Path, name: &str, host: Option<&Encryption>) -> Option<Vec<(usize, usize)>> {
    let vfs = &crate::io::vfs::StdFs;
    let (number, _) = parse_numbered(name)?;
    let bytes = read_all(vfs, &dir.join(name))?;
    let dk = match host {
        Some(h) => Some(decode(&read_all(vfs, &dir.join(KEY))?, h, &dir.join(KEY)).ok()??),
        None => None,
    };
    crate::log::hint_pages::blobs(dk.as_ref().map(|d| &*d.crypt), &bytes, number)
}

/// Rewrites every paged hint of the encrypted store in `dir` with unpacked pages (records in the
/// whole layout), as main wrote them before packing; returns how many. For the test that such a
/// store still opens and reads right.
pub fn rewrite_hints_unpacked(dir: &Path, host: &Encryption) -> Result<usize> {
    let dk = data_key(dir, host)?;
    rewrite_hints(dir, Some(&dk.crypt), |number, seg_len, recs, tail| {
        let raw = crate::log::hint_rec::raw_recs(recs);
        crate::log::hint_writer::encode_unpacked(&dk.crypt, (number, seg_len), &raw, tail).ok()
    })
}
