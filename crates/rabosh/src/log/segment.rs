//! Segment files: naming, the shared handle (unlinked when its last holder drops), value reads,
//! and the recovery scan with its torn-tail / corruption rules.

use crate::crypto::crypt::{AD_VALUE, Crypt};
use crate::error::{Error, Result};
use crate::io::bytes::crc;
use crate::io::vfs::{VFile, Vfs, read_exact_at};
use crate::log::format::value_ad;
use crate::log::format::{
    FRAME_HEADER, HeaderError, KIND_COMPACTED, KIND_LOG, KIND_SYNCED, SEG_HEADER, decode_payload, decode_seg_header,
    frame_crc_ok, frame_header,
};
use crate::log::record::{Entry, Key, Rec, SegRecs};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

pub fn seg_name(n: u64) -> String {
    format!("{n:010}.seg")
}
pub fn hint_name(n: u64) -> String {
    format!("{n:010}.hint")
}

/// `0000000042.seg` → (42, "seg"); anything not in our exact naming → None.
pub fn parse_numbered(name: &str) -> Option<(u64, &str)> {
    let (num, ext) = name.split_once('.')?;
    if num.len() != 10 || !num.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    matches!(ext, "seg" | "hint" | "hint.tmp").then(|| (num.parse().ok().unwrap_or(0), ext))
}

/// Segment files this process has open (by path, with how many handles): a sweep of unlisted
/// files leaves these to their holders, which unlink them when they let go if retired.
fn live() -> &'static Mutex<HashMap<PathBuf, usize>> {
    static LIVE: OnceLock<Mutex<HashMap<PathBuf, usize>>> = OnceLock::new();
    LIVE.get_or_init(Default::default)
}

/// Whether this process holds segment `number` of the store in `dir` open.
pub(crate) fn held_here(dir: &Path, number: u64) -> bool {
    live().lock().unwrap_or_else(std::sync::PoisonError::into_inner).contains_key(&dir.join(seg_name(number)))
}

/// An open segment. Readers and the writer share it through `Arc`; when compaction retires it,
/// the file is unlinked only after the last snapshot that can see it lets go.
#[derive(Debug)]
pub struct Segment {
    pub number: u64,
    /// Format version of its header: how its frames are laid out.
    pub version: u32,
    pub path: PathBuf,
    hint_path: PathBuf,
    file: Arc<dyn VFile>,
    vfs: Arc<dyn Vfs>,
    obsolete: AtomicBool,
    /// The data key its frames and values are sealed with (an encrypted store).
    crypt: Option<Arc<Crypt>>,
}

#[derive(Debug)]
struct Closed;
impl VFile for Closed {
    fn read_at(&self, _: &mut [u8], _: u64) -> std::io::Result<usize> {
        Err(std::io::Error::other("closed"))
    }
    fn write_at(&self, _: &[u8], _: u64) -> std::io::Result<usize> {
        Err(std::io::Error::other("closed"))
    }
    fn sync_data(&self) -> std::io::Result<()> {
        Err(std::io::Error::other("closed"))
    }
    fn set_len(&self, _: u64) -> std::io::Result<()> {
        Err(std::io::Error::other("closed"))
    }
    fn len(&self) -> std::io::Result<u64> {
        Err(std::io::Error::other("closed"))
    }
}

impl Segment {
    pub fn new(
        number: u64,
        version: u32,
        dir: &Path,
        file: Arc<dyn VFile>,
        vfs: Arc<dyn Vfs>,
        crypt: Option<Arc<Crypt>>,
    ) -> Segment {
        *live()
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .entry(dir.join(seg_name(number)))
            .or_insert(0) += 1;
        Segment {
            number,
            version,
            path: dir.join(seg_name(number)),
            hint_path: dir.join(hint_name(number)),
            file,
            vfs,
            obsolete: AtomicBool::new(false),
            crypt,
        }
    }

    pub fn file(&self) -> &dyn VFile {
        &*self.file
    }

    /// The file handle itself, for a run that may rescan the segment later.
    pub(crate) fn shared_file(&self) -> Arc<dyn VFile> {
        self.file.clone()
    }

    pub fn crypt(&self) -> Option<&Crypt> {
        self.crypt.as_deref()
    }

