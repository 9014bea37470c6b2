//! An encrypted store's hint, sealed in pages (FORMAT.md, "Sealed hint"): a small sealed
//! directory that open reads, and pages of records each sealed on its own, opened only when a
//! point read lands in one (or the key directory is built). Sealing the hint whole made open
//! pay the cipher over every record (issue 21: 2.8× a plain open's instructions).
//!
//! Every blob has a random nonce of its own. A page's associated data names its segment, its
//! place and the page count, and a random id the directory carries, so a page moved, dropped,
//! reordered or taken from another hint (even one of the same segment) does not open.

use crate::crypto::crypt::{AD_HINT, Crypt, Nonces, OVERHEAD, random};
use crate::io::bytes::{put_u32, put_u64};
use crate::io::os::FileBytes;
use crate::log::format::{FORMAT_VERSION, Reader};
use crate::log::hint_rec::{ActiveTail, RawRec, put_rec, read_rec};
use crate::log::record::{Entry, Key, SegRecs};

pub(crate) const MAGIC: &[u8; 8] = b"RABOSHHP";
/// Records per page: a point read opens about 8 KiB at 120-byte records.
const PAGE_RECS: usize = 64;
const ID: usize = 16;
const AD_DIR: &[u8] = b"dir";
const AD_PAGE: &[u8] = b"page";
const FLAG_ACTIVE: u32 = 1;

fn dir_ad(number: u64) -> [u8; 8] {
    number.to_le_bytes()
}

/// The file: magic, the sealed directory's length (u32), the sealed directory, the sealed pages.
pub(crate) fn encode(
    c: &Crypt,
    (number, seg_len): (u64, u64),
    recs: &SegRecs,
    tail: Option<ActiveTail>,
) -> Result<Vec<u8>, crate::crypto::crypt::NoRandom> {
    let all: Vec<_> = recs.iter().collect();
    let chunks: Vec<_> = all.chunks(PAGE_RECS).collect();
    let id = random::<ID>()?;
    let mut nonces = Nonces::draw(chunks.len() + 1)?;
    let npages = (chunks.len() as u32).to_le_bytes();
    let (mut pages, mut refs) = (Vec::new(), Vec::with_capacity(chunks.len()));
    let mut plain = Vec::new();
    for (i, chunk) in chunks.iter().enumerate() {
        plain.clear();
        for (k, r) in *chunk {
            put_rec(&mut plain, k, r);
        }
        let at = pages.len();
        let ad = [AD_HINT, AD_PAGE, &number.to_le_bytes(), &id[..], &(i as u32).to_le_bytes(), &npages];
        c.seal_with(&mut nonces, &ad, &plain, &mut pages);
        refs.push((chunk[0].0, chunk.len() as u32, at as u64, (pages.len() - at) as u32));
    }
    let mut d = Vec::new();
    d.extend_from_slice(&id[..]);
    put_u32(&mut d, FORMAT_VERSION);
    put_u32(&mut d, if tail.is_some() { FLAG_ACTIVE } else { 0 });
    put_u64(&mut d, number);
    put_u64(&mut d, seg_len);
    put_u64(&mut d, recs.len() as u64);
    let seqs = recs
        .values()
        .map(|r| r.seq)
        .fold(None, |acc: Option<(u64, u64)>, s| Some(acc.map_or((s, s), |(lo, hi)| (lo.min(s), hi.max(s)))));
    d.push(u8::from(seqs.is_some()));
    put_u64(&mut d, seqs.map_or(0, |s| s.0));
    put_u64(&mut d, seqs.map_or(0, |s| s.1));
    if let Some(t) = tail {
        d.push(u8::from(t.last_seq.is_some()));
        put_u64(&mut d, t.last_seq.unwrap_or(0));
        d.push(u8::from(t.ends_with_commit));
    }
    let dels: Vec<_> = recs.iter().filter(|(_, r)| r.entry.is_none()).collect();
    put_u64(&mut d, dels.len() as u64);
    for (k, r) in dels {
        put_u64(&mut d, r.seq);
        put_u32(&mut d, k.len() as u32);
        d.extend_from_slice(k);
    }
    put_u32(&mut d, refs.len() as u32);
    for (first, count, at, len) in refs {
        put_u32(&mut d, count);
        put_u64(&mut d, at);
        put_u32(&mut d, len);
        put_u32(&mut d, first.len() as u32);
        d.extend_from_slice(first);
    }
    let mut out = MAGIC.to_vec();
    put_u32(&mut out, (d.len() + OVERHEAD) as u32);
    c.seal_with(&mut nonces, &[AD_HINT, AD_DIR, &dir_ad(number)], &d, &mut out);
    out.extend_from_slice(&pages);
    Ok(out)
}

