//! A hint file read into what a key directory stands on: a run kept as read (keys in order,
//! every hint this code writes) or decoded records. Open reads every segment's this way, and a
//! seal reads back the hint it just wrote.

use crate::crypto::crypt::Crypt;
use crate::io::vfs::Vfs;
use crate::keydir::paged_run::{PagedRun, Rescan};
use crate::keydir::runs::Run;
use crate::log::format::KIND_LOG;
use crate::log::hint::HintFile;
use crate::log::hint_rec::ActiveTail;
use crate::log::record::{Entry, Key};
use crate::log::segment::Segment;
use std::path::Path;
use std::sync::Arc;

/// The run of a segment this process just sealed, read back from the hint it wrote as open
/// would read it; `None` when that hint does not read back as a run (the delta then keeps the
/// segment's keys, as before).
pub(crate) fn sealed_run(
    (vfs, crypt): (&Arc<dyn Vfs>, Option<&Arc<Crypt>>),
    dir: &Path,
    seg: &Segment,
    (first_seq, last_seq, len): (u64, u64, u64),
) -> Option<Run> {
    let rescan = Rescan {
        file: seg.shared_file(),
        path: seg.path.clone(),
        id: (seg.number, seg.version, KIND_LOG),
        next_seq: first_seq,
        len,
        active: false,
        last_seq: Some(last_seq),
        vfs: vfs.clone(),
        dir: dir.to_path_buf(),
    };
    let file = crate::log::hint::read(&**vfs, dir, seg.number, crypt.map(|c| &**c))?;
    match hint_records(file, seg.number, len, crypt, rescan)?.source {
        Source::Run(run) => Some(run),
        Source::Recs(_) => None,
    }
}

/// One segment's records as open collected them.
pub(crate) enum Source {
    /// From its hint, kept as read and indexed (keys in order, the lazy path).
    Run(Run),
    /// Decoded (a scan, or a hint whose keys are not in order), in any order.
    Recs(Vec<(Key, Option<Entry>)>),
}

/// A usable hint's records, with its deletes, tail and seq range (for the active segment's
/// checks).
pub(crate) struct HintRecords {
    pub source: Source,
    pub dels: Vec<(Key, u64)>,
    pub tail: Option<ActiveTail>,
    pub seqs: Option<(u64, u64)>,
    /// Read from a whole hint (`RABOSHHT`, `RABOSHHX`), a layout no longer written: a writer
    /// rewrites it paged (FORMAT.md, "Hint file").
    pub whole: bool,
}

/// The hint in `buf` for segment `number` at `seg_len`: indexed in place when its keys are in
/// order (as every hint this code writes), decoded otherwise; `None` when it does not fit.
/// `sealed`: `buf` was opened from a sealed hint file (already authenticated whole).
pub(crate) fn hint_records(
    file: HintFile,
    number: u64,
    seg_len: u64,
    crypt: Option<&Arc<Crypt>>,
    mut rescan: Rescan,
) -> Option<HintRecords> {
    let sealed = crypt.is_some();
    let buf = match (file, crypt) {
        (HintFile::Whole(buf), _) => buf,
        (HintFile::Paged(file), _) => {
            let d = crate::log::hint_pages::directory(crypt.map(|c| &**c), file, number, seg_len)?;
            if rescan.active {
                // The scan a damaged page falls back to must find the commit the hint names.
                rescan.last_seq = Some(d.tail?.last_seq.unwrap_or(rescan.next_seq - 1));
            }
            let run = Run::Paged(Box::new(PagedRun::new(crypt.cloned(), d.pages, rescan)));
            let source = Source::Run(run);
            return Some(HintRecords { source, dels: d.dels, tail: d.tail, seqs: d.seqs, whole: false });
        }
    };
    if let Some(ix) = crate::log::hint::index(&buf, number, seg_len, sealed) {
        let run = Run::new(number, ix.version, buf, ix.offs);
        return Some(HintRecords {
            source: Source::Run(run),
            dels: ix.dels,
            tail: ix.tail,
            seqs: ix.seqs,
            whole: true,
        });
    }
    let mut recs = Vec::new();
    let h = crate::log::hint::decode(&buf, (number, seg_len), sealed, &mut recs)?;
    let seqs = recs
        .iter()
        .filter_map(|(_, e)| e.as_ref().map(|e| e.seq))
        .chain(h.dels.iter().map(|&(_, seq)| seq))
        .fold(None, |acc: Option<(u64, u64)>, s| Some(acc.map_or((s, s), |(lo, hi)| (lo.min(s), hi.max(s)))));
    Some(HintRecords { source: Source::Recs(recs), dels: h.dels, tail: h.tail, seqs, whole: true })
}

/// A segment's whole hint (`RABOSHHT`, `RABOSHHX`) rewritten paged from the run open just
/// checked (a sealed one's: tmp, fsync, rename, as any hint; the active one's as a clean close
/// writes it, with its tail), then the run's mapped pages let go again. A hint
/// whose keys were out of order (decoded, not a run) is left as it is.
pub(crate) fn migrate(
    source: &Source,
    (vfs, dir): (&dyn Vfs, &Path),
    id: (u64, u64),
    active: Option<ActiveTail>,
    fsyncs: &dyn Fn(),
    crypt: Option<&Crypt>,
) -> crate::error::Result<()> {
    let Source::Run(run) = source else { return Ok(()) };
    let Some(recs) = run.whole_recs() else { return Ok(()) };
    // The active segment's hint keeps the tail a clean close wrote in it.
    match active {
        Some(tail) => crate::log::hint::write_active_recs(vfs, dir, id, &recs, tail, crypt)?,
        None => crate::log::hint::write_recs(vfs, dir, id, &recs, fsyncs, crypt)?,
    }
    drop(recs);
    run.release_pages();
    crate::probe::count_hint_migrated();
    Ok(())
}