    pub fn mark_obsolete(&self) {
        self.obsolete.store(true, Ordering::SeqCst);
    }

    pub fn read_value(&self, e: &Entry) -> Result<Vec<u8>> {
        let mut buf = vec![0u8; e.len as usize];
        read_exact_at(&*self.file, &mut buf, e.off).map_err(|err| {
            if err.kind() == std::io::ErrorKind::UnexpectedEof {
                self.corrupt(e.off, "value lies past the end of the segment")
            } else {
                Error::io("read", &self.path, err)
            }
        })?;
        if let Some(c) = &self.crypt {
            // The tag stands in for the CRC; the offset in the associated data makes a value
            // sealed anywhere else (or a stale entry) fail rather than answer.
            return c
                .open_owned(&[AD_VALUE, &value_ad(self.number, e.off)], buf)
                .ok_or_else(|| self.corrupt(e.off, "sealed value does not authenticate"));
        }
        if crc(&[&buf]) != e.crc {
            return Err(self.corrupt(e.off, "value checksum mismatch"));
        }
        Ok(buf)
    }

    fn corrupt(&self, offset: u64, reason: &str) -> Error {
        Error::Corruption { file: self.path.clone(), offset, reason: reason.into() }
    }
}

impl Drop for Segment {
    fn drop(&mut self) {
        {
            let mut live = live().lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            if let Some(n) = live.get_mut(&self.path) {
                *n -= 1;
                if *n == 0 {
                    live.remove(&self.path);
                }
            }
        }
        if self.obsolete.load(Ordering::SeqCst) {
            // Close our handle first: Windows refuses to delete an open file.
            self.file = Arc::new(Closed);
            // Failure leaves an unlisted file that the next open sweeps.
            let _ = self.vfs.remove(&self.path);
            let _ = self.vfs.remove(&self.hint_path);
        }
    }
}

/// What a scan of one segment yields.
pub struct Scanned {
    pub recs: SegRecs,
    /// Seq of the last commit found (log), or `None` when the segment holds no frame.
    pub last_seq: Option<u64>,
    /// Bytes of intact frames (plus header); equals the file length unless a torn tail was found.
    pub valid_len: u64,
    /// Commit frames (synced markers are not counted).
    pub records: u64,
    /// Why the tail past `valid_len` was dropped.
    pub torn: Option<String>,
    /// The last intact frame is a commit (not a synced marker, not the bare header).
    pub ends_with_commit: bool,
}

/// Reads and checks the header of a segment file; returns its format version.
/// `encrypted`: whether the store is (a segment of the other mode is Corruption, never read).
pub fn check_header(
    f: &dyn VFile,
    path: &Path,
    (number, kind, encrypted): (u64, u8, bool),
    first_seq: u64,
) -> Result<u32> {
    let mut h = [0u8; SEG_HEADER];
    let corrupt = |reason: String| Error::Corruption { file: path.to_path_buf(), offset: 0, reason };
    read_exact_at(f, &mut h, 0).map_err(|e| {
        if e.kind() == std::io::ErrorKind::UnexpectedEof {
            corrupt("segment shorter than its header".into())
        } else {
            Error::io("read", path, e)
        }
    })?;
    let hd = decode_seg_header(&h).map_err(|e| match e {
        HeaderError::Newer(version) => Error::Unsupported { file: path.to_path_buf(), version },
        HeaderError::Bad(r) => corrupt(r.into()),
    })?;
    if hd.number != number {
        return Err(corrupt(format!("header names segment {} but the file is segment {number}", hd.number)));
    }
    if hd.encrypted != encrypted {
        return Err(corrupt(if encrypted {
            "a plain segment in an encrypted store".into()
        } else {
            "an encrypted segment in a plain store (is its KEY file missing?)".into()
        }));
    }
    if hd.kind != kind {
        return Err(corrupt(format!("segment kind {} where MANIFEST lists kind {kind}", hd.kind)));
    }
    if kind == KIND_LOG && hd.first_seq != first_seq {
        return Err(corrupt(format!(
            "segment starts at seq {} but the previous segment ends at seq {}",
            hd.first_seq,
            first_seq.wrapping_sub(1)
        )));
    }
    Ok(hd.version)
}