/// Where a page's sealed bytes lie and what it holds.
pub(crate) struct PageRef {
    pub first: Key,
    pub count: u32,
    at: usize,
    len: usize,
}

/// A paged hint whose directory opened and describes exactly this segment at this length.
pub(crate) struct Directory {
    pub dels: Vec<(Key, u64)>,
    pub tail: Option<ActiveTail>,
    pub seqs: Option<(u64, u64)>,
    pub pages: Pages,
}

/// The still-sealed pages of one hint, as read at open.
pub(crate) struct Pages {
    number: u64,
    seg_len: u64,
    version: u32,
    id: [u8; ID],
    /// The hint file: mapped where the system can (its pages out of resident memory once the
    /// directory is checked; a page's blob is read back when it is opened), else read.
    file: FileBytes,
    base: usize,
    pub refs: Vec<PageRef>,
}

/// The directory of the paged hint `file` of segment `number` at `seg_len`; `None` when it does
/// not open or does not describe that segment (the hint is then rebuilt, as any damaged one).
pub(crate) fn directory(c: &Crypt, file: FileBytes, number: u64, seg_len: u64) -> Option<Directory> {
    if file.len() < 12 || &file[..8] != MAGIC || file.len() > u32::MAX as usize {
        return None;
    }
    let dlen = u32::from_le_bytes(file[8..12].try_into().ok()?) as usize;
    let base = 12usize.checked_add(dlen)?;
    let d = c.open(&[AD_HINT, AD_DIR, &dir_ad(number)], file.get(12..base)?)?;
    let mut r = Reader::new(&d);
    let mut parse = || -> Result<(Directory, u64), &'static str> {
        let id: [u8; ID] = r.bytes(ID)?.try_into().map_err(|_| "id")?;
        let version = r.u32()?;
        let flags = r.u32()?;
        if version != FORMAT_VERSION || flags & !FLAG_ACTIVE != 0 {
            return Err("layout");
        }
        if r.u64()? != number || r.u64()? != seg_len {
            return Err("another segment");
        }
        let count = r.u64()?;
        let (has, lo, hi) = (r.u8()?, r.u64()?, r.u64()?);
        let seqs = match has {
            0 => None,
            1 if lo <= hi => Some((lo, hi)),
            _ => return Err("seqs"),
        };
        let tail = if flags & FLAG_ACTIVE == 0 {
            None
        } else {
            let (has_last, last, ends) = (r.u8()?, r.u64()?, r.u8()?);
            if has_last > 1 || ends > 1 {
                return Err("tail");
            }
            Some(ActiveTail { last_seq: (has_last == 1).then_some(last), ends_with_commit: ends == 1 })
        };
        let ndels = r.u64()?;
        let mut dels = Vec::new();
        for _ in 0..ndels {
            let seq = r.u64()?;
            let klen = r.u32()? as usize;
            dels.push((Key::from(r.bytes(klen)?), seq));
        }
        let npages = r.u32()?;
        let mut refs: Vec<PageRef> = Vec::new();
        let mut total = 0u64;
        for _ in 0..npages {
            let count = r.u32()?;
            let at = r.u64()? as usize;
            let len = r.u32()? as usize;
            let klen = r.u32()? as usize;
            let first = Key::from(r.bytes(klen)?);
            let inside = base.checked_add(at).and_then(|s| s.checked_add(len)).is_some_and(|e| e <= file.len());
            if count == 0 || !inside || refs.last().is_some_and(|p| p.first >= first) {
                return Err("page");
            }
            total += u64::from(count);
            refs.push(PageRef { first, count, at, len });
        }
        if !r.done() || total != count {
            return Err("count");
        }
        let pages = Pages { number, seg_len, version, id, file: FileBytes::Read(Vec::new()), base, refs };
        Ok((Directory { dels, tail, seqs, pages }, count))
    };
    let (mut dir, _) = parse().ok()?;
    file.release_pages();
    dir.pages.file = file;
    Some(dir)
}

/// One opened page: its plain records and where each starts.
pub(crate) struct Page {
    pub buf: Vec<u8>,
    pub offs: Vec<u32>,
}

impl Pages {
    pub fn version(&self) -> u32 {
        self.version
    }

    /// Page `i` opened and checked (see [`Pages::walk`]), kept for point reads. `None`: damage.
    pub fn open(&self, c: &Crypt, i: usize) -> Option<Page> {
        let mut buf = Vec::new();
        self.decrypt(c, i, &mut buf)?;
        let mut offs = Vec::with_capacity(self.refs[i].count as usize);
        self.walk(i, &buf, |at, _| offs.push(at))?;
        Some(Page { buf, offs })
    }

