//! `compact()`: rewrite every live entry of the sealed segments into one compacted segment, then
//! swap the MANIFEST. Holds the writer mutex (writers wait); readers only see a pointer swap, and
//! retired segments are unlinked when the last snapshot that reads them lets go.

use crate::error::{Error, Result};
use crate::io::vfs::{VFile, write_all_at};
use crate::keydir::map::Version;
use crate::log::format::{FRAME_HEADER, KIND_COMPACTED, PayloadBuilder, SEG_HEADER, encode_seg_header};
use crate::log::manifest::SegMeta;
use crate::log::record::{Entry, Rec, SegRecs};
use crate::log::segment::{Segment, seg_name};
use crate::store::handle::Store;
use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// Frames of a compacted segment are cut at about this many payload bytes.
const FRAME_TARGET: usize = 1 << 20;

impl Store {
    /// Reclaim space held by overwritten and deleted data. Never runs implicitly.
    pub fn compact(&self) -> Result<CompactInfo> {
        let _guard = self.commit_guard()?;
        compact(self)
    }
}

fn compact(store: &Store) -> Result<CompactInfo> {
    let mut w = store.writable()?;
    store.settle(&mut w)?;
    let bytes_before = store.counters.disk_bytes.load(Ordering::Relaxed);
    // Compaction rewrites every live entry: a key directory that cannot be read whole (a hint
    // page and its segment both damaged) refuses it here, before the rotation below (whose
    // failures poison). A rotation changes no key, so this map stays the current one's.
    let (mut map, live) = store.current.load_full().keys.to_map()?;
    if w.log().len > SEG_HEADER as u64 {
        store.rotate(&mut w)?;
    }
    let cur = store.current.load_full();
    let n_sealed = w.manifest.segments.len() - 1;
    if n_sealed == 0 {
        crate::store::recovery::sweep_unlisted(&*store.vfs, &store.dir, &w.manifest);
        return Ok(CompactInfo { bytes_before, bytes_after: bytes_before });
    }
    let inputs: HashSet<u64> = w.manifest.segments[..n_sealed].iter().map(|s| s.number).collect();
    let number = w.manifest.next_segment;
    let path = store.dir.join(seg_name(number));
    let crypt = store.crypt().map(|c| &**c);

    // Until the MANIFEST names the new segment a failure changes nothing: drop the file, go on.
    let built = (|| -> Result<(Arc<dyn VFile>, u64, SegRecs)> {
        let f = crate::store::writer::create_unlisted(&*store.vfs, &path)?;
        let io = |op, e| Error::io(op, &path, e);
        write_all_at(&*f, &encode_seg_header(KIND_COMPACTED, number, 0, crypt.is_some()), 0)
            .map_err(|e| io("write", e))?;
        let mut off = SEG_HEADER as u64;
        let mut recs = SegRecs::new();
        let mut pending: Vec<(crate::log::record::Key, Entry)> = Vec::new();
        let mut pb = PayloadBuilder::new(KIND_COMPACTED, 0);
        let mut max_seq = 0;
        let flush = |pb: PayloadBuilder,
                     max_seq: u64,
                     pending: &mut Vec<(crate::log::record::Key, Entry)>,
                     off: &mut u64,
                     recs: &mut SegRecs|
         -> Result<()> {
            let mut pb = pb;
            pb.set_seq(max_seq);
            // Sealed afresh (new nonces, this segment's positions) in an encrypted store.
            let (frame, placed) = pb.seal(false, crypt, number, *off)?;
            write_all_at(&*f, &frame, *off).map_err(|e| Error::io("write", &path, e))?;
            let base = *off + FRAME_HEADER as u64;
            for ((k, mut e), at) in pending.drain(..).zip(placed) {
                e.seg = number;
                e.off = base + at.rel as u64;
                e.len = at.len;
                e.crc = at.crc;
                recs.insert(k, Rec { seq: e.seq, entry: Some(e) });
            }
            *off += frame.len() as u64;
            Ok(())
        };
        for (k, e) in &map {
            if !inputs.contains(&e.seg) {
                continue;
            }
            let value = cur.segment(e.seg).expect("version holds its segments").read_value(e)?;
            pb.put(e.seq, k, &value, e.meta.as_slice());
            max_seq = max_seq.max(e.seq);
            pending.push((k.clone(), e.clone()));
            if pb.buf.len() >= FRAME_TARGET {
                let full = std::mem::replace(&mut pb, PayloadBuilder::new(KIND_COMPACTED, 0));
                flush(full, max_seq, &mut pending, &mut off, &mut recs)?;
                max_seq = 0;
            }
        }
        if !pending.is_empty() {
            flush(pb, max_seq, &mut pending, &mut off, &mut recs)?;
        }
        f.sync_data().map_err(|e| io("fsync", e))?;
        store.counters.fsync();
        crate::log::hint::write(&*store.vfs, &store.dir, (number, off), &recs, &store.fsyncs(), crypt)?;
        Ok((f, off, recs))
    })();
    let (file, len, recs) = match built {
        Ok(x) => x,
        Err(e) => {
            let _ = store.vfs.remove(&path);
            let _ = store.vfs.remove(&store.dir.join(crate::log::segment::hint_name(number)));
            return Err(e);
        }
    };

    let mut m = w.manifest.clone();
    m.next_segment += 1;
    let active_meta = m.segments.pop().unwrap();
    m.segments =
        vec![SegMeta { number, kind: KIND_COMPACTED, sealed: true, first_seq: 0, last_seq: cur.seq, len }, active_meta];
    // A failed swap leaves the MANIFEST old or new; memory can no longer tell which.
    if let Err(e) = m.write(&*store.vfs, &store.dir, &store.fsyncs()) {
        return Err(store.poison(e));
    }
    w.manifest = m;
    // What this compaction retires goes when the last snapshot here lets go (below); what a
    // killed compaction (of any process) retired and never unlinked goes now, so a compaction
    // that returns leaves no erased byte in any file of the store.
    crate::store::recovery::sweep_unlisted(&*store.vfs, &store.dir, &w.manifest);

    let seg = Arc::new(Segment::new(
        number,
        crate::log::format::FORMAT_VERSION,
        &store.dir,
        file,
        store.vfs.clone(),
        store.crypt().cloned(),
    ));
    for (k, r) in recs {
        map.insert(k, r.entry.expect("compaction writes only puts"));
    }
    let mut segs = vec![seg];
    for s in cur.segments.iter() {
        if inputs.contains(&s.number) {
            s.mark_obsolete();
        } else {
            segs.push(s.clone());
        }
    }
    segs.sort_by_key(|s| s.number); // lookups binary-search by number
    let active_len = w.log().len;
    store.counters.disk_bytes.store(len + active_len, Ordering::Relaxed);
    store.current.store(Arc::new(Version::new(map, live, cur.seq, Arc::new(segs))));
    store.counters.compactions.fetch_add(1, Ordering::Relaxed);
    Ok(CompactInfo { bytes_before, bytes_after: len + active_len })
}

/// What a compaction did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CompactInfo {
    pub bytes_before: u64,
    pub bytes_after: u64,
}
