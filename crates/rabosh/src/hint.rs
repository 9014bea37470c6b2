//! Hint files: a sealed segment's key-directory summary, so open reads O(keys), not O(history).
//! Derived data: a missing or damaged hint is rebuilt from its segment, never an error.

use crate::Result;
use crate::format::{FORMAT_VERSION, Reader, TAG_DEL, TAG_PUT, crc, put_u32, put_u64};
use crate::keydir::{Entry, Key, Rec, SegRecs};
use crate::manifest::write_atomic;
use crate::segment::hint_name;
use crate::vfs::{OpenMode, Vfs, read_exact_at};
use std::path::Path;

const MAGIC: &[u8; 8] = b"RABOSHHT";

pub fn encode(number: u64, seg_len: u64, recs: &SegRecs) -> Vec<u8> {
    let mut out = Vec::with_capacity(32 + recs.len() * 96);
    out.extend_from_slice(MAGIC);
    put_u32(&mut out, FORMAT_VERSION);
    put_u32(&mut out, 0);
    put_u64(&mut out, number);
    put_u64(&mut out, seg_len);
    put_u64(&mut out, recs.len() as u64);
    for (k, r) in recs {
        put_u64(&mut out, r.seq);
        out.push(if r.entry.is_some() { TAG_PUT } else { TAG_DEL });
        put_u32(&mut out, k.len() as u32);
        out.extend_from_slice(k);
        if let Some(e) = &r.entry {
            put_u32(&mut out, e.meta.len() as u32);
            out.extend_from_slice(e.meta.as_slice());
            put_u64(&mut out, e.off);
            put_u32(&mut out, e.len);
            put_u32(&mut out, e.crc);
        }
    }
    let c = crc(&[&out]);
    put_u32(&mut out, c);
    out
}

/// `None` unless the hint is intact and describes exactly this segment at this length.
pub fn decode(buf: &[u8], number: u64, seg_len: u64) -> Option<SegRecs> {
    if buf.len() < 44 || &buf[..8] != MAGIC {
        return None;
    }
    let (body, tail) = buf.split_at(buf.len() - 4);
    if crc(&[body]) != u32::from_le_bytes(tail.try_into().ok()?) {
        return None;
    }
    let mut r = Reader::new(&body[8..]);
    let parse = |r: &mut Reader| -> std::result::Result<Option<SegRecs>, &'static str> {
        // v1 and v2 hints share a layout (fixed 40-byte metadata); v3 prefixes its length.
        let version = r.u32()?;
        if !(1..=FORMAT_VERSION).contains(&version) {
            return Ok(None);
        }
        r.u32()?;
        if r.u64()? != number || r.u64()? != seg_len {
            return Ok(None);
        }
        let n = r.u64()?;
        let mut recs = SegRecs::new();
        for _ in 0..n {
            let seq = r.u64()?;
            let tag = r.u8()?;
            let klen = r.u32()? as usize;
            let key: Key = r.bytes(klen)?.into();
            let entry = match tag {
                TAG_PUT => {
                    let meta = r.meta(version)?;
                    let e = Entry { seq, meta, seg: number, off: r.u64()?, len: r.u32()?, crc: r.u32()? };
                    // A value must lie inside its segment: a read sizes its buffer by `len`.
                    let inside = e.off >= crate::format::SEG_HEADER as u64
                        && e.off.checked_add(e.len as u64).is_some_and(|end| end <= seg_len);
                    if !inside {
                        return Err("entry points outside its segment");
                    }
                    Some(e)
                }
                TAG_DEL => None,
                _ => return Err("bad tag"),
            };
            recs.insert(key, Rec { seq, entry });
        }
        if !r.done() {
            return Err("trailing bytes");
        }
        Ok(Some(recs))
    };
    parse(&mut r).ok().flatten()
}

pub fn load(vfs: &dyn Vfs, dir: &Path, number: u64, seg_len: u64) -> Option<SegRecs> {
    let path = dir.join(hint_name(number));
    let f = vfs.open(&path, OpenMode::Read).ok()?;
    let len = f.len().ok()?;
    if len > 1 << 34 {
        return None;
    }
    let mut buf = vec![0u8; len as usize];
    read_exact_at(&*f, &mut buf, 0).ok()?;
    decode(&buf, number, seg_len)
}

pub fn write(vfs: &dyn Vfs, dir: &Path, number: u64, seg_len: u64, recs: &SegRecs, fsyncs: &dyn Fn()) -> Result<()> {
    let name = hint_name(number);
    write_atomic(vfs, dir, &name, &format!("{name}.tmp"), &encode(number, seg_len, recs), fsyncs)
}
