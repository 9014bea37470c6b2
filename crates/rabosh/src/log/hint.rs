//! Hint files: a segment's key-directory summary, so open reads O(keys), not O(history).
//! Derived data: a missing or damaged hint is rebuilt from its segment, never an error.
//! A sealed segment's hint is written when it is sealed; the active segment's at a clean close,
//! with the tail facts a scan would otherwise provide ([`ActiveTail`]).

use crate::crypto::crypt::{AD_HINT, Crypt, NONCE};
use crate::error::{Error, Result};
use crate::io::bytes::crc;
#[cfg(any(test, feature = "testkit"))]
use crate::io::bytes::{put_u32, put_u64};
use crate::io::os::FileBytes;
use crate::io::replace::replace_file_with;
use crate::io::vfs::{OpenMode, Vfs, read_exact_at, write_all_at};
use crate::log::format::{FORMAT_VERSION, Reader, TAG_DEL, TAG_PUT};
#[cfg(any(test, feature = "testkit"))]
use crate::log::hint_rec::put_rec;
use crate::log::hint_rec::{ActiveTail, RawRec, raw_recs, read_rec};
use crate::log::hint_writer::Recs;
use crate::log::record::{Entry, Key, SegRecs};
use crate::log::segment::hint_name;
use std::path::Path;

const MAGIC: &[u8; 8] = b"RABOSHHT";
/// An encrypted store's hint: this magic, then the plain hint sealed whole (AD: "RBT1" ‖
/// segment number), so keys and metadata never reach the disk in the clear.
const SEALED_MAGIC: &[u8; 8] = b"RABOSHHX";

/// Flag (in the header's formerly reserved word): an [`ActiveTail`] follows the records.
const FLAG_ACTIVE: u32 = 1;

/// The whole layout (`RABOSHHT`), which stores before paged plain hints wrote: kept so tests
/// can make such a store and show it opens and migrates.
#[cfg(any(test, feature = "testkit"))]
pub fn encode(number: u64, seg_len: u64, recs: &SegRecs, tail: Option<ActiveTail>) -> Vec<u8> {
    let mut out = Vec::with_capacity(48 + recs.len() * 96);
    out.extend_from_slice(MAGIC);
    put_u32(&mut out, FORMAT_VERSION);
    put_u32(&mut out, if tail.is_some() { FLAG_ACTIVE } else { 0 });
    put_u64(&mut out, number);
    put_u64(&mut out, seg_len);
    put_u64(&mut out, recs.len() as u64);
    for (k, r) in recs {
        put_rec(&mut out, k, r);
    }
    if let Some(t) = tail {
        out.push(u8::from(t.last_seq.is_some()));
        put_u64(&mut out, t.last_seq.unwrap_or(0));
        out.push(u8::from(t.ends_with_commit));
    }
    let c = crc(&[&out]);
    put_u32(&mut out, c);
    out
}

/// A hint's header, checked: intact (checksum; or `sealed`: opened from an encrypted store's
/// hint file, whose tag already authenticated every byte, checksum included, so the CRC pass
/// over the whole hint is skipped), a layout this version reads, and naming exactly this
/// segment at this length. The reader is left at the first record; its positions count
/// from the start of the file.
struct Header<'a> {
    r: Reader<'a>,
    version: u32,
    active: bool,
    count: u64,
}

fn header(buf: &[u8], number: u64, seg_len: u64, sealed: bool) -> Option<Header<'_>> {
    if buf.len() < 44 || &buf[..8] != MAGIC {
        return None;
    }
    let (body, tail) = buf.split_at(buf.len() - 4);
    if !sealed && crc(&[body]) != u32::from_le_bytes(tail.try_into().ok()?) {
        return None;
    }
    let mut r = Reader { buf: body, pos: 8 };
    // v1 and v2 hints share a layout (fixed 40-byte metadata); v3 prefixes its length.
    let version = r.u32().ok()?;
    if !(1..=FORMAT_VERSION).contains(&version) {
        return None;
    }
    let flags = r.u32().ok()?;
    // An unknown flag is a layout this version cannot read: rebuilt, like an unknown version.
    if flags & !FLAG_ACTIVE != 0 || (flags != 0 && version < 3) {
        return None;
    }
    if r.u64().ok()? != number || r.u64().ok()? != seg_len {
        return None;
    }
    let count = r.u64().ok()?;
    Some(Header { r, version, active: flags & FLAG_ACTIVE != 0, count })
}

#[cfg(test)]
mod index_tests;

