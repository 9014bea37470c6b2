//! Open's reads of the sealed segments' hints, two at a time. A fresh process spends most of
//! a clean open getting those files into memory and checking them — per 1.6 MB hint about
//! 0.5 ms populating the buffer, 0.2 ms of kernel copy, 0.45 ms of the checking pass (strace
//! and wall timings of the bench's 50,000 × 4 KiB store, issue 24) — one hint after another on
//! one thread while the JS thread waits with nothing to do. Each hint is read and checked
//! independently of the others (its bytes, its segment's number and length from the
//! MANIFEST), so a second thread takes its share of them; open then consumes the results in
//! segment order exactly as if it had read them itself, and whatever it does not find here
//! (one sealed segment, a test filesystem) it reads as before.

use crate::crypt::Crypt;
use crate::hint::{self, HintFile, Index};
use crate::manifest::Manifest;
use crate::vfs::Vfs;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, mpsc};

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

/// Reads every sealed segment's hint when the filesystem allows it and there are at least two,
/// this thread and a helper taking the next unread one in turn; otherwise nothing (open reads
/// each in turn). This thread never waits for a helper that has not started: a helper that gets
/// no core (a loaded machine) claims nothing, and this thread reads every hint itself, as the
/// sequential code did. It waits only for a hint the helper claimed and is still reading.
pub(crate) fn prefetch(vfs: &Arc<dyn Vfs>, dir: &Path, manifest: &Manifest, crypt: Option<&Arc<Crypt>>) -> Prefetched {
    let sealed: Arc<[(u64, u64)]> = manifest.segments.iter().filter(|s| s.sealed).map(|s| (s.number, s.len)).collect();
    if sealed.len() < 2 || !vfs.concurrent_reads() {
        return Prefetched::default();
    }
    let next = Arc::new(AtomicUsize::new(0));
    let (tx, rx) = mpsc::channel();
    let helper = {
        let (vfs, dir, crypt, sealed, next) =
            (vfs.clone(), dir.to_path_buf(), crypt.cloned(), sealed.clone(), next.clone());
        std::thread::Builder::new().name("rabosh-open".into()).spawn(move || {
            while let Some(&id) = sealed.get(next.fetch_add(1, Ordering::Relaxed)) {
                if tx.send((id.0, read_one(&*vfs, &dir, id, crypt.as_deref()))).is_err() {
                    return;
                }
            }
        })
    };
    let mut got = Vec::with_capacity(sealed.len());
    while let Some(&id) = sealed.get(next.fetch_add(1, Ordering::Relaxed)) {
        got.push((id.0, read_one(&**vfs, dir, id, crypt.map(|c| &**c))));
    }
    if helper.is_ok() {
        // The hints the helper claimed. A helper that panicked drops its sender: what it did
        // not send, open reads itself.
        while got.len() < sealed.len() {
            match rx.recv() {
                Ok(read) => got.push(read),
                Err(_) => break,
            }
        }
    }
    Prefetched(got)
}
