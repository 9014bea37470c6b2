//! Open's reads of the sealed segments' hints, two at a time. A fresh process spends most of
//! a clean open getting those files into memory and checking them — per 1.6 MB hint about
//! 0.5 ms populating the buffer, 0.2 ms of kernel copy, 0.45 ms of the checking pass (strace
//! and wall timings of the bench's 50,000 × 4 KiB store, issue 24) — one hint after another on
//! one thread while the JS thread waits with nothing to do. Each hint is read and checked
//! independently of the others (its bytes, its segment's number and length from the
//! MANIFEST), so a second thread takes every other one; open then consumes the results in
//! segment order exactly as if it had read them itself, and whatever it does not find here
//! (one sealed segment, a test filesystem) it reads as before.

use crate::crypt::Crypt;
use crate::hint::{self, HintFile, Index};
use crate::manifest::Manifest;
use crate::vfs::Vfs;
use std::path::Path;

/// A sealed segment's hint file as read, with the checking pass already run over a whole
/// buffer (`index`: `Some(None)` when it failed, `None` when it was not run).
pub(crate) struct ReadHint {
    pub file: HintFile,
    pub index: Option<Option<Index>>,
}

/// Reads and checks segment `number`'s hint (`seg_len`: its length per the MANIFEST); `None`
/// when there is no readable hint (open then scans the segment).
pub(crate) fn read_one(
    vfs: &dyn Vfs,
    dir: &Path,
    (number, seg_len): (u64, u64),
    crypt: Option<&Crypt>,
) -> Option<ReadHint> {
    let file = hint::read(vfs, dir, number, crypt)?;
    let index = match &file {
        HintFile::Whole(buf) => Some(hint::index(buf, number, seg_len, crypt.is_some())),
        HintFile::Paged(_) => None,
    };
    Some(ReadHint { file, index })
}

/// The sealed segments' hints read ahead, by segment number.
#[derive(Default)]
pub(crate) struct Prefetched(Vec<(u64, Option<ReadHint>)>);

impl Prefetched {
    /// Segment `number`'s hint as read ahead (the inner `None`: it could not be read), or
    /// `None` when it was not read ahead.
    pub fn take(&mut self, number: u64) -> Option<Option<ReadHint>> {
        let at = self.0.iter().position(|(n, _)| *n == number)?;
        Some(self.0.swap_remove(at).1)
    }
}

/// Reads every sealed segment's hint, half of them on a scoped thread of their own, when the
/// filesystem allows it and there are at least two; otherwise nothing (open reads each in turn).
pub(crate) fn prefetch(vfs: &dyn Vfs, dir: &Path, manifest: &Manifest, crypt: Option<&Crypt>) -> Prefetched {
    let sealed: Vec<(u64, u64)> = manifest.segments.iter().filter(|s| s.sealed).map(|s| (s.number, s.len)).collect();
    if sealed.len() < 2 || !vfs.concurrent_reads() {
        return Prefetched::default();
    }
    let read_all = |ids: Vec<(u64, u64)>| -> Vec<(u64, Option<ReadHint>)> {
        ids.into_iter().map(|id| (id.0, read_one(vfs, dir, id, crypt))).collect()
    };
    let mine: Vec<(u64, u64)> = sealed.iter().step_by(2).copied().collect();
    let theirs: Vec<(u64, u64)> = sealed.iter().skip(1).step_by(2).copied().collect();
    std::thread::scope(|s| {
        let helper = std::thread::Builder::new().name("rabosh-open".into()).spawn_scoped(s, || read_all(theirs));
        let mut got = read_all(mine);
        // No thread (or it panicked): nothing of its half is known, so open reads those hints
        // itself, in turn.
        if let Some(more) = helper.ok().and_then(|h| h.join().ok()) {
            got.extend(more);
        }
        Prefetched(got)
    })
}