    /// Page `i`'s records decoded onto `out` (segment `number`'s entries), each parsed once as
    /// it is checked: the key directory's build, which keeps no page. `scratch` is reused from
    /// page to page. `None`: damage (what was pushed onto `out` is then to be dropped).
    pub fn decode(
        &self,
        c: &Crypt,
        i: usize,
        scratch: &mut Vec<u8>,
        out: &mut Vec<(Key, Option<Entry>)>,
    ) -> Option<()> {
        self.decrypt(c, i, scratch)?;
        self.walk(i, scratch, |_, rec| out.push((Key::from(rec.key), rec.entry(self.number))))
    }

    /// Page `i`'s plaintext into `into`.
    fn decrypt(&self, c: &Crypt, i: usize, into: &mut Vec<u8>) -> Option<()> {
        let p = &self.refs[i];
        let blob = self.file.get(self.base + p.at..self.base + p.at + p.len)?;
        let npages = (self.refs.len() as u32).to_le_bytes();
        let ad = [AD_HINT, AD_PAGE, &self.number.to_le_bytes(), &self.id[..], &(i as u32).to_le_bytes(), &npages];
        crate::probe::count_page_opened();
        c.open_to(&ad, blob, into)
    }

    /// Checks page `i`'s plaintext `buf`, handing `each` every record and where it starts: its
    /// records parse, lie inside the segment, and their keys strictly ascend from the
    /// directory's first key to below the next page's. `None`: damage.
    fn walk<'a>(&self, i: usize, buf: &'a [u8], mut each: impl FnMut(u32, RawRec<'a>)) -> Option<()> {
        let p = &self.refs[i];
        let mut r = Reader::new(buf);
        let mut prev: Option<&[u8]> = None;
        for _ in 0..p.count {
            let at = r.pos as u32;
            let rec = read_rec(&mut r, self.version).ok()?;
            rec.check(self.seg_len).ok()?;
            let ordered = match prev {
                None => rec.key == &p.first[..],
                Some(prev) => prev < rec.key,
            };
            if !ordered {
                return None;
            }
            prev = Some(rec.key);
            each(at, rec);
        }
        let next = self.refs.get(i + 1).map(|n| &n.first[..]);
        if !r.done() || next.is_some_and(|n| prev.is_none_or(|p| p >= n)) {
            return None;
        }
        Some(())
    }

    #[cfg(feature = "testkit")]
    /// Where each page's sealed blob lies in the file (offset, length).
    fn blobs(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.refs.iter().map(|p| (self.base + p.at, p.len))
    }
}

/// The record at `j` of an opened page.
pub(crate) fn page_rec(page: &Page, version: u32, j: usize) -> RawRec<'_> {
    let mut r = Reader { buf: &page.buf, pos: page.offs[j] as usize };
    read_rec(&mut r, version).expect("a page's records were checked when it was opened")
}

#[cfg(feature = "testkit")]
/// A paged hint's directory opened without knowing its segment's length (read from it): for
/// the test helpers below, which walk a store's files.
fn directory_any(c: &Crypt, file: &[u8], number: u64) -> Option<Directory> {
    let dlen = u32::from_le_bytes(file.get(8..12)?.try_into().ok()?) as usize;
    let d = c.open(&[AD_HINT, AD_DIR, &dir_ad(number)], file.get(12..12 + dlen)?)?;
    let seg_len = u64::from_le_bytes(d.get(ID + 16..ID + 24)?.try_into().ok()?);
    directory(c, FileBytes::Read(file.to_vec()), number, seg_len)
}

#[cfg(feature = "testkit")]
/// Every sealed blob of a paged hint whose directory opens (offset, length): the directory's,
/// then each page's. For `sealed::sealed_blobs` (the nonce property test).
pub(crate) fn blobs(c: &Crypt, file: &[u8], number: u64) -> Option<Vec<(usize, usize)>> {
    let d = directory_any(c, file, number)?;
    let dlen = d.pages.base - 12;
    Some(std::iter::once((12, dlen)).chain(d.pages.blobs()).collect())
}

#[cfg(feature = "testkit")]
/// What a paged hint holds, opened whole (its segment's length, its records, its tail): for
/// the test that a store in the layout main wrote before pages still opens. `None` when it
/// does not open whole.
pub(crate) fn open_whole(c: &Crypt, file: &[u8], number: u64) -> Option<(u64, SegRecs, Option<ActiveTail>)> {
    use crate::log::record::Rec;
    let d = directory_any(c, file, number)?;
    let mut recs = SegRecs::new();
    for i in 0..d.pages.refs.len() {
        let page = d.pages.open(c, i)?;
        for j in 0..page.offs.len() {
            let rec = page_rec(&page, d.pages.version, j);
            recs.insert(rec.key.into(), Rec { seq: rec.seq, entry: rec.entry(number) });
        }
    }
    Some((d.pages.seg_len, recs, d.tail))
}
