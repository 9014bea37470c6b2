//! [`index`] against [`decode`] (the record-by-record reader) plus the key-order check it adds:
//! on hints damaged after their checksum was made to match again (so the records themselves
//! are what is judged), both accept or both refuse, and what `index` accepts reads back as the
//! same records, deletes, seq range and tail.

use super::*;
use crate::io::bytes::crc;
use crate::log::metabuf::MetaBuf;
use proptest::prelude::*;

/// One record as generated: key, seq, and a put's (metadata length, value offset, value
/// length), or `None` for a delete.
type Spec = (Vec<u8>, u64, Option<(usize, u64, u32)>);
/// What `decode` reads: the records and the rest.
type Decodes = (Vec<(Key, Option<Entry>)>, Decoded);

fn recs_of(spec: &[Spec]) -> SegRecs {
    spec.iter()
        .map(|(k, seq, put)| {
            let entry = put.map(|(meta, off, len)| Entry {
                seq: *seq,
                meta: MetaBuf::new(&vec![7u8; meta]),
                seg: 5,
                off,
                len,
                crc: 9,
            });
            (Key::from(&k[..]), crate::log::record::Rec { seq: *seq, entry })
        })
        .collect()
}

/// `buf` with its last four bytes made the CRC of the rest again.
fn recrc(mut buf: Vec<u8>) -> Vec<u8> {
    if buf.len() >= 4 {
        let n = buf.len() - 4;
        let c = crc(&[&buf[..n]]);
        buf[n..].copy_from_slice(&c.to_le_bytes());
    }
    buf
}

/// What `index` must answer: `decode`'s records, if their keys strictly ascend.
fn expected(buf: &[u8], seg_len: u64) -> Option<Decodes> {
    let mut out = Vec::new();
    let d = decode(buf, (5, seg_len), false, &mut out)?;
    out.windows(2).all(|w| w[0].0 < w[1].0).then_some((out, d))
}

fn check(buf: &[u8], seg_len: u64) -> std::result::Result<(), TestCaseError> {
    let got = index(buf, 5, seg_len, false);
    let want = expected(buf, seg_len);
    prop_assert_eq!(got.is_some(), want.is_some(), "index and decode disagree on whether the hint is usable");
    let (Some(ix), Some((recs, d))) = (got, want) else { return Ok(()) };
    let body = &buf[..buf.len() - 4];
    let read: Vec<(Key, Option<Entry>)> = ix
        .offs
        .iter()
        .map(|&at| {
            let rec = read_rec(&mut Reader { buf: body, pos: at as usize }, ix.version).unwrap();
            (Key::from(rec.key), rec.entry(5))
        })
        .collect();
    prop_assert_eq!(&read, &recs);
    prop_assert_eq!(&ix.dels, &d.dels);
    prop_assert_eq!(ix.tail, d.tail);
    let seqs = recs
        .iter()
        .map(|(k, e)| e.as_ref().map_or_else(|| d.dels.iter().find(|(dk, _)| dk == k).unwrap().1, |e| e.seq))
        .fold(None, |acc: Option<(u64, u64)>, s| Some(acc.map_or((s, s), |(lo, hi)| (lo.min(s), hi.max(s)))));
    prop_assert_eq!(ix.seqs, seqs);
    Ok(())
}

fn spec() -> impl Strategy<Value = Vec<Spec>> {
    prop::collection::vec(
        (
            prop::collection::vec(0u8..4, 0..5),
            0u64..1000,
            prop::option::weighted(0.8, (0usize..48, 30u64..140, 0u32..80)),
        ),
        0..12,
    )
}

/// A damage: overwrite a byte, or (on its own) cut the hint short or lengthen it.
#[derive(Debug, Clone)]
enum Damage {
    Byte(usize, u8),
    Cut(usize),
    Grow(u8),
}