impl RawRec<'_> {
    /// A value must lie inside its segment: a read sizes its buffer by `len`.
    pub(crate) fn check(&self, seg_len: u64) -> std::result::Result<(), &'static str> {
        let Some((_, off, len, _)) = self.put else { return Ok(()) };
        let inside = off >= crate::log::format::SEG_HEADER as u64
            && off.checked_add(u64::from(len)).is_some_and(|end| end <= seg_len);
        if inside { Ok(()) } else { Err("entry points outside its segment") }
    }
}

/// After the records: an active segment's tail, then nothing.
fn read_tail(r: &mut Reader, active: bool) -> std::result::Result<Option<ActiveTail>, &'static str> {
    let tail = if active {
        let has_last = r.u8()?;
        let last = r.u64()?;
        let ends_with_commit = r.u8()?;
        if has_last > 1 || ends_with_commit > 1 {
            return Err("bad tail flags");
        }
        Some(ActiveTail { last_seq: (has_last == 1).then_some(last), ends_with_commit: ends_with_commit == 1 })
    } else {
        None
    };
    if !r.done() {
        return Err("trailing bytes");
    }
    Ok(tail)
}

/// `None` unless the hint is intact and describes exactly this segment at this length. Its
/// records are appended to `out` in file order (key order, as written; open sorts every
/// segment's together), deletes as `None`; on `None` nothing is appended.
pub fn decode(
    buf: &[u8],
    (number, seg_len): (u64, u64),
    sealed: bool,
    out: &mut Vec<(Key, Option<Entry>)>,
) -> Option<Decoded> {
    let start = out.len();
    let r = decode_inner(buf, (number, seg_len), sealed, out);
    if r.is_none() {
        out.truncate(start);
    }
    r
}

fn decode_inner(
    buf: &[u8],
    (number, seg_len): (u64, u64),
    sealed: bool,
    out: &mut Vec<(Key, Option<Entry>)>,
) -> Option<Decoded> {
    let Header { mut r, version, active, count } = header(buf, number, seg_len, sealed)?;
    // Each record takes at least 17 bytes: a count beyond that is damage, not a size.
    out.reserve((count as usize).min(buf.len() / 17));
    let mut parse = || -> std::result::Result<Decoded, &'static str> {
        let mut dels = Vec::new();
        for _ in 0..count {
            let rec = read_rec(&mut r, version)?;
            rec.check(seg_len)?;
            let key: Key = rec.key.into();
            if rec.put.is_none() {
                dels.push((key.clone(), rec.seq));
            }
            out.push((key, rec.entry(number)));
        }
        let tail = read_tail(&mut r, active)?;
        Ok(Decoded { dels, tail })
    };
    parse().ok()
}

/// Besides the records: a hint's deletes with their seqs, and an active segment's tail.
pub struct Decoded {
    pub dels: Vec<(Key, u64)>,
    pub tail: Option<ActiveTail>,
}

/// A hint checked whole and indexed in place: where each record starts, for a binary search
/// by key ([`crate::keydir::runs::Run`]), with no per-key allocation.
pub(crate) struct Index {
    pub version: u32,
    /// Record starts, in key order.
    pub offs: Vec<u32>,
    pub dels: Vec<(Key, u64)>,
    pub tail: Option<ActiveTail>,
    /// The lowest and highest seq of any record; `None` when there is none.
    pub seqs: Option<(u64, u64)>,
}