/// Buffered sequential reads over a positional file.
struct Chunks<'a> {
    f: &'a dyn VFile,
    buf: Vec<u8>,
    /// File offset of `buf[0]` and how many bytes from there are loaded.
    at: u64,
    valid: usize,
    file_len: u64,
    /// Bytes the next refill reads ahead: doubled per refill up to 1 MiB, so a long scan reads
    /// in large chunks while a catch-up reading one new frame before the zeros ahead of the log
    /// (FORMAT.md, "Zeros ahead") does not read a megabyte of them.
    ahead: usize,
}

impl<'a> Chunks<'a> {
    fn new(f: &'a dyn VFile, file_len: u64) -> Self {
        Chunks { f, buf: Vec::new(), at: 0, valid: 0, file_len, ahead: 16 << 10 }
    }

    fn get(&mut self, off: u64, len: usize) -> std::io::Result<&[u8]> {
        let end = off + len as u64;
        if off < self.at || end > self.at + self.valid as u64 {
            // Never past the end: a small file costs only its size.
            let want = len.max(self.ahead.min(self.file_len.saturating_sub(off) as usize));
            self.ahead = (self.ahead * 2).min(1 << 20);
            if self.buf.len() < want {
                self.buf = vec![0u8; want];
            }
            let mut got = 0;
            while got < want {
                let n = self.f.read_at(&mut self.buf[got..want], off + got as u64)?;
                if n == 0 {
                    break;
                }
                got += n;
            }
            self.at = off;
            self.valid = got;
            if got < len {
                return Err(std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "short read"));
            }
        }
        let s = (off - self.at) as usize;
        Ok(&self.buf[s..s + len])
    }
}

/// How a scan judges a defect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScanMode {
    /// Any defect is corruption.
    Sealed,
    /// The active segment: a defect is a torn tail unless the bytes were durable — below the
    /// `synced` length the synced record vouches for, or followed by an intact frame that
    /// proves it (a commit written without the buffered flag, or a synced marker; see
    /// [`probe_behind`]); then it is corruption.
    ///
    /// Zeros from a frame boundary to the end of the file are the zeros a writer puts ahead of
    /// the log (FORMAT.md, "Zeros ahead"): the log ends there. `trust_zeros`: a zero frame header
    /// alone says so — true of what live processes wrote (a write lands in order, so a frame
    /// begun has its header); after a power loss (open) every byte to the end is checked.
    Active { synced: u64, trust_zeros: bool },
}

/// Scans a segment from its first frame.
/// `next_seq`: for a log segment, the seq its first commit must carry. `version`: its header's.
/// `crypt`: the data key of an encrypted store.
pub fn scan(
    f: &dyn VFile,
    path: &Path,
    id: (u64, u32, u8),
    next_seq: u64,
    mode: ScanMode,
    crypt: Option<&Crypt>,
) -> Result<Scanned> {
    scan_from(f, path, id, SEG_HEADER as u64, next_seq, mode, crypt)
}