fn damage() -> impl Strategy<Value = Damage> {
    prop_oneof![
        4 => (any::<usize>(), any::<u8>()).prop_map(|(at, b)| Damage::Byte(at, b)),
        1 => any::<usize>().prop_map(Damage::Cut),
        1 => any::<u8>().prop_map(Damage::Grow),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn index_agrees_with_decode_on_damaged_hints(
        spec in spec(),
        active in any::<bool>(),
        seg_len in prop::sample::select(vec![100u64, 150, 220]),
        damages in prop::collection::vec(damage(), 0..3),
    ) {
        let recs = recs_of(&spec);
        let tail = active.then_some(ActiveTail { last_seq: Some(7), ends_with_commit: true });
        let mut buf = encode(5, seg_len, &recs, tail);
        for d in damages {
            match d {
                // Past the 44-byte header (magic, version, flags, number, length, count) too.
                Damage::Byte(at, b) => {
                    let n = buf.len().saturating_sub(4).max(1);
                    let at = at % n;
                    buf[at] = b;
                }
                Damage::Cut(at) => buf.truncate(44 + at % buf.len().saturating_sub(43).max(1)),
                Damage::Grow(b) => {
                    let n = buf.len() - 4;
                    buf.insert(n, b);
                }
            }
        }
        check(&recrc(buf), seg_len)?;
    }

    /// Records written as given — both layouts (v2: fixed 40-byte metadata; v3: length-prefixed),
    /// keys in order but repeats kept and, sometimes, two records swapped — so that order is
    /// what is judged.
    #[test]
    fn index_agrees_with_decode_on_keys_out_of_order(
        mut spec in spec(),
        v3 in any::<bool>(),
        swap in prop::option::of(any::<(usize, usize)>()),
        byte in prop::option::of(any::<(usize, u8)>()),
    ) {
        spec.sort_by(|a, b| a.0.cmp(&b.0));
        if let (Some((i, j)), false) = (swap, spec.is_empty()) {
            let n = spec.len();
            spec.swap(i % n, j % n);
        }
        let mut buf = raw(if v3 { 3 } else { 2 }, &spec);
        if let Some((at, b)) = byte {
            let n = buf.len().saturating_sub(4).max(1);
            buf[at % n] = b;
        }
        check(&recrc(buf), 220)?;
    }
}

/// A hint of `spec`'s records in the order given, in the layout of `version` (2 or 3).
fn raw(version: u32, spec: &[Spec]) -> Vec<u8> {
    let mut out = MAGIC.to_vec();
    put_u32(&mut out, version);
    put_u32(&mut out, 0);
    put_u64(&mut out, 5);
    put_u64(&mut out, 220);
    put_u64(&mut out, spec.len() as u64);
    for (k, seq, put) in spec {
        put_u64(&mut out, *seq);
        out.push(if put.is_some() { TAG_PUT } else { TAG_DEL });
        put_u32(&mut out, k.len() as u32);
        out.extend_from_slice(k);
        if let Some((meta, off, len)) = put {
            let meta = if version >= 3 { *meta } else { 40 };
            if version >= 3 {
                put_u32(&mut out, meta as u32);
            }
            out.extend_from_slice(&vec![3u8; meta]);
            put_u64(&mut out, *off);
            put_u32(&mut out, *len);
            put_u32(&mut out, 9);
        }
    }
    out.extend_from_slice(&[0; 4]);
    out
}

/// Every hint `encode` writes is indexed (the fast path is the path).
#[test]
fn encoded_hints_are_indexed() {
    let spec: Vec<_> =
        (0..300u64).map(|i| (format!("k{i:04}").into_bytes(), i, (i % 7 != 0).then_some((40, 40 + i, 10)))).collect();
    let recs = recs_of(&spec);
    let buf = encode(5, 4000, &recs, Some(ActiveTail { last_seq: Some(299), ends_with_commit: true }));
    let ix = index(&buf, 5, 4000, false).expect("indexed");
    assert_eq!(ix.offs.len(), 300);
    assert_eq!(ix.seqs, Some((0, 299)));
    assert_eq!(ix.dels.len(), 43);
}
