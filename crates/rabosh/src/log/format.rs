//! Byte layouts of frames and segment headers (see FORMAT.md). Pure encode/decode, no IO.

use crate::crypto::crypt::{AD_HEAD, AD_VALUE, Crypt, NoRandom, Nonces, OVERHEAD};
use crate::io::bytes::{crc, put_u32, put_u64};
use crate::log::metabuf::{MAX_META, MetaBuf};

/// The on-disk format version of a plain store: what this build writes in a plain store's
/// MANIFEST, segments and hints. v2 added the buffered-frame flag and the synced marker; v3 made
/// a put's metadata a length-prefixed opaque string (v1/v2: a fixed 40 bytes). Older files read
/// unchanged.
pub const FORMAT_VERSION: u32 = 3;
/// The version of an encrypted store's MANIFEST and segment headers, and the newest this build
/// reads: v3's layouts with sealed frames. A build from before encryption checks these versions
/// (before anything else) and refuses the store as `Unsupported` rather than reading sealed
/// frames as damage or appending plain ones to it. Hints keep `FORMAT_VERSION` (sealed whole).
pub const ENCRYPTED_FORMAT_VERSION: u32 = 4;

/// The version a MANIFEST or segment header is written with.
pub fn written_version(encrypted: bool) -> u32 {
    if encrypted { ENCRYPTED_FORMAT_VERSION } else { FORMAT_VERSION }
}
/// The fixed metadata width of a put in v1 and v2 files.
pub const LEGACY_META_LEN: usize = 40;

pub const FRAME_MAGIC: u32 = 0x5246_4252; // "RBFR" little-endian
pub const FRAME_HEADER: usize = 12;
/// Rejects a damaged length instead of allocating it; also the largest batch one commit takes.
pub const MAX_FRAME: usize = 1 << 30;
/// Top bit of a frame's length word (v2): written as a `Durability::Buffered` commit, so nothing
/// behind it proves the bytes before it were durable. Lengths never reach it (`MAX_FRAME`).
pub const FRAME_BUFFERED: u32 = 1 << 31;

pub const SEG_MAGIC: &[u8; 8] = b"RABOSHSG";
pub const SEG_HEADER: usize = 40;

pub const KIND_LOG: u8 = 1;
pub const KIND_COMPACTED: u8 = 2;
/// Payload kind of a synced marker (v2, log segments): no ops, `seq` = the last commit before
/// it; written only after an fsync, so it proves every byte before it was durable.
pub const KIND_SYNCED: u8 = 3;

pub const TAG_PUT: u8 = 1;
pub const TAG_DEL: u8 = 2;

/// Little-endian cursor over a byte slice; every read is bounds-checked.
pub struct Reader<'a> {
    pub buf: &'a [u8],
    pub pos: usize,
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0 }
    }
    pub fn bytes(&mut self, n: usize) -> Result<&'a [u8], &'static str> {
        let end = self.pos.checked_add(n).ok_or("length overflow")?;
        if end > self.buf.len() {
            return Err("record shorter than its fields");
        }
        let s = &self.buf[self.pos..end];
        self.pos = end;
        Ok(s)
    }
    pub fn u8(&mut self) -> Result<u8, &'static str> {
        Ok(self.bytes(1)?[0])
    }
    pub fn u32(&mut self) -> Result<u32, &'static str> {
        Ok(u32::from_le_bytes(self.bytes(4)?.try_into().unwrap()))
    }
    pub fn u64(&mut self) -> Result<u64, &'static str> {
        Ok(u64::from_le_bytes(self.bytes(8)?.try_into().unwrap()))
    }
    /// A put's metadata as the file's format `version` lays it out.
    pub fn meta(&mut self, version: u32) -> Result<MetaBuf, &'static str> {
        Ok(MetaBuf::new(self.meta_bytes(version)?))
    }
    /// [`Reader::meta`] without the copy.
    pub fn meta_bytes(&mut self, version: u32) -> Result<&'a [u8], &'static str> {
        let n = if version >= 3 {
            let n = self.u32()? as usize;
            if n > MAX_META {
                return Err("metadata longer than the limit");
            }
            n
        } else {
            LEGACY_META_LEN
        };
        self.bytes(n)
    }
    pub fn done(&self) -> bool {
        self.pos == self.buf.len()
    }
}