/// Scans from offset `from` (a frame boundary already read): shared mode's catch-up reads only
/// the tail other processes appended. `recs`, `records` and `valid_len` cover `[from, ..)`.
pub fn scan_from(
    f: &dyn VFile,
    path: &Path,
    (number, version, kind): (u64, u32, u8),
    from: u64,
    next_seq: u64,
    mode: ScanMode,
    crypt: Option<&Crypt>,
) -> Result<Scanned> {
    let file_len = f.len().map_err(|e| Error::io("stat", path, e))?;
    let corrupt = |offset: u64, reason: String| Error::Corruption { file: path.to_path_buf(), offset, reason };
    let mut ch = Chunks::new(f, file_len);
    let mut out = Scanned {
        recs: SegRecs::new(),
        last_seq: None,
        valid_len: from,
        records: 0,
        torn: None,
        ends_with_commit: false,
    };
    let mut expect = next_seq;
    let mut off = from;
    while off < file_len {
        if let ScanMode::Active { synced, trust_zeros } = mode
            && off >= synced
            && zeros_end(&mut ch, off, file_len, trust_zeros).map_err(|e| Error::io("read", path, e))?
        {
            break;
        }
        // A bad frame: classify, then stop.
        let bad = match read_frame(&mut ch, off, file_len, path)? {
            Ok((payload_len, buffered, payload)) => match decode_payload(&payload, off, version, crypt, number) {
                Err(r) => return Err(corrupt(off, format!("checksummed frame does not decode: {r}"))),
                Ok(fr) => {
                    let marker = kind == KIND_LOG && fr.kind == KIND_SYNCED;
                    if fr.kind != kind && !marker {
                        return Err(corrupt(off, "frame kind does not match its segment".into()));
                    }
                    if buffered && fr.kind != KIND_LOG {
                        return Err(corrupt(off, "only a log commit can carry the buffered flag".into()));
                    }
                    if marker {
                        // It covers the commit just read; it takes no seq of its own.
                        if fr.seq != expect.wrapping_sub(1) {
                            return Err(corrupt(
                                off,
                                format!(
                                    "synced marker names commit {} after commit {}",
                                    fr.seq,
                                    expect.wrapping_sub(1)
                                ),
                            ));
                        }
                    } else if kind == KIND_LOG {
                        if fr.seq != expect {
                            return Err(corrupt(
                                off,
                                format!("sequence gap: expected commit {expect}, found commit {}", fr.seq),
                            ));
                        }
                        expect += 1;
                        out.last_seq = Some(fr.seq);
                    } else {
                        out.last_seq = Some(out.last_seq.unwrap_or(0).max(fr.seq));
                    }
                    for op in fr.ops {
                        let key: Key = op.key.into();
                        let entry = op.put.map(|(meta, voff, len, vcrc)| Entry {
                            seq: op.seq,
                            meta,
                            seg: number,
                            off: voff,
                            len,
                            crc: vcrc,
                        });
                        out.recs.insert(key, Rec { seq: op.seq, entry });
                    }
                    if !marker {
                        out.records += 1;
                    }
                    out.ends_with_commit = !marker;
                    off += (FRAME_HEADER + payload_len) as u64;
                    out.valid_len = off;
                    continue;
                }
            },
            Err(reason) => reason,
        };
        let synced = match mode {
            ScanMode::Sealed => return Err(corrupt(off, format!("sealed segment damaged: {bad}"))),
            ScanMode::Active { synced, .. } => synced,
        };
        if off < synced {
            return Err(corrupt(
                off,
                format!("{bad}, below the {synced} bytes recorded as synced: acknowledged data would be lost"),
            ));
        }
        let behind = probe_behind(f, &mut ch, off + 1, file_len, (number, version, kind, crypt), expect, path)?;
        if let Some((at, what)) = behind.durable {
            return Err(corrupt(
                off,
                format!("{bad}, but {what} follows at offset {at}: acknowledged data would be lost"),
            ));
        }
        out.torn = Some(if behind.buffered == 0 {
            format!("{bad} at offset {off}")
        } else {
            format!(
                "{bad} at offset {off}; {} later buffered commit(s) dropped with it (never synced)",
                behind.buffered
            )
        });
        break;
    }
    if let ScanMode::Active { synced, .. } = mode
        && file_len < synced
    {
        return Err(corrupt(
            file_len,
            format!("segment is {file_len} bytes but {synced} were recorded as synced: acknowledged data is missing"),
        ));
    }
    Ok(out)
}

/// Whether the log ends at `off` in zeros written ahead: a zero frame header, and (unless
/// `trust`) nothing but zeros to the end of the file.
fn zeros_end(ch: &mut Chunks, off: u64, file_len: u64, trust: bool) -> std::io::Result<bool> {
    let head = (FRAME_HEADER as u64).min(file_len - off) as usize;
    if ch.get(off, head)?.iter().any(|&b| b != 0) {
        return Ok(false);
    }
    let mut at = off + head as u64;
    while !trust && at < file_len {
        let n = (file_len - at).min(1 << 16) as usize;
        if ch.get(at, n)?.iter().any(|&b| b != 0) {
            return Ok(false);
        }
        at += n as u64;
    }
    Ok(true)
}

type FrameRead = std::result::Result<(usize, bool, Vec<u8>), String>;

