//! A paged hint (FORMAT.md, "Hint file") written from its records as they stream by in key
//! order, in two passes over them. The directory comes first in the file and names every page's
//! place, so the first pass packs each page only to learn its length and first key; the second
//! packs each page again, seals it and hands it on in blocks. What is held at once is the
//! directory (a first key a page, and every delete) and one block of pages, never the segment's
//! records or the hint's bytes: a seal gathered both whole (issue 36 §1), a few hundred bytes a
//! key for a moment, beside the delta it was about to let go.

use crate::crypto::crypt::{Crypt, Nonces, random};
use crate::error::{Error, Result};
use crate::io::bytes::{put_u32, put_u64};
use crate::log::format::FORMAT_VERSION;
use crate::log::hint_pack::{pack, put_whole};
use crate::log::hint_pages::{
    AD_DIR, FLAG_ACTIVE, FLAG_PACKED, ID, PAGE_RECS, dir_ad, magic, overhead, page_ad, seal_blob,
};
use crate::log::hint_rec::{ActiveTail, RawRec};

/// One segment's records in strictly ascending key order, borrowed from whatever holds them.
pub(crate) type Recs<'a> = Box<dyn Iterator<Item = RawRec<'a>> + 'a>;

/// Sealed pages gathered before they are handed on (a hundred pages or so a write); the
/// buffer is allocated at this size once and never grows past it, unless one page is larger.
const BLOCK: usize = 256 << 10;

/// What the first pass learns: the directory's counts and lists, as the directory holds them.
#[derive(Default)]
struct Plan {
    count: u64,
    seqs: Option<(u64, u64)>,
    ndels: u64,
    /// `(seq u64 | key_len u32 | key)…`
    dels: Vec<u8>,
    /// `(records u32 | offset u64 | sealed length u32 | first key_len u32 | first key)…`
    refs: Vec<u8>,
    /// Each page's record count and sealed length, for the second pass to match.
    pages: Vec<(u32, u32)>,
}

/// Up to a page of records from `recs` packed into `plain` (cleared first), each handed to
/// `each`; how many. `last`: the key before them (the previous page's last), checked to ascend.
fn fill_page<'a>(
    recs: &mut Recs<'a>,
    packed: bool,
    plain: &mut Vec<u8>,
    last: &mut Option<&'a [u8]>,
    mut each: impl FnMut(&RawRec<'a>),
) -> Result<usize> {
    plain.clear();
    let mut prev: &[u8] = &[];
    let mut n = 0;
    while n < PAGE_RECS {
        let Some(rec) = recs.next() else { break };
        if last.is_some_and(|l| l >= rec.key) {
            return Err(out_of_order());
        }
        if packed {
            pack(plain, prev, &rec);
        } else {
            put_whole(plain, &rec);
        }
        each(&rec);
        prev = rec.key;
        *last = Some(rec.key);
        n += 1;
    }
    Ok(n)
}

fn out_of_order() -> Error {
    Error::InvalidArgument("a hint's records must come in strictly ascending key order, the same twice".into())
}

fn plan<'a>(mut recs: Recs<'a>, packed: bool, over: usize) -> Result<Plan> {
    let mut p = Plan::default();
    let (mut plain, mut last, mut at) = (Vec::new(), None, 0u64);
    loop {
        let mut first: Option<&'a [u8]> = None;
        let n = fill_page(&mut recs, packed, &mut plain, &mut last, |r| {
            first.get_or_insert(r.key);
            p.count += 1;
            p.seqs = Some(p.seqs.map_or((r.seq, r.seq), |(lo, hi)| (lo.min(r.seq), hi.max(r.seq))));
            if r.put.is_none() {
                p.ndels += 1;
                put_u64(&mut p.dels, r.seq);
                put_u32(&mut p.dels, r.key.len() as u32);
                p.dels.extend_from_slice(r.key);
            }
        })?;
        let Some(first) = first else { break };
        let len =
            u32::try_from(plain.len() + over).map_err(|_| Error::InvalidArgument("hint page too large".into()))?;
        put_u32(&mut p.refs, n as u32);
        put_u64(&mut p.refs, at);
        put_u32(&mut p.refs, len);
        put_u32(&mut p.refs, first.len() as u32);
        p.refs.extend_from_slice(first);
        p.pages.push((n as u32, len));
        at += u64::from(len);
    }
    Ok(p)
}