/// What [`decode`] checks, plus that the keys strictly ascend (what a binary search relies on;
/// [`encode`] writes them from an ordered map, so every hint this code wrote does). `None` when
/// anything fails — the caller then decodes it (or scans), as before.
///
/// The same checks as [`read_rec`] and [`RawRec::check`] make record by record, written as one
/// pass with a bounds check per group of fixed fields instead of one per field: this pass over
/// every record of every hint is most of a lazy open's CPU (≈ 180 instructions a record before,
/// docs/investigations/open-profile.md). `index_tests` holds it to `decode`'s verdict on damaged hints.
pub(crate) fn index(buf: &[u8], number: u64, seg_len: u64, sealed: bool) -> Option<Index> {
    if buf.len() > u32::MAX as usize {
        return None;
    }
    let Header { mut r, version, active, count } = header(buf, number, seg_len, sealed)?;
    let b = r.buf;
    let mut p = r.pos;
    let mut offs = Vec::with_capacity((count as usize).min(buf.len() / 17));
    let (mut dels, mut lo, mut hi) = (Vec::new(), u64::MAX, 0u64);
    let mut prev: &[u8] = &[];
    let legacy = version < 3;
    for i in 0..count {
        // seq (8), tag (1), key length (4).
        let fixed: &[u8; 13] = b.get(p..p + 13)?.try_into().ok()?;
        let seq = u64::from_le_bytes(fixed[..8].try_into().ok()?);
        let tag = fixed[8];
        let klen = u32::from_le_bytes(fixed[9..].try_into().ok()?) as usize;
        let key = b.get(p + 13..(p + 13).checked_add(klen)?)?;
        // Strictly ascending; the first record has nothing before it (an empty key included).
        if i > 0 && prev >= key {
            return None;
        }
        let mut q = p + 13 + klen;
        match tag {
            TAG_PUT => {
                let meta = if legacy {
                    crate::log::format::LEGACY_META_LEN
                } else {
                    let n = u32::from_le_bytes(b.get(q..q + 4)?.try_into().ok()?) as usize;
                    q += 4;
                    if n > crate::log::metabuf::MAX_META {
                        return None;
                    }
                    n
                };
                q += meta;
                // value offset (8), length (4), checksum (4): the value must lie inside its segment.
                let tail: &[u8; 16] = b.get(q..q + 16)?.try_into().ok()?;
                let off = u64::from_le_bytes(tail[..8].try_into().ok()?);
                let len = u64::from(u32::from_le_bytes(tail[8..12].try_into().ok()?));
                if off < crate::log::format::SEG_HEADER as u64 || off.checked_add(len).is_none_or(|end| end > seg_len) {
                    return None;
                }
                q += 16;
            }
            TAG_DEL => dels.push((Key::from(key), seq)),
            _ => return None,
        }
        (lo, hi) = (lo.min(seq), hi.max(seq));
        offs.push(p as u32);
        prev = key;
        p = q;
    }
    r.pos = p;
    let tail = read_tail(&mut r, active).ok()?;
    let seqs = (!offs.is_empty()).then_some((lo, hi));
    Some(Index { version, offs, dels, tail, seqs })
}

/// The bytes of segment `number`'s hint file, if it can be read (checked by [`decode`] or
/// [`index`]); in an encrypted store (`crypt`) the plain hint opened from its sealed file (one
/// that does not open, or a plain one there, reads as missing: it is rebuilt).
pub(crate) fn read(vfs: &dyn Vfs, dir: &Path, number: u64, crypt: Option<&Crypt>) -> Option<HintFile> {
    let path = dir.join(hint_name(number));
    let f = vfs.open(&path, OpenMode::Read).ok()?;
    let len = f.len().ok()?;
    if len > 1 << 34 {
        return None;
    }
    let Some(c) = crypt else {
        // Mapped where the file system can (checked below exactly as read bytes would be):
        // a read costs the copy and the fresh buffer's page faults (crate::io::os::Mapped).
        let bytes = if let Some(m) = f.map_read_only(len) {
            crate::probe::count_hint_mapped();
            FileBytes::Mapped(m)
        } else {
            let mut buf = crate::io::os::zeroed_for_read(len as usize);
            read_exact_at(&*f, &mut buf, 0).ok()?;
            FileBytes::Read(buf)
        };
        // Paged (checksummed): open checks only its directory. Otherwise the older whole hint
        // (`RABOSHHT`), checked whole.
        if bytes.starts_with(crate::log::hint_pages::PLAIN_MAGIC) {
            return Some(HintFile::Paged(bytes));
        }
        if let FileBytes::Mapped(m) = &bytes {
            m.populate();
        }
        return Some(HintFile::Whole(bytes));
    };
    // Sealed: the magic and nonce, then the ciphertext and tag read into a buffer of their own
    // and opened there, so the plain hint is never copied (about 1 instruction a byte saved).
    let mut head = [0u8; SEALED_MAGIC.len() + NONCE];
    let body_len = len.checked_sub(head.len() as u64)?;
    read_exact_at(&*f, &mut head, 0).ok()?;
    if &head[..SEALED_MAGIC.len()] == crate::log::hint_pages::MAGIC {
        // Paged: mapped (or read) whole, no cipher; open checks and opens only its directory,
        // and a page's blob is opened when a read reaches it.
        if let Some(m) = f.map_read_only(len) {
            return Some(HintFile::Paged(FileBytes::Mapped(m)));
        }
        let mut buf = vec![0u8; len as usize];
        read_exact_at(&*f, &mut buf, 0).ok()?;
        return Some(HintFile::Paged(FileBytes::Read(buf)));
    }
    if &head[..SEALED_MAGIC.len()] != SEALED_MAGIC {
        return None;
    }
    let mut body = vec![0u8; body_len as usize];
    read_exact_at(&*f, &mut body, head.len() as u64).ok()?;
    c.open_body(&[AD_HINT, &number.to_le_bytes()], &head[SEALED_MAGIC.len()..], body)
        .map(|b| HintFile::Whole(FileBytes::Read(b)))
}

