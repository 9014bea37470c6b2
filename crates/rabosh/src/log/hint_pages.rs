//! A hint in pages (FORMAT.md, "Hint file"): a small directory that open reads and checks, and
//! pages of records each sealed on its own, opened only when a read lands in one (or the key
//! directory is built). An encrypted store seals each blob with the cipher (sealing the hint
//! whole made open pay the cipher over every record, issue 21); a plain store with a CRC-32C
//! over the same associated data and the blob (checking the hint whole made open cost
//! O(hint bytes), issue 36). Records are packed ([`crate::log::hint_pack`]).
//!
//! Every sealed blob has a random nonce of its own. A page's associated data names its
//! segment, its place and the page count, and a random id the directory carries, so a page
//! moved, dropped, reordered or taken from another hint (even one of the same segment) does not
//! open (plain: does not pass its checksum).

use crate::crypto::crypt::{AD_HINT, Crypt, Nonces, OVERHEAD};
use crate::io::bytes::{crc, put_u32};
use crate::io::os::FileBytes;
use crate::log::format::{FORMAT_VERSION, Reader};
use crate::log::hint_pack::unpack;
use crate::log::hint_rec::{ActiveTail, RawRec, read_rec};
#[cfg(feature = "testkit")]
use crate::log::record::SegRecs;
use crate::log::record::{Entry, Key};

/// An encrypted store's paged hint.
pub(crate) const MAGIC: &[u8; 8] = b"RABOSHHP";
/// A plain store's: the same layout, each blob followed by its CRC-32C instead of sealed.
pub(crate) const PLAIN_MAGIC: &[u8; 8] = b"RABOSHHC";
/// A plain blob's checksum.
const CRC_LEN: usize = 4;
/// Records per page: a point read opens about 8 KiB at 120-byte records.
pub(crate) const PAGE_RECS: usize = 64;
pub(crate) const ID: usize = 16;
pub(crate) const AD_DIR: &[u8] = b"dir";
const AD_PAGE: &[u8] = b"page";
pub(crate) const FLAG_ACTIVE: u32 = 1;
/// The pages hold packed records ([`crate::log::hint_pack`]); without it (encrypted hints
/// written before packing) the plain record layout.
pub(crate) const FLAG_PACKED: u32 = 2;

/// How each blob is sealed: with the store's cipher, or (plain store) followed by a CRC-32C of
/// its associated data and bytes.
pub(crate) fn seal_blob(seal: Option<(&Crypt, &mut Nonces)>, ad: &[&[u8]], plain: &[u8], out: &mut Vec<u8>) {
    if let Some((c, nonces)) = seal {
        c.seal_with(nonces, ad, plain, out);
    } else {
        out.extend_from_slice(plain);
        put_u32(out, crc32c::crc32c_append(crc(ad), plain));
    }
}

/// A blob's plain bytes: opened into `into` (cipher), or borrowed from `blob` once its
/// checksum holds. `None`: damage.
fn open_blob<'a>(seal: Option<&Crypt>, ad: &[&[u8]], blob: &'a [u8], into: &'a mut Vec<u8>) -> Option<&'a [u8]> {
    if let Some(c) = seal {
        c.open_to(ad, blob, into)?;
        return Some(&into[..]);
    }
    let (body, sum) = blob.split_at(blob.len().checked_sub(CRC_LEN)?);
    let ok = crc32c::crc32c_append(crc(ad), body) == u32::from_le_bytes(sum.try_into().ok()?);
    ok.then_some(body)
}

pub(crate) fn magic(seal: Option<&Crypt>) -> &'static [u8; 8] {
    if seal.is_some() { MAGIC } else { PLAIN_MAGIC }
}

/// A blob's overhead: the cipher's nonce and tag, or the checksum.
pub(crate) fn overhead(seal: Option<&Crypt>) -> usize {
    if seal.is_some() { OVERHEAD } else { CRC_LEN }
}

pub(crate) fn dir_ad(number: u64) -> [u8; 8] {
    number.to_le_bytes()
}

/// A page's associated data: its segment, the hint's id, its place and the page count.
pub(crate) struct PageAd {
    number: [u8; 8],
    id: [u8; ID],
    index: [u8; 4],
    npages: [u8; 4],
}