/// The directory's plaintext.
fn directory(
    id: &[u8; ID],
    (number, seg_len): (u64, u64),
    p: &Plan,
    tail: Option<ActiveTail>,
    packed: bool,
) -> Vec<u8> {
    let mut d = Vec::with_capacity(96 + p.dels.len() + p.refs.len());
    d.extend_from_slice(&id[..]);
    put_u32(&mut d, FORMAT_VERSION);
    put_u32(&mut d, if packed { FLAG_PACKED } else { 0 } | if tail.is_some() { FLAG_ACTIVE } else { 0 });
    put_u64(&mut d, number);
    put_u64(&mut d, seg_len);
    put_u64(&mut d, p.count);
    d.push(u8::from(p.seqs.is_some()));
    put_u64(&mut d, p.seqs.map_or(0, |s| s.0));
    put_u64(&mut d, p.seqs.map_or(0, |s| s.1));
    if let Some(t) = tail {
        d.push(u8::from(t.last_seq.is_some()));
        put_u64(&mut d, t.last_seq.unwrap_or(0));
        d.push(u8::from(t.ends_with_commit));
    }
    put_u64(&mut d, p.ndels);
    d.extend_from_slice(&p.dels);
    put_u32(&mut d, p.pages.len() as u32);
    d.extend_from_slice(&p.refs);
    d
}

/// The hint of segment `id` (number, length) from `recs` (called twice, each time for the same
/// records from the start), handed to `out` in order: magic, directory, then the pages in
/// blocks. `seal`: the store's cipher, or `None` (plain: checksummed). `packed`: false only for
/// the layout encrypted stores wrote before packing (kept for tests).
pub(crate) fn write<'a>(
    seal: Option<&Crypt>,
    id: (u64, u64),
    tail: Option<ActiveTail>,
    packed: bool,
    recs: &mut dyn FnMut() -> Result<Recs<'a>>,
    out: &mut dyn FnMut(&[u8]) -> Result<()>,
) -> Result<()> {
    let plan = plan(recs()?, packed, overhead(seal))?;
    let hint_id = random::<ID>()?;
    let mut nonces = match seal {
        Some(_) => Some(Nonces::draw(plan.pages.len() + 1)?),
        None => None,
    };
    let d = directory(&hint_id, id, &plan, tail, packed);
    let mut head = magic(seal).to_vec();
    put_u32(&mut head, (d.len() + overhead(seal)) as u32);
    seal_blob(seal.zip(nonces.as_mut()), &[crate::crypto::crypt::AD_HINT, AD_DIR, &dir_ad(id.0)], &d, &mut head);
    drop(d);
    out(&head)?;
    drop(head);
    let mut block = Vec::with_capacity(BLOCK);
    let npages = plan.pages.len() as u32;
    let (mut it, mut plain, mut last) = (recs()?, Vec::new(), None);
    for (i, &(count, len)) in plan.pages.iter().enumerate() {
        let n = fill_page(&mut it, packed, &mut plain, &mut last, |_| {})?;
        if !block.is_empty() && block.len() + len as usize > BLOCK {
            out(&block)?;
            block.clear();
        }
        let at = block.len();
        let ad = page_ad(id.0, &hint_id, i as u32, npages);
        seal_blob(seal.zip(nonces.as_mut()), &ad.parts(), &plain, &mut block);
        // The records differ from the first pass's: the directory would not describe the pages.
        if n != count as usize || block.len() - at != len as usize {
            return Err(out_of_order());
        }
    }
    if it.next().is_some() {
        return Err(out_of_order());
    }
    out(&block)
}

#[cfg(feature = "testkit")]
/// An encrypted store's paged hint as main wrote it before packing (records in the whole
/// layout): kept so tests can make such a store and show it still opens.
pub(crate) fn encode_unpacked(c: &Crypt, id: (u64, u64), recs: &[RawRec], tail: Option<ActiveTail>) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    write(Some(c), id, tail, false, &mut || Ok(Box::new(recs.iter().copied())), &mut |b| {
        out.extend_from_slice(b);
        Ok(())
    })?;
    Ok(out)
}