/// A hint file as read: an older whole hint's bytes (plain `RABOSHHT`, or `RABOSHHX` opened
/// whole), or a paged hint, its pages still sealed or checksummed ([`crate::log::hint_pages`]).
pub(crate) enum HintFile {
    Whole(FileBytes),
    Paged(FileBytes),
}

#[cfg(feature = "testkit")]
/// The old sealed layout (`RABOSHHX`: the plain hint sealed whole), which main wrote before
/// the paged one: kept so tests can make such a store and show it still opens.
pub fn encode_sealed_whole(c: &Crypt, number: u64, seg_len: u64, recs: &SegRecs, tail: Option<ActiveTail>) -> Vec<u8> {
    let mut out = SEALED_MAGIC.to_vec();
    c.seal_into(&[AD_HINT, &number.to_le_bytes()], &encode(number, seg_len, recs, tail), &mut out)
        .expect("the OS's random source");
    out
}

pub fn write(
    vfs: &dyn Vfs,
    dir: &Path,
    id: (u64, u64),
    recs: &SegRecs,
    fsyncs: &dyn Fn(),
    crypt: Option<&Crypt>,
) -> Result<()> {
    write_recs(vfs, dir, id, &raw_recs(recs), fsyncs, crypt)
}

/// [`write`] from records in key order as read from a hint (an older hint's, rewritten paged).
pub(crate) fn write_recs(
    vfs: &dyn Vfs,
    dir: &Path,
    id: (u64, u64),
    recs: &[RawRec],
    fsyncs: &dyn Fn(),
    crypt: Option<&Crypt>,
) -> Result<()> {
    write_streamed(vfs, dir, id, &mut || Ok(Box::new(recs.iter().copied())), None, Some(fsyncs), crypt)
}

/// The active segment's hint, at a clean close. Not fsynced: it is only ever used when its
/// checksum, the segment's length and the synced record all agree with it, and a lost or torn
/// one costs the next open a scan, nothing more.
pub fn write_active(
    vfs: &dyn Vfs,
    dir: &Path,
    id: (u64, u64),
    recs: &SegRecs,
    tail: ActiveTail,
    crypt: Option<&Crypt>,
) -> Result<()> {
    write_active_recs(vfs, dir, id, &raw_recs(recs), tail, crypt)
}

/// [`write_active`] from records in key order as read from a hint (an older one, rewritten).
pub(crate) fn write_active_recs(
    vfs: &dyn Vfs,
    dir: &Path,
    id: (u64, u64),
    recs: &[RawRec],
    tail: ActiveTail,
    crypt: Option<&Crypt>,
) -> Result<()> {
    write_streamed(vfs, dir, id, &mut || Ok(Box::new(recs.iter().copied())), Some(tail), None, crypt)
}

/// Segment `id`'s hint (number, length), paged, from `recs` (called twice, each time for the
/// same records in key order: [`crate::log::hint_writer`]) written under a temporary name and
/// renamed into place; fsynced (file, then directory) when `fsyncs` is given, as a sealed
/// segment's hint is; `tail`: an active segment's, as a clean close writes it.
pub(crate) fn write_streamed<'a>(
    vfs: &dyn Vfs,
    dir: &Path,
    id: (u64, u64),
    recs: &mut dyn FnMut() -> Result<Recs<'a>>,
    tail: Option<ActiveTail>,
    fsyncs: Option<&dyn Fn()>,
    crypt: Option<&Crypt>,
) -> Result<()> {
    let name = hint_name(id.0);
    let tmp = format!("{name}.tmp");
    let path = dir.join(&tmp);
    replace_file_with(vfs, dir, (&name, &tmp), fsyncs, &mut |f| {
        let mut at = 0u64;
        crate::log::hint_writer::write(crypt, id, tail, true, recs, &mut |bytes| {
            write_all_at(f, bytes, at).map_err(|e| Error::io("write", &path, e))?;
            at += bytes.len() as u64;
            Ok(())
        })
    })
}
