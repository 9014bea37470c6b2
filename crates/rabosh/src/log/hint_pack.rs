//! A hint page's records packed (FORMAT.md, "Hint file"): inside a page keys ascend, so each
//! key is stored as the length it shares with the previous key of the page plus the rest, and
//! the integers as varints. An opened page is expanded back into the plain record layout
//! ([`crate::log::hint_rec`]) once, so every reader of an opened page stays as it was.

use crate::io::bytes::{put_u32, put_u64};
use crate::log::format::{Reader, TAG_DEL, TAG_PUT};
use crate::log::hint_rec::RawRec;
use crate::log::metabuf::MAX_META;

/// LEB128: seven bits a byte, low first.
pub(crate) fn put_var(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn var(r: &mut Reader) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let b = r.u8().ok()?;
        // The tenth byte may carry only the top bit of a u64.
        if shift == 63 && b > 1 {
            return None;
        }
        v |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

/// One record packed against `prev`, the key of the record before it in the page (empty for
/// the first).
pub(crate) fn pack(out: &mut Vec<u8>, prev: &[u8], rec: &RawRec) {
    let shared = prev.iter().zip(rec.key).take_while(|(a, b)| a == b).count();
    put_var(out, shared as u64);
    put_var(out, (rec.key.len() - shared) as u64);
    out.extend_from_slice(&rec.key[shared..]);
    put_var(out, rec.seq);
    match rec.put {
        Some((meta, off, len, crc)) => {
            out.push(TAG_PUT);
            put_var(out, meta.len() as u64);
            out.extend_from_slice(meta);
            put_var(out, off);
            put_var(out, u64::from(len));
            put_u32(out, crc);
        }
        None => out.push(TAG_DEL),
    }
}

/// One record in the whole layout (format version 3): what an opened page is expanded into,
/// and what encrypted pages held before packing.
pub(crate) fn put_whole(out: &mut Vec<u8>, rec: &RawRec) {
    put_u64(out, rec.seq);
    out.push(if rec.put.is_some() { TAG_PUT } else { TAG_DEL });
    put_u32(out, rec.key.len() as u32);
    out.extend_from_slice(rec.key);
    if let Some((meta, off, len, crc)) = rec.put {
        put_u32(out, meta.len() as u32);
        out.extend_from_slice(meta);
        put_u64(out, off);
        put_u32(out, len);
        put_u32(out, crc);
    }
}

/// `count` packed records expanded into `out` (cleared first) in the plain record layout of
/// format version 3. `None` when they do not parse or bytes are left over; what they say
/// (order, offsets) is checked by the caller on the expanded records, as for any page.
pub(crate) fn unpack(packed: &[u8], count: u32, out: &mut Vec<u8>) -> Option<()> {
    out.clear();
    out.reserve(packed.len() * 2);
    let mut r = Reader::new(packed);
    // The previous key, as (start, length) in `out`.
    let mut prev = (0usize, 0usize);
    for _ in 0..count {
        let shared = usize::try_from(var(&mut r)?).ok()?;
        let rest = usize::try_from(var(&mut r)?).ok()?;
        if shared > prev.1 {
            return None;
        }
        let suffix = r.bytes(rest).ok()?;
        let seq = var(&mut r)?;
        let tag = r.u8().ok()?;
        put_u64(out, seq);
        out.push(tag);
        let klen = shared.checked_add(rest)?;
        put_u32(out, u32::try_from(klen).ok()?);
        let at = out.len();
        out.extend_from_within(prev.0..prev.0 + shared);
        out.extend_from_slice(suffix);
        prev = (at, klen);
        match tag {
            TAG_PUT => {
                let n = usize::try_from(var(&mut r)?).ok()?;
                if n > MAX_META {
                    return None;
                }
                let meta = r.bytes(n).ok()?;
                put_u32(out, n as u32);
                out.extend_from_slice(meta);
                put_u64(out, var(&mut r)?);
                put_u32(out, u32::try_from(var(&mut r)?).ok()?);
                put_u32(out, r.u32().ok()?);
            }
            TAG_DEL => {}
            _ => return None,
        }
    }
    r.done().then_some(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::hint_rec::read_rec;

    #[test]
    fn packed_records_expand_to_the_plain_layout() {
        let recs = [
            RawRec { seq: 1, key: b"m:a/b", put: Some((b"mm", 40, 7, 0xdead_beef)) },
            RawRec { seq: 300, key: b"m:a/c", put: None },
            RawRec { seq: u64::MAX, key: b"n", put: Some((b"", u64::MAX, u32::MAX, 1)) },
        ];
        let mut packed = Vec::new();
        let mut prev: &[u8] = b"";
        for rec in &recs {
            pack(&mut packed, prev, rec);
            prev = rec.key;
        }
        let mut out = Vec::new();
        unpack(&packed, 3, &mut out).unwrap();
        let mut r = Reader::new(&out);
        for want in &recs {
            let got = read_rec(&mut r, 3).unwrap();
            assert_eq!((got.seq, got.key, got.put), (want.seq, want.key, want.put));
        }
        assert!(r.done());
        // A count that disagrees, or bytes cut, do not expand.
        assert!(unpack(&packed, 2, &mut out).is_none());
        assert!(unpack(&packed[..packed.len() - 1], 3, &mut out).is_none());
    }
}