/// Segment header: magic, version, kind, encrypted flag, number, first seq, CRC.
pub fn encode_seg_header(kind: u8, number: u64, first_seq: u64, encrypted: bool) -> Vec<u8> {
    let mut h = Vec::with_capacity(SEG_HEADER);
    h.extend_from_slice(SEG_MAGIC);
    put_u32(&mut h, written_version(encrypted));
    h.extend_from_slice(&[kind, u8::from(encrypted), 0, 0]);
    put_u64(&mut h, number);
    put_u64(&mut h, first_seq);
    let c = crc(&[&h]);
    put_u32(&mut h, c);
    put_u32(&mut h, 0);
    debug_assert_eq!(h.len(), SEG_HEADER);
    h
}

pub struct SegHeader {
    pub version: u32,
    pub kind: u8,
    /// Byte 13 (0 in every plain segment, any version; 1 in every v4 one): its frames are sealed.
    pub encrypted: bool,
    pub number: u64,
    pub first_seq: u64,
}

pub enum HeaderError {
    Newer(u32),
    Bad(&'static str),
}

pub fn decode_seg_header(h: &[u8]) -> Result<SegHeader, HeaderError> {
    if h.len() < SEG_HEADER || &h[..8] != SEG_MAGIC {
        return Err(HeaderError::Bad("not a rabosh segment header"));
    }
    let version = u32::from_le_bytes(h[8..12].try_into().unwrap());
    // The version is judged before the checksum: a newer layout may checksum differently.
    if version > ENCRYPTED_FORMAT_VERSION {
        return Err(HeaderError::Newer(version));
    }
    let stored = u32::from_le_bytes(h[32..36].try_into().unwrap());
    if crc(&[&h[..32]]) != stored || version == 0 {
        return Err(HeaderError::Bad("segment header checksum mismatch"));
    }
    // Outside the checksum: damage here must still be seen, not carried along unnoticed.
    if h[13] > 1 || h[14..16] != [0, 0] {
        return Err(HeaderError::Bad("segment header flags are not valid"));
    }
    // Version 4 is the sealed layout only (a v3 header may carry the flag: written by
    // builds between encryption and this version gate, never released).
    if version == ENCRYPTED_FORMAT_VERSION && h[13] != 1 {
        return Err(HeaderError::Bad("segment header of an encrypted version is not flagged encrypted"));
    }
    if h[36..40] != [0, 0, 0, 0] {
        return Err(HeaderError::Bad("segment header reserved bytes are not zero"));
    }
    Ok(SegHeader {
        version,
        kind: h[12],
        encrypted: h[13] == 1,
        number: u64::from_le_bytes(h[16..24].try_into().unwrap()),
        first_seq: u64::from_le_bytes(h[24..32].try_into().unwrap()),
    })
}

/// Wraps a payload into a frame: magic | len (+ buffered flag) | crc32c(len word ‖ payload) |
/// payload. The header goes in front of the payload's own bytes, so a large commit is not
/// copied whole (its buffer has the room when [`PayloadBuilder::with_capacity`] made it).
fn frame(mut payload: Vec<u8>, buffered: bool) -> Vec<u8> {
    let flag = if buffered { FRAME_BUFFERED } else { 0 };
    let len = (payload.len() as u32 | flag).to_le_bytes();
    let c = crc(&[&len, &payload]);
    let mut head = [0u8; FRAME_HEADER];
    head[..4].copy_from_slice(&FRAME_MAGIC.to_le_bytes());
    head[4..8].copy_from_slice(&len);
    head[8..].copy_from_slice(&c.to_le_bytes());
    payload.splice(0..0, head);
    payload
}

/// Room a payload buffer keeps beyond its payload: its frame header, and a synced marker a
/// commit may lead with ([`synced_marker`]).
pub const FRAME_SPARE: usize = 2 * FRAME_HEADER + 13;

/// A frame header that passed its structural checks.
pub struct FrameHead {
    pub len: usize,
    pub crc: u32,
    pub buffered: bool,
}

/// Checks a frame header; returns the payload length, stored CRC and buffered flag.
pub fn frame_header(h: &[u8; FRAME_HEADER]) -> Result<FrameHead, &'static str> {
    if u32::from_le_bytes(h[0..4].try_into().unwrap()) != FRAME_MAGIC {
        return Err("bad frame magic");
    }
    let word = u32::from_le_bytes(h[4..8].try_into().unwrap());
    let len = (word & !FRAME_BUFFERED) as usize;
    if len > MAX_FRAME {
        return Err("frame length out of range");
    }
    Ok(FrameHead { len, crc: u32::from_le_bytes(h[8..12].try_into().unwrap()), buffered: word & FRAME_BUFFERED != 0 })
}