pub(crate) fn page_ad(number: u64, id: &[u8; ID], index: u32, npages: u32) -> PageAd {
    PageAd { number: number.to_le_bytes(), id: *id, index: index.to_le_bytes(), npages: npages.to_le_bytes() }
}

impl PageAd {
    pub fn parts(&self) -> [&[u8]; 6] {
        [AD_HINT, AD_PAGE, &self.number, &self.id, &self.index, &self.npages]
    }
}

/// Where a page's sealed bytes lie and what it holds.
pub(crate) struct PageRef {
    /// Where its first key ends in [`Pages::firsts`] (it starts where the previous one ends).
    first_end: u32,
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
    packed: bool,
    id: [u8; ID],
    /// The hint file: mapped where the system can (its pages out of resident memory once the
    /// directory is checked; a page's blob is read back when it is opened), else read.
    file: FileBytes,
    base: usize,
    pub refs: Vec<PageRef>,
    /// Every page's first key, one after another: one block a search walks, not an allocation
    /// a page (a million keys make some 15,000 pages a run).
    firsts: Vec<u8>,
}

/// The directory of the paged hint `file` of segment `number` at `seg_len`; `None` when it does
/// not open (`seal`: the store's cipher, or `None`: checksummed) or does not describe that
/// segment (the hint is then rebuilt, as any damaged one). Only the directory is read: what
/// open pays for a paged hint.
pub(crate) fn directory(seal: Option<&Crypt>, file: FileBytes, number: u64, seg_len: u64) -> Option<Directory> {
    if file.len() < 12 || &file[..8] != magic(seal) || file.len() > u32::MAX as usize {
        return None;
    }
    let dlen = u32::from_le_bytes(file[8..12].try_into().ok()?) as usize;
    let base = 12usize.checked_add(dlen)?;
    let mut opened = Vec::new();
    let d = open_blob(seal, &[AD_HINT, AD_DIR, &dir_ad(number)], file.get(12..base)?, &mut opened)?;
    let mut r = Reader::new(d);
    let mut parse = || -> Result<(Directory, u64), &'static str> {
        let id: [u8; ID] = r.bytes(ID)?.try_into().map_err(|_| "id")?;
        let version = r.u32()?;
        let flags = r.u32()?;
        // A plain store's hints are packed from the first (an unpacked one is not ours).
        let packed = flags & FLAG_PACKED != 0;
        if version != FORMAT_VERSION || flags & !(FLAG_ACTIVE | FLAG_PACKED) != 0 || (seal.is_none() && !packed) {
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
        let mut firsts: Vec<u8> = Vec::new();
        let mut total = 0u64;
        for _ in 0..npages {
            let count = r.u32()?;
            let at = r.u64()? as usize;
            let len = r.u32()? as usize;
            let klen = r.u32()? as usize;
            let first = r.bytes(klen)?;
            let inside = base.checked_add(at).and_then(|s| s.checked_add(len)).is_some_and(|e| e <= file.len());
            let prev_start = refs.len().checked_sub(2).map_or(0, |j| refs[j].first_end as usize);
            let ascends = refs.last().is_none_or(|p| &firsts[prev_start..p.first_end as usize] < first);
            if count == 0 || !inside || !ascends {
                return Err("page");
            }
            total += u64::from(count);
            firsts.extend_from_slice(first);
            let first_end = u32::try_from(firsts.len()).map_err(|_| "page")?;
            refs.push(PageRef { first_end, count, at, len });
        }
        if !r.done() || total != count {
            return Err("count");
        }
        let file_bytes = FileBytes::Read(Vec::new());
        let pages = Pages { number, seg_len, version, packed, id, file: file_bytes, base, refs, firsts };
        Ok((Directory { dels, tail, seqs, pages }, count))
    };
    let (mut dir, _) = parse().ok()?;
    file.release_pages();
    dir.pages.file = file;
    Some(dir)
}

/// One opened page: its records in the plain layout and where each starts.
pub(crate) struct Page {
    pub buf: Vec<u8>,
    pub offs: Vec<u32>,
}

impl Pages {
    pub fn version(&self) -> u32 {
        self.version
    }