/// One frame at `off`: payload length, buffered flag and payload, or why it is not intact.
fn read_frame(ch: &mut Chunks, off: u64, file_len: u64, path: &Path) -> Result<FrameRead> {
    if file_len - off < FRAME_HEADER as u64 {
        return Ok(Err("truncated frame header".into()));
    }
    let h: [u8; FRAME_HEADER] = ch.get(off, FRAME_HEADER).map_err(|e| Error::io("read", path, e))?.try_into().unwrap();
    let head = match frame_header(&h) {
        Ok(x) => x,
        Err(r) => return Ok(Err(r.into())),
    };
    if off + (FRAME_HEADER + head.len) as u64 > file_len {
        return Ok(Err("frame runs past the end of the file".into()));
    }
    let payload = ch.get(off + FRAME_HEADER as u64, head.len).map_err(|e| Error::io("read", path, e))?.to_vec();
    if !frame_crc_ok(&h, &payload, head.crc) {
        return Ok(Err("frame checksum mismatch".into()));
    }
    Ok(Ok((head.len, head.buffered, payload)))
}

/// What lies behind a bad frame of the active segment.
struct Behind {
    /// The first intact frame proving the bytes before it were durable: (offset, description).
    durable: Option<(u64, String)>,
    /// Intact buffered commits with unseen seqs found (they go with the torn tail).
    buffered: u64,
}

/// Probes every offset from `from` for intact frames that belong after what was read.
///
/// A commit without the buffered flag was written when every byte before it was durable (a
/// Sync-mode commit follows the previous commit's fsync, or open's); a synced marker is written
/// only after an fsync. Either one behind a bad frame means the bad frame was durable once:
/// damage, not a crash. Buffered commits prove nothing: unsynced writes reach disk in any order.
///
/// Linear in the bytes probed whatever they hold (values may repeat a frame magic and a huge
/// length word at every offset): a candidate's checksum comes from prefix CRCs ([`RangeCrc`]),
/// not from re-reading its claimed payload, and a payload is read only for a fresh candidate
/// that then either ends the probe or is skipped whole.
fn probe_behind(
    f: &dyn VFile,
    ch: &mut Chunks,
    from: u64,
    file_len: u64,
    (number, version, kind, crypt): (u64, u32, u8, Option<&Crypt>),
    expect: u64,
    path: &Path,
) -> Result<Behind> {
    let magic = crate::log::format::FRAME_MAGIC.to_le_bytes();
    let mut out = Behind { durable: None, buffered: 0 };
    let rc = RangeCrc::build(f, from, file_len, path)?;
    let mut p = from;
    while p + FRAME_HEADER as u64 <= file_len {
        let h: [u8; FRAME_HEADER] =
            ch.get(p, FRAME_HEADER).map_err(|e| Error::io("read", path, e))?.try_into().unwrap();
        let head = match frame_header(&h) {
            Ok(head) if h[..4] == magic => head,
            _ => {
                p += 1;
                continue;
            }
        };
        let body = p + FRAME_HEADER as u64;
        let end = body + head.len as u64;
        // A payload shorter than kind + seq + count cannot be a frame of ours.
        if end > file_len || head.len < 13 {
            p += 1;
            continue;
        }
        let payload_crc = rc.range(f, body, end, path)?;
        if crc32c::crc32c_combine(crc(&[&h[4..8]]), payload_crc, head.len) != head.crc {
            p += 1;
            continue;
        }
        let ph: [u8; 13] = ch.get(body, 13).map_err(|e| Error::io("read", path, e))?.try_into().unwrap();
        let fkind = ph[0];
        let seq = u64::from_le_bytes(ph[1..9].try_into().unwrap());
        // Seqs already read are stale bytes (or a copy inside a value), not evidence.
        let fresh = match fkind {
            KIND_LOG => kind == KIND_LOG && seq >= expect,
            KIND_SYNCED => kind == KIND_LOG && !head.buffered && seq.wrapping_add(1) >= expect,
            KIND_COMPACTED => kind == KIND_COMPACTED,
            _ => false,
        };
        if !fresh {
            p += 1;
            continue;
        }
        if head.buffered && fkind == KIND_LOG {
            out.buffered += 1;
        } else {
            let mut payload = vec![0u8; head.len];
            read_exact_at(f, &mut payload, body).map_err(|e| Error::io("read", path, e))?;
            if decode_payload(&payload, p, version, crypt, number).is_ok() {
                let what = match fkind {
                    KIND_SYNCED => format!("a synced marker (after commit {seq})"),
                    _ => format!("an intact commit (seq {seq}) written after an fsync"),
                };
                out.durable = Some((p, what));
                return Ok(out);
            }
        }
        // Skip its body: a frame copied inside a value is not evidence either.
        p = end;
    }
    Ok(out)
}