pub fn frame_crc_ok(h: &[u8; FRAME_HEADER], payload: &[u8], stored: u32) -> bool {
    crc(&[&h[4..8], payload]) == stored
}

/// One operation as decoded from a frame, with its value's absolute file offset.
#[derive(Debug, Clone)]
pub struct ParsedOp {
    pub seq: u64,
    pub key: Vec<u8>,
    /// `Some` for a put: meta, value offset, value length, value CRC.
    pub put: Option<(MetaBuf, u64, u32, u32)>,
}

pub struct ParsedFrame {
    pub kind: u8,
    pub seq: u64,
    pub ops: Vec<ParsedOp>,
}

/// Decodes a payload whose frame starts at `frame_off` in a file of format `version`; in an
/// encrypted store (`crypt`, segment `seg`) its keys and metadata are opened from their sealed
/// blob, and each put's value is a sealed blob of its own (not opened here: reads are lazy).
pub fn decode_payload(
    p: &[u8],
    frame_off: u64,
    version: u32,
    crypt: Option<&Crypt>,
    seg: u64,
) -> Result<ParsedFrame, &'static str> {
    let base = frame_off + FRAME_HEADER as u64;
    let mut r = Reader::new(p);
    let kind = r.u8()?;
    if kind != KIND_LOG && kind != KIND_COMPACTED && kind != KIND_SYNCED {
        return Err("unknown frame kind");
    }
    let seq = r.u64()?;
    let count = r.u32()? as usize;
    if kind == KIND_SYNCED && count != 0 {
        return Err("synced marker carries operations");
    }
    let mut ops = Vec::with_capacity(count.min(p.len() / 6));
    if let (Some(c), true) = (crypt, kind != KIND_SYNCED) {
        let head_len = r.u32()? as usize;
        let blob = r.bytes(head_len.checked_add(OVERHEAD).ok_or("length overflow")?)?;
        let ad = head_ad(seg, frame_off, &p[..13]);
        let head = c.open(&[AD_HEAD, &ad], blob).ok_or("sealed keys and metadata do not authenticate")?;
        let mut h = Reader::new(&head);
        for _ in 0..count {
            let (op_seq, tag, key) = op_head(&mut h, kind, seq)?;
            let put = match tag {
                TAG_PUT => {
                    let meta = h.meta(version)?;
                    let vlen = h.u32()? as usize;
                    let sealed = vlen.checked_add(OVERHEAD).ok_or("length overflow")?;
                    let off = base + r.pos as u64;
                    r.bytes(sealed)?;
                    Some((meta, off, u32::try_from(sealed).map_err(|_| "value too long")?, 0))
                }
                _ => None,
            };
            ops.push(ParsedOp { seq: op_seq, key, put });
        }
        if !h.done() {
            return Err("trailing bytes in sealed keys and metadata");
        }
    } else {
        for _ in 0..count {
            let (op_seq, tag, key) = op_head(&mut r, kind, seq)?;
            let put = match tag {
                TAG_PUT => {
                    let meta = r.meta(version)?;
                    let vlen = r.u32()?;
                    let vcrc = r.u32()?;
                    let off = base + r.pos as u64;
                    r.bytes(vlen as usize)?;
                    Some((meta, off, vlen, vcrc))
                }
                _ => None,
            };
            ops.push(ParsedOp { seq: op_seq, key, put });
        }
    }
    if !r.done() {
        return Err("trailing bytes in frame");
    }
    Ok(ParsedFrame { kind, seq, ops })
}