    /// Page `i`'s first key.
    pub fn first(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.refs[i - 1].first_end as usize };
        &self.firsts[start..self.refs[i].first_end as usize]
    }

    /// The mapped file's pages out of resident memory ([`FileBytes::release_pages`]): an opened
    /// page is a copy, so the bytes it came from are needed again only to open it again.
    pub fn release_pages(&self) {
        self.file.release_pages();
    }

    /// How many bytes page `i`'s sealed blob takes in the file.
    pub fn blob_len(&self, i: usize) -> usize {
        self.refs[i].len
    }

    /// Page `i` opened and checked (see [`Pages::walk`]), kept for point reads. `None`: damage.
    pub fn open(&self, seal: Option<&Crypt>, i: usize) -> Option<Page> {
        let mut buf = Vec::new();
        self.expand(seal, i, &mut Vec::new(), &mut buf)?;
        let mut offs = Vec::with_capacity(self.refs[i].count as usize);
        self.walk(i, &buf, |at, _| offs.push(at))?;
        Some(Page { buf, offs })
    }

    /// Page `i`'s records decoded onto `out` (segment `number`'s entries), each parsed once as
    /// it is checked: the key directory's build, which keeps no page. `scratch` is reused from
    /// page to page. `None`: damage (what was pushed onto `out` is then to be dropped).
    pub fn decode(
        &self,
        seal: Option<&Crypt>,
        i: usize,
        scratch: &mut (Vec<u8>, Vec<u8>),
        out: &mut Vec<(Key, Option<Entry>)>,
    ) -> Option<()> {
        self.expand(seal, i, &mut scratch.0, &mut scratch.1)?;
        self.walk(i, &scratch.1, |_, rec| out.push((Key::from(rec.key), rec.entry(self.number))))
    }

    /// Page `i`'s records in the plain layout into `into` (`opened`: room for a sealed page's
    /// plaintext).
    fn expand(&self, seal: Option<&Crypt>, i: usize, opened: &mut Vec<u8>, into: &mut Vec<u8>) -> Option<()> {
        let p = &self.refs[i];
        let blob = self.file.get(self.base + p.at..self.base + p.at + p.len)?;
        let ad = page_ad(self.number, &self.id, i as u32, self.refs.len() as u32);
        crate::probe::count_page_opened();
        let plain = open_blob(seal, &ad.parts(), blob, opened)?;
        if self.packed {
            unpack(plain, p.count, into)
        } else {
            into.clear();
            into.extend_from_slice(plain);
            Some(())
        }
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
                None => rec.key == self.first(i),
                Some(prev) => prev < rec.key,
            };
            if !ordered {
                return None;
            }
            prev = Some(rec.key);
            each(at, rec);
        }
        let next = (i + 1 < self.refs.len()).then(|| self.first(i + 1));
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
fn directory_any(c: Option<&Crypt>, file: &[u8], number: u64) -> Option<Directory> {
    let dlen = u32::from_le_bytes(file.get(8..12)?.try_into().ok()?) as usize;
    let mut opened = Vec::new();
    let d = open_blob(c, &[AD_HINT, AD_DIR, &dir_ad(number)], file.get(12..12 + dlen)?, &mut opened)?;
    let seg_len = u64::from_le_bytes(d.get(ID + 16..ID + 24)?.try_into().ok()?);
    directory(c, FileBytes::Read(file.to_vec()), number, seg_len)
}

#[cfg(feature = "testkit")]
/// Every sealed blob of a paged hint whose directory opens (offset, length): the directory's,
/// then each page's. For `sealed::sealed_blobs` (the nonce property test).
pub(crate) fn blobs(c: Option<&Crypt>, file: &[u8], number: u64) -> Option<Vec<(usize, usize)>> {
    let d = directory_any(c, file, number)?;
    let dlen = d.pages.base - 12;
    Some(std::iter::once((12, dlen)).chain(d.pages.blobs()).collect())
}

#[cfg(feature = "testkit")]
/// What a paged hint holds, opened whole (its segment's length, its records, its tail): for
/// the test that a store in the layout main wrote before pages still opens. `None` when it
/// does not open whole.
pub(crate) fn open_whole(c: Option<&Crypt>, file: &[u8], number: u64) -> Option<(u64, SegRecs, Option<ActiveTail>)> {
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
