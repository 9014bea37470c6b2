//! One hint record, written and read in place: the layout a plain hint and a sealed hint's
//! pages share ([`crate::log::hint`], [`crate::log::hint_pages`]), and the tail facts an active
//! segment's hint carries.

#[cfg(any(test, feature = "testkit"))]
use crate::io::bytes::{put_u32, put_u64};
use crate::log::format::{Reader, TAG_DEL, TAG_PUT};
use crate::log::metabuf::MetaBuf;
#[cfg(any(test, feature = "testkit"))]
use crate::log::record::Rec;
use crate::log::record::{Entry, SegRecs};

/// What open learns from scanning the active segment besides its records: written into the
/// hint of an active segment at a clean close, so the next open need not scan it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ActiveTail {
    /// The seq of the segment's last commit; `None`: it holds none.
    pub last_seq: Option<u64>,
    /// Its last frame is a commit (not a synced marker, not the bare header).
    pub ends_with_commit: bool,
}

/// A segment's records borrowed as hint records, in key order: what a hint is written from.
pub(crate) fn raw_recs(recs: &SegRecs) -> Vec<RawRec<'_>> {
    recs.iter()
        .map(|(k, r)| RawRec {
            seq: r.seq,
            key: k,
            put: r.entry.as_ref().map(|e| (e.meta.as_slice(), e.off, e.len, e.crc)),
        })
        .collect()
}

/// One record in the whole hint layout (`RABOSHHT`; an opened page is expanded into it).
#[cfg(any(test, feature = "testkit"))]
pub(crate) fn put_rec(out: &mut Vec<u8>, k: &[u8], r: &Rec) {
    put_u64(out, r.seq);
    out.push(if r.entry.is_some() { TAG_PUT } else { TAG_DEL });
    put_u32(out, k.len() as u32);
    out.extend_from_slice(k);
    if let Some(e) = &r.entry {
        put_u32(out, e.meta.len() as u32);
        out.extend_from_slice(e.meta.as_slice());
        put_u64(out, e.off);
        put_u32(out, e.len);
        put_u32(out, e.crc);
    }
}

/// One record of a hint, borrowed from the hint's bytes.
#[derive(Clone, Copy)]
pub(crate) struct RawRec<'a> {
    pub seq: u64,
    pub key: &'a [u8],
    /// A put's metadata, value offset, length and checksum; `None`: a delete.
    pub put: Option<(&'a [u8], u64, u32, u32)>,
}

impl RawRec<'_> {
    pub fn entry(&self, number: u64) -> Option<Entry> {
        self.put.map(|(meta, off, len, crc)| Entry {
            seq: self.seq,
            meta: MetaBuf::new(meta),
            seg: number,
            off,
            len,
            crc,
        })
    }
}

/// The record at `r`'s position, in the layout of hint format `version`.
pub(crate) fn read_rec<'a>(r: &mut Reader<'a>, version: u32) -> std::result::Result<RawRec<'a>, &'static str> {
    let seq = r.u64()?;
    let tag = r.u8()?;
    let klen = r.u32()? as usize;
    let key = r.bytes(klen)?;
    let put = match tag {
        TAG_PUT => Some((r.meta_bytes(version)?, r.u64()?, r.u32()?, r.u32()?)),
        TAG_DEL => None,
        _ => return Err("bad tag"),
    };
    Ok(RawRec { seq, key, put })
}