/// One op's seq (its own in a compacted frame), tag and key.
fn op_head(r: &mut Reader, kind: u8, seq: u64) -> Result<(u64, u8, Vec<u8>), &'static str> {
    let op_seq = if kind == KIND_COMPACTED { r.u64()? } else { seq };
    let tag = r.u8()?;
    if tag != TAG_PUT && tag != TAG_DEL {
        return Err("unknown op tag");
    }
    let klen = r.u32()? as usize;
    Ok((op_seq, tag, r.bytes(klen)?.to_vec()))
}

/// Associated data of a frame's sealed keys and metadata: where the frame lies (segment,
/// offset) and its plain prefix (kind, seq, count), so a frame copied elsewhere, or a prefix
/// edited, does not open.
fn head_ad(seg: u64, frame_off: u64, prefix: &[u8]) -> [u8; 16 + PREFIX] {
    let mut ad = [0u8; 16 + PREFIX];
    ad[..8].copy_from_slice(&seg.to_le_bytes());
    ad[8..16].copy_from_slice(&frame_off.to_le_bytes());
    ad[16..].copy_from_slice(&prefix[..PREFIX]);
    ad
}

/// A payload's plain prefix: kind (1), seq (8), count (4).
const PREFIX: usize = 13;

/// Associated data of a sealed value: the segment and the file offset it was sealed at.
pub fn value_ad(seg: u64, off: u64) -> [u8; 16] {
    let mut ad = [0u8; 16];
    ad[..8].copy_from_slice(&seg.to_le_bytes());
    ad[8..].copy_from_slice(&off.to_le_bytes());
    ad
}

/// Where one put's value lies in a finished frame: offset from the payload's start, the bytes
/// stored (sealed: value + nonce + tag), and the CRC a read checks (0 when sealed: the tag does).
#[derive(Debug, Clone, Copy)]
pub struct Placed {
    pub rel: usize,
    pub len: u32,
    pub crc: u32,
}

/// Builds a payload; `value_at` receives each put's value position relative to the payload.
pub struct PayloadBuilder {
    pub buf: Vec<u8>,
    kind: u8,
    count: u32,
    /// Each put's value position in `buf` (offset, length) and CRC, in op order.
    values: Vec<(usize, usize, u32)>,
}

impl PayloadBuilder {
    pub fn new(kind: u8, seq: u64) -> Self {
        Self::with_capacity(kind, seq, 256)
    }
    /// A builder whose buffer holds `payload` bytes of payload, and the frame around it, without
    /// growing: a commit of a large batch then needs one buffer of its size, not a chain of
    /// doublings and a copy into the frame.
    pub fn with_capacity(kind: u8, seq: u64, payload: usize) -> Self {
        let mut buf = Vec::with_capacity(payload.max(13) + FRAME_SPARE);
        buf.push(kind);
        put_u64(&mut buf, seq);
        put_u32(&mut buf, 0);
        PayloadBuilder { buf, kind, count: 0, values: Vec::new() }
    }
    /// Appends a put; returns the value's offset within the payload and its CRC.
    /// Always the current (v3) layout: a segment of an older version is never appended to.
    pub fn put(&mut self, seq: u64, key: &[u8], value: &[u8], meta: &[u8]) -> (usize, u32) {
        self.head(seq, TAG_PUT, key);
        put_u32(&mut self.buf, meta.len() as u32);
        self.buf.extend_from_slice(meta);
        put_u32(&mut self.buf, value.len() as u32);
        let c = crc(&[value]);
        put_u32(&mut self.buf, c);
        let at = self.buf.len();
        self.buf.extend_from_slice(value);
        self.values.push((at, value.len(), c));
        (at, c)
    }
    pub fn delete(&mut self, seq: u64, key: &[u8]) {
        self.head(seq, TAG_DEL, key);
    }
    fn head(&mut self, seq: u64, tag: u8, key: &[u8]) {
        if self.kind == KIND_COMPACTED {
            put_u64(&mut self.buf, seq);
        }
        self.buf.push(tag);
        put_u32(&mut self.buf, key.len() as u32);
        self.buf.extend_from_slice(key);
        self.count += 1;
    }
    pub fn set_seq(&mut self, seq: u64) {
        self.buf[1..9].copy_from_slice(&seq.to_le_bytes());
    }
    pub fn finish(mut self, buffered: bool) -> Vec<u8> {
        self.buf[9..13].copy_from_slice(&self.count.to_le_bytes());
        frame(self.buf, buffered)
    }

