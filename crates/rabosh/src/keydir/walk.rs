//! An ordered read that holds a few pages at a time: the range is cut into windows so that each
//! paged run opens at most [`WINDOW`] pages for one, and each window's pages are let go before
//! the next is opened. A full scan then keeps about the cache's budget of decoded pages, where
//! one merge over the whole range holds every page it reaches until it ends.

use crate::error::Result;
use crate::keydir::merge::{Merge, Source, Val};
use crate::keydir::page_cache::Pins;
use crate::keydir::runs::{Run, Runs};
use crate::log::record::{Entry, Key};
use std::ops::{Bound, ControlFlow};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The key directory's delta ([`crate::keydir::map::Delta`]), named by its type: the map names
/// this file (its visits), and the runs' totals walk too, so naming the map here would close a
/// circle (tests/layers.rs).
type Delta = imbl::OrdMap<Key, Option<Entry>>;

/// Pages a paged run opens for one window: a few hundred KiB decoded across the runs, and a
/// window's set-up (a binary search per run) spread over about a thousand records.
const WINDOW: usize = 16;

static WINDOW_PAGES: AtomicUsize = AtomicUsize::new(WINDOW);

/// Sets how many pages of each run one window of a walk opens (at least one): for tests, which
/// walk small stores in windows of a page or two.
pub fn set_walk_window_pages(pages: usize) {
    WINDOW_PAGES.store(pages.max(1), Ordering::Relaxed);
}

/// What a visit is handed: each live key in order with its newest record.
pub(crate) type Visit<'v> = dyn FnMut(&[u8], Val<'_>) -> ControlFlow<()> + 'v;

/// The live keys of `runs` (oldest first) under `delta` inside `bounds`, in key order
/// (`forward`) or from the top, each handed to `f` until it breaks; then the mapped hint pages
/// the walk read are let go (its copies are what the cache keeps).
pub(crate) fn walk(
    runs: &[Arc<Run>],
    delta: Option<&Delta>,
    (lower, upper): (Bound<&[u8]>, Bound<&[u8]>),
    forward: bool,
    f: &mut Visit<'_>,
) -> Result<()> {
    let walked = walk_windows(runs, delta, (lower, upper), forward, f);
    for run in runs {
        run.release_read();
    }
    walked
}

fn walk_windows(
    runs: &[Arc<Run>],
    delta: Option<&Delta>,
    (lower, upper): (Bound<&[u8]>, Bound<&[u8]>),
    forward: bool,
    f: &mut Visit<'_>,
) -> Result<()> {
    let (mut lo, mut hi) = (owned(lower), owned(upper));
    let window = WINDOW_PAGES.load(Ordering::Relaxed);
    loop {
        let (l, u) = (borrowed(&lo), borrowed(&hi));
        // The nearest cut any run asks for, if it falls strictly inside what is left.
        let cuts = runs.iter().filter_map(|r| r.cut(l, u, forward, window));
        let cut = if forward { cuts.min() } else { cuts.max() };
        let cut = cut.filter(|c| if forward { below(c, u) } else { above(c, l) }).map(<[u8]>::to_vec);
        let (wl, wu) = match &cut {
            None => (l, u),
            Some(c) if forward => (l, Bound::Excluded(&c[..])),
            Some(c) => (Bound::Included(&c[..]), u),
        };
        let pins = Pins::default();
        let mut sources: Vec<Source<'_>> = Vec::with_capacity(runs.len() + 1);
        for run in runs {
            sources.push(run.source(&pins, wl, wu)?);
        }
        if let Some(d) = delta.filter(|d| !d.is_empty()) {
            sources.push(Box::new(d.range::<_, [u8]>((wl, wu)).map(|(k, e)| (&k[..], Val::of(e.as_ref())))));
        }
        let mut merge = Merge::new(sources);
        loop {
            let item = if forward { merge.next() } else { merge.next_back() };
            let Some((k, v)) = item else { break };
            if f(k, v).is_break() {
                return Ok(());
            }
        }
        drop(merge);
        let Some(c) = cut else { return Ok(()) };
        if forward {
            lo = Bound::Included(c);
        } else {
            hi = Bound::Excluded(c);
        }
    }
}

/// Whether `c` lies below the upper bound (strictly: a cut at it would leave nothing after).
fn below(c: &[u8], upper: Bound<&[u8]>) -> bool {
    match upper {
        Bound::Unbounded => true,
        Bound::Included(k) | Bound::Excluded(k) => c < k,
    }
}

/// Whether `c` lies above the lower bound (strictly).
fn above(c: &[u8], lower: Bound<&[u8]>) -> bool {
    match lower {
        Bound::Unbounded => true,
        Bound::Included(k) | Bound::Excluded(k) => c > k,
    }
}

fn owned(b: Bound<&[u8]>) -> Bound<Vec<u8>> {
    b.map(<[u8]>::to_vec)
}

fn borrowed(b: &Bound<Vec<u8>>) -> Bound<&[u8]> {
    b.as_ref().map(Vec::as_slice)
}

// The runs' totals are a walk: defined here, beside it, so that the runs do not name this file
// (which names them): no circle (tests/layers.rs).
impl Runs {
    /// The live keys and the bytes their entries keep on disk, as the built map would count
    /// them: a merge of the sorted runs (newest record of each key), no allocation per key —
    /// for counters that must not wait for the map. Walked in windows, so a paged run holds a
    /// few pages at a time, not all of them.
    pub fn totals(&self) -> Result<(u64, u64)> {
        let (mut keys, mut live) = (0u64, 0u64);
        let all = (Bound::Unbounded, Bound::Unbounded);
        walk(&self.0, None, all, true, &mut |key, v| {
            keys += 1;
            live += v.disk_bytes(key.len());
            ControlFlow::Continue(())
        })?;
        Ok((keys, live))
    }
}
