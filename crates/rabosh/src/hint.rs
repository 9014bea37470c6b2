//! Hint files: a segment's key-directory summary, so open reads O(keys), not O(history).
//! Derived data: a missing or damaged hint is rebuilt from its segment, never an error.
//! A sealed segment's hint is written when it is sealed; the active segment's at a clean close,
//! with the tail facts a scan would otherwise provide ([`ActiveTail`]).

use crate::Result;
use crate::format::{FORMAT_VERSION, Reader, TAG_DEL, TAG_PUT, crc, put_u32, put_u64};
use crate::keydir::{Entry, Key, SegRecs};
use crate::manifest::{replace_file, write_atomic};
use crate::segment::hint_name;
use crate::vfs::{OpenMode, Vfs, read_exact_at};
use std::path::Path;

const MAGIC: &[u8; 8] = b"RABOSHHT";

/// Flag (in the header's formerly reserved word): an [`ActiveTail`] follows the records.
const FLAG_ACTIVE: u32 = 1;

/// What open learns from scanning the active segment besides its records: written into the
/// hint of an active segment at a clean close, so the next open need not scan it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ActiveTail {
    /// The seq of the segment's last commit; `None`: it holds none.
    pub last_seq: Option<u64>,
    /// Its last frame is a commit (not a synced marker, not the bare header).
    pub ends_with_commit: bool,
}

pub fn encode(number: u64, seg_len: u64, recs: &SegRecs, tail: Option<ActiveTail>) -> Vec<u8> {
    let mut out = Vec::with_capacity(48 + recs.len() * 96);
    out.extend_from_slice(MAGIC);
    put_u32(&mut out, FORMAT_VERSION);
    put_u32(&mut out, if tail.is_some() { FLAG_ACTIVE } else { 0 });
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
    if let Some(t) = tail {
        out.push(t.last_seq.is_some() as u8);
        put_u64(&mut out, t.last_seq.unwrap_or(0));
        out.push(t.ends_with_commit as u8);
    }
    let c = crc(&[&out]);
    put_u32(&mut out, c);
    out
}

/// `None` unless the hint is intact and describes exactly this segment at this length. Its
/// records are appended to `out` in file order (key order, as written; open sorts every
/// segment's together), deletes as `None`; on `None` nothing is appended.
pub fn decode(buf: &[u8], number: u64, seg_len: u64, out: &mut Vec<(Key, Option<Entry>)>) -> Option<Decoded> {
    let start = out.len();
    let r = decode_inner(buf, number, seg_len, out);
    if r.is_none() {
        out.truncate(start);
    }
    r
}

fn decode_inner(buf: &[u8], number: u64, seg_len: u64, out: &mut Vec<(Key, Option<Entry>)>) -> Option<Decoded> {
    if buf.len() < 44 || &buf[..8] != MAGIC {
        return None;
    }
    let (body, tail) = buf.split_at(buf.len() - 4);
    if crc(&[body]) != u32::from_le_bytes(tail.try_into().ok()?) {
        return None;
    }
    let mut r = Reader::new(&body[8..]);
    let mut parse = |r: &mut Reader| -> std::result::Result<Option<Decoded>, &'static str> {
        // v1 and v2 hints share a layout (fixed 40-byte metadata); v3 prefixes its length.
        let version = r.u32()?;
        if !(1..=FORMAT_VERSION).contains(&version) {
            return Ok(None);
        }
        let flags = r.u32()?;
        // An unknown flag is a layout this version cannot read: rebuilt, like an unknown version.
        if flags & !FLAG_ACTIVE != 0 || (flags != 0 && version < 3) {
            return Ok(None);
        }
        if r.u64()? != number || r.u64()? != seg_len {
            return Ok(None);
        }
        let n = r.u64()?;
        // Each record takes at least 17 bytes: a count beyond that is damage, not a size.
        out.reserve((n as usize).min(body.len() / 17));
        let mut dels = Vec::new();
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
                TAG_DEL => {
                    dels.push((key.clone(), seq));
                    None
                }
                _ => return Err("bad tag"),
            };
            out.push((key, entry));
        }
        let tail = match flags & FLAG_ACTIVE {
            0 => None,
            _ => {
                let has_last = r.u8()?;
                let last = r.u64()?;
                let ends_with_commit = r.u8()?;
                if has_last > 1 || ends_with_commit > 1 {
                    return Err("bad tail flags");
                }
                Some(ActiveTail { last_seq: (has_last == 1).then_some(last), ends_with_commit: ends_with_commit == 1 })
            }
        };
        if !r.done() {
            return Err("trailing bytes");
        }
        Ok(Some(Decoded { dels, tail }))
    };
    parse(&mut r).ok().flatten()
}

/// Besides the records: a hint's deletes with their seqs, and an active segment's tail.
pub struct Decoded {
    pub dels: Vec<(Key, u64)>,
    pub tail: Option<ActiveTail>,
}

pub fn load(
    vfs: &dyn Vfs,
    dir: &Path,
    number: u64,
    seg_len: u64,
    out: &mut Vec<(Key, Option<Entry>)>,
) -> Option<Decoded> {
    let path = dir.join(hint_name(number));
    let f = vfs.open(&path, OpenMode::Read).ok()?;
    let len = f.len().ok()?;
    if len > 1 << 34 {
        return None;
    }
    let mut buf = vec![0u8; len as usize];
    read_exact_at(&*f, &mut buf, 0).ok()?;
    decode(&buf, number, seg_len, out)
}

pub fn write(vfs: &dyn Vfs, dir: &Path, number: u64, seg_len: u64, recs: &SegRecs, fsyncs: &dyn Fn()) -> Result<()> {
    let name = hint_name(number);
    write_atomic(vfs, dir, &name, &format!("{name}.tmp"), &encode(number, seg_len, recs, None), fsyncs)
}

/// The active segment's hint, at a clean close. Not fsynced: it is only ever used when its
/// checksum, the segment's length and the synced record all agree with it, and a lost or torn
/// one costs the next open a scan, nothing more.
pub fn write_active(
    vfs: &dyn Vfs,
    dir: &Path,
    number: u64,
    seg_len: u64,
    recs: &SegRecs,
    tail: ActiveTail,
) -> Result<()> {
    let name = hint_name(number);
    replace_file(vfs, dir, &name, &format!("{name}.tmp"), &encode(number, seg_len, recs, Some(tail)), None)
}