    /// The payload bytes a put of these lengths adds (a log payload's layout).
    #[must_use]
    pub fn put_len(key: usize, value: usize, meta: usize) -> usize {
        1 + 4 + key + 4 + meta + 4 + 4 + value
    }

    /// The payload bytes a delete of a key this long adds (a log payload's layout).
    #[must_use]
    pub fn delete_len(key: usize) -> usize {
        1 + 4 + key
    }

    /// The length of the frame [`PayloadBuilder::seal`] or [`PayloadBuilder::finish`] makes.
    pub fn frame_len(&self, sealed: bool) -> usize {
        let puts = self.values.len();
        if sealed {
            // + head length word and its blob's overhead; − each value's CRC; + each value's overhead.
            FRAME_HEADER + self.buf.len() + 4 + OVERHEAD + puts * OVERHEAD - puts * 4
        } else {
            FRAME_HEADER + self.buf.len()
        }
    }

    /// Finishes the frame that will lie at `frame_off` of segment `seg`: plain without
    /// `crypt`; with it, `kind | seq | count | head_len u32 | sealed head | sealed values…`,
    /// the head being the ops with every value and its CRC taken out. Returns each put's
    /// [`Placed`], in op order.
    pub fn seal(
        mut self,
        buffered: bool,
        crypt: Option<&Crypt>,
        seg: u64,
        frame_off: u64,
    ) -> Result<(Vec<u8>, Vec<Placed>), NoRandom> {
        self.buf[9..13].copy_from_slice(&self.count.to_le_bytes());
        let Some(c) = crypt else {
            let placed = self.values.iter().map(|&(rel, len, crc)| Placed { rel, len: len as u32, crc }).collect();
            return Ok((frame(self.buf, buffered), placed));
        };
        let mut head = Vec::with_capacity(self.buf.len());
        let mut at = 13;
        for &(v, len, _) in &self.values {
            head.extend_from_slice(&self.buf[at..v - 4]); // up to and with the value's length word
            at = v + len;
        }
        head.extend_from_slice(&self.buf[at..]);
        let mut p = Vec::with_capacity(self.frame_len(true) - FRAME_HEADER + FRAME_SPARE);
        p.extend_from_slice(&self.buf[..13]);
        put_u32(&mut p, head.len() as u32);
        // Every blob's nonce from one draw: the head's and each value's.
        let mut nonces = Nonces::draw(1 + self.values.len())?;
        c.seal_with(&mut nonces, &[AD_HEAD, &head_ad(seg, frame_off, &self.buf[..13])], &head, &mut p);
        let base = frame_off + FRAME_HEADER as u64;
        let mut placed = Vec::with_capacity(self.values.len());
        for &(v, len, _) in &self.values {
            let rel = p.len();
            let ad = value_ad(seg, base + rel as u64);
            c.seal_with(&mut nonces, &[AD_VALUE, &ad], &self.buf[v..v + len], &mut p);
            placed.push(Placed { rel, len: (len + OVERHEAD) as u32, crc: 0 });
        }
        debug_assert_eq!(p.len() + FRAME_HEADER, self.frame_len(true));
        Ok((frame(p, buffered), placed))
    }
}

/// The synced marker that follows commit `last_seq` once an fsync has made it durable.
pub fn synced_marker(last_seq: u64) -> Vec<u8> {
    PayloadBuilder::new(KIND_SYNCED, last_seq).finish(false)
}
