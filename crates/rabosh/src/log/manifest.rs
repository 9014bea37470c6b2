//! MANIFEST: the list of live segments, replaced atomically (tmp → fsync → rename → fsync dir).

use crate::error::{Error, Result};
use crate::io::bytes::{crc, put_u32, put_u64};
use crate::io::replace::write_atomic;
use crate::io::vfs::{OpenMode, Vfs, read_exact_at};
use crate::log::format::{ENCRYPTED_FORMAT_VERSION, Reader, written_version};
use std::path::Path;

pub const MANIFEST: &str = "MANIFEST";
pub const MANIFEST_TMP: &str = "MANIFEST.tmp";
const MAGIC: &[u8; 8] = b"RABOSHMF";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SegMeta {
    pub number: u64,
    pub kind: u8,
    pub sealed: bool,
    /// Log: seq of its first commit. Compacted: 0.
    pub first_seq: u64,
    /// Sealed: seq of its last commit (log) or the last commit it covers (compacted).
    pub last_seq: u64,
    /// Sealed: exact file length.
    pub len: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Manifest {
    pub next_segment: u64,
    /// In seq order: at most one compacted segment first, then log segments; the last may be active.
    pub segments: Vec<SegMeta>,
    /// Written as `ENCRYPTED_FORMAT_VERSION` (read: a MANIFEST of that version), so that builds
    /// from before encryption refuse the store; a plain store's MANIFEST stays version 3.
    pub encrypted: bool,
}

impl Manifest {
    pub fn encode(&self) -> Vec<u8> {
        let mut body = Vec::new();
        put_u64(&mut body, self.next_segment);
        put_u32(&mut body, self.segments.len() as u32);
        for s in &self.segments {
            put_u64(&mut body, s.number);
            body.push(s.kind);
            body.push(u8::from(s.sealed));
            put_u64(&mut body, s.first_seq);
            put_u64(&mut body, s.last_seq);
            put_u64(&mut body, s.len);
        }
        let mut out = Vec::with_capacity(body.len() + 24);
        out.extend_from_slice(MAGIC);
        put_u32(&mut out, written_version(self.encrypted));
        put_u32(&mut out, body.len() as u32);
        out.extend_from_slice(&body);
        let c = crc(&[&out[8..]]);
        put_u32(&mut out, c);
        out
    }

    pub fn decode(buf: &[u8], path: &Path) -> Result<Manifest> {
        let bad = |reason: &str, offset: u64| Error::Corruption {
            file: path.to_path_buf(),
            offset,
            reason: reason.to_string(),
        };
        if buf.len() < 16 || &buf[..8] != MAGIC {
            return Err(bad("not a rabosh MANIFEST", 0));
        }
        let version = u32::from_le_bytes(buf[8..12].try_into().unwrap());
        if version > ENCRYPTED_FORMAT_VERSION {
            return Err(Error::Unsupported { file: path.to_path_buf(), version });
        }
        let body_len = u32::from_le_bytes(buf[12..16].try_into().unwrap()) as usize;
        if buf.len() != 16 + body_len + 4 {
            return Err(bad("MANIFEST length does not match its header", 12));
        }
        let stored = u32::from_le_bytes(buf[16 + body_len..].try_into().unwrap());
        if crc(&[&buf[8..16 + body_len]]) != stored || version == 0 {
            return Err(bad("MANIFEST checksum mismatch", (16 + body_len) as u64));
        }
        let mut r = Reader::new(&buf[16..16 + body_len]);
        let parse = |r: &mut Reader| -> std::result::Result<Manifest, &'static str> {
            let next_segment = r.u64()?;
            let n = r.u32()? as usize;
            // Each entry takes 34 bytes: a count the body cannot hold must not size the vector.
            let mut segments = Vec::with_capacity(n.min(body_len / 34));
            for _ in 0..n {
                segments.push(SegMeta {
                    number: r.u64()?,
                    kind: r.u8()?,
                    sealed: r.u8()? != 0,
                    first_seq: r.u64()?,
                    last_seq: r.u64()?,
                    len: r.u64()?,
                });
            }
            Ok(Manifest { next_segment, segments, encrypted: version == ENCRYPTED_FORMAT_VERSION })
        };
        parse(&mut r).map_err(|e| bad(e, 16))
    }

    pub fn read(vfs: &dyn Vfs, dir: &Path) -> Result<Manifest> {
        let path = dir.join(MANIFEST);
        let f = vfs.open(&path, OpenMode::Read).map_err(|e| Error::io("open", &path, e))?;
        let len = f.len().map_err(|e| Error::io("stat", &path, e))?;
        if len > 64 << 20 {
            return Err(Error::Corruption { file: path, offset: 0, reason: "MANIFEST too large".into() });
        }
        let mut buf = vec![0u8; len as usize];
        read_exact_at(&*f, &mut buf, 0).map_err(|e| Error::io("read", &path, e))?;
        Manifest::decode(&buf, &path)
    }

    /// Atomic replace; on return the new MANIFEST and every entry created in `dir` before it are durable.
    pub fn write(&self, vfs: &dyn Vfs, dir: &Path, fsyncs: &dyn Fn()) -> Result<()> {
        // Every file the new MANIFEST names must have a durable name before the rename can
        // reach disk: directory steps are not ordered without a barrier (a new log segment
        // created just before would otherwise be listed yet missing after a power loss).
        vfs.sync_dir(dir).map_err(|e| Error::io("fsync dir", dir, e))?;
        fsyncs();
        write_atomic(vfs, dir, MANIFEST, MANIFEST_TMP, &self.encode(), fsyncs)
    }
}