/// CRC-32C of any byte range of `[base, end)` of a file from one sequential pass: the CRC of
/// every prefix ending on a `STEP` boundary is kept, so a range costs two reads of under `STEP`
/// bytes and two CRC shifts, however long it is.
struct RangeCrc {
    base: u64,
    marks: Vec<u32>,
}

const STEP: u64 = 32;

impl RangeCrc {
    fn build(f: &dyn VFile, base: u64, end: u64, path: &Path) -> Result<RangeCrc> {
        let mut marks = Vec::with_capacity(((end - base) / STEP + 1) as usize);
        let mut c = 0u32;
        marks.push(c);
        let mut buf = vec![0u8; (1 << 20).min((end - base) as usize)];
        let mut at = base;
        while at < end {
            let n = ((end - at) as usize).min(buf.len());
            read_exact_at(f, &mut buf[..n], at).map_err(|e| Error::io("read", path, e))?;
            // Chunks are whole STEPs (1 MiB is a multiple), except the last.
            for piece in buf[..n].chunks(STEP as usize) {
                c = crc32c::crc32c_append(c, piece);
                if piece.len() == STEP as usize {
                    marks.push(c);
                }
            }
            at += n as u64;
        }
        Ok(RangeCrc { base, marks })
    }

    /// CRC of the bytes from `base` to `x`.
    fn prefix(&self, f: &dyn VFile, x: u64, path: &Path) -> Result<u32> {
        let i = (x - self.base) / STEP;
        let from = self.base + i * STEP;
        let mut tail = [0u8; STEP as usize];
        let tail = &mut tail[..(x - from) as usize];
        read_exact_at(f, tail, from).map_err(|e| Error::io("read", path, e))?;
        Ok(crc32c::crc32c_append(self.marks[i as usize], tail))
    }

    /// CRC of the bytes `[a, b)`: prefix(b) is prefix(a) shifted over the range, xor the range's.
    fn range(&self, f: &dyn VFile, a: u64, b: u64, path: &Path) -> Result<u32> {
        let (pa, pb) = (self.prefix(f, a, path)?, self.prefix(f, b, path)?);
        Ok(pb ^ crc32c::crc32c_combine(pa, 0, (b - a) as usize))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Mem(Vec<u8>);
    impl VFile for Mem {
        fn read_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
            let o = (offset as usize).min(self.0.len());
            let n = buf.len().min(self.0.len() - o);
            buf[..n].copy_from_slice(&self.0[o..o + n]);
            Ok(n)
        }
        fn write_at(&self, _: &[u8], _: u64) -> std::io::Result<usize> {
            unreachable!()
        }
        fn sync_data(&self) -> std::io::Result<()> {
            Ok(())
        }
        fn set_len(&self, _: u64) -> std::io::Result<()> {
            unreachable!()
        }
        fn len(&self) -> std::io::Result<u64> {
            Ok(self.0.len() as u64)
        }
    }

    #[test]
    fn range_crc_equals_the_crc_of_the_range() {
        let data: Vec<u8> = (0..5000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
        let f = Mem(data.clone());
        let p = Path::new("mem");
        for base in [0u64, 7, 40] {
            let rc = RangeCrc::build(&f, base, data.len() as u64, p).unwrap();
            for (a, b) in [(base, base), (base, 5000), (base + 1, base + 2), (100, 133), (129, 4999), (64, 96)] {
                let want = crc32c::crc32c(&data[a as usize..b as usize]);
                assert_eq!(rc.range(&f, a, b, p).unwrap(), want, "base {base} [{a}, {b})");
            }
        }
    }
}
