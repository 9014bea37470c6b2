//! The decoded hint pages a process keeps, bounded in bytes. A paged run opens a page (checks or
//! decrypts it, then expands its packed keys) when a read first lands in it; kept forever, a full
//! scan left every page of every run decoded in the heap, about the hints' size again. One cache
//! for the process (every store's runs share the budget), evicted by the clock (second chance):
//! a page read since the hand last passed stays for one more turn.
//!
//! The cache hands out `Arc<Page>`: a read holds the pages it borrows from ([`Pins`]) for as long
//! as it borrows them, so eviction never frees a page in use; it only stops the cache keeping it.

use crate::log::hint_pages::Page;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

/// The default budget: a few thousand pages, enough for a listing's working set at a million
/// keys, small beside the process (the first look at a million stays under 64 MiB in all).
const DEFAULT_BYTES: usize = 8 << 20;

static BUDGET: AtomicUsize = AtomicUsize::new(DEFAULT_BYTES);
static NEXT_RUN: AtomicU64 = AtomicU64::new(1);
static CACHE: Mutex<Clock> = Mutex::new(Clock { slots: Vec::new(), index: None, hand: 0, bytes: 0 });

/// Sets how many bytes of decoded pages the process keeps (0: none kept past the read that
/// opened them); pages over the budget go at the next insert. For tests and tuning.
pub fn set_page_cache_bytes(bytes: usize) {
    BUDGET.store(bytes, Ordering::Relaxed);
    lock().evict(bytes);
}

/// The bytes of decoded pages the process keeps now.
#[must_use]
pub fn page_cache_bytes() -> usize {
    lock().bytes
}

/// A number no other run of this process has: the cache's key for a run's pages.
pub(crate) fn run_id() -> u64 {
    NEXT_RUN.fetch_add(1, Ordering::Relaxed)
}

/// Page `page` of run `run`, if kept (marked as read).
pub(crate) fn get(run: u64, page: u32) -> Option<Arc<Page>> {
    lock().get((run, page))
}

/// Keeps a just-opened page (the one already kept when another thread opened it first).
pub(crate) fn insert(run: u64, page: u32, p: Arc<Page>) -> Arc<Page> {
    let budget = BUDGET.load(Ordering::Relaxed);
    lock().insert((run, page), p, budget)
}

/// Lets go of every page of a run that is going away.
pub(crate) fn forget(run: u64) {
    let mut c = lock();
    if c.slots.iter().any(|s| s.key.0 == run) {
        c.slots.retain(|s| s.key.0 != run);
        c.bytes = c.slots.iter().map(|s| s.size).sum();
        c.hand = 0;
        c.index = None;
    }
}

fn lock() -> MutexGuard<'static, Clock> {
    // A panic while holding it leaves a consistent cache (each step completes or not at all).
    CACHE.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// What a decoded page costs the heap: its buffers, its offsets, the slot.
fn page_bytes(p: &Page) -> usize {
    p.buf.capacity() + p.offs.capacity() * 4 + std::mem::size_of::<Page>() + std::mem::size_of::<Slot>()
}

type PageKey = (u64, u32);

struct Slot {
    key: PageKey,
    page: Arc<Page>,
    size: usize,
    /// Read since the hand last passed.
    used: bool,
}

struct Clock {
    slots: Vec<Slot>,
    /// Where each key's slot is; `None` until first needed (a `static` cannot build a map).
    index: Option<HashMap<PageKey, usize>>,
    hand: usize,
    bytes: usize,
}

impl Clock {
    fn index(&mut self) -> &mut HashMap<PageKey, usize> {
        let slots = &self.slots;
        self.index.get_or_insert_with(|| slots.iter().enumerate().map(|(i, s)| (s.key, i)).collect())
    }

    fn get(&mut self, key: PageKey) -> Option<Arc<Page>> {
        let i = *self.index().get(&key)?;
        let s = &mut self.slots[i];
        s.used = true;
        Some(s.page.clone())
    }

    fn insert(&mut self, key: PageKey, page: Arc<Page>, budget: usize) -> Arc<Page> {
        if let Some(kept) = self.get(key) {
            return kept;
        }
        let size = page_bytes(&page);
        if size > budget {
            // Over the budget alone: the caller's read holds it, nothing keeps it.
            return page;
        }
        self.evict(budget - size);
        let i = self.slots.len();
        self.slots.push(Slot { key, page: page.clone(), size, used: false });
        self.index().insert(key, i);
        self.bytes += size;
        page
    }

    /// Takes slots out until at most `budget` bytes are kept: the hand clears each read mark it
    /// passes and takes the first slot without one.
    fn evict(&mut self, budget: usize) {
        while self.bytes > budget && !self.slots.is_empty() {
            if self.hand >= self.slots.len() {
                self.hand = 0;
            }
            let s = &mut self.slots[self.hand];
            if s.used {
                s.used = false;
                self.hand += 1;
                continue;
            }
            let hand = self.hand;
            let gone = self.slots.swap_remove(hand);
            self.bytes -= gone.size;
            let moved = self.slots.get(hand).map(|s| s.key);
            let index = self.index();
            index.remove(&gone.key);
            if let Some(k) = moved {
                index.insert(k, hand);
            }
        }
    }
}

/// Pages a read borrows from, held until the read ends (a snapshot's ranges: until it drops).
/// Only ever added to: each page sits in a slot set once, in chunks that never move once made
/// (doubling in size), so a borrow handed out stays valid for the arena's life without `unsafe`.
#[derive(Default)]
pub(crate) struct Pins {
    next: Mutex<usize>,
    chunks: [OnceLock<Chunk>; CHUNKS],
}

/// Slots set once each.
type Chunk = Box<[OnceLock<Arc<Page>>]>;

/// Chunk `k` holds `FIRST << k` slots: enough chunks for any count of pages a process can hold.
const CHUNKS: usize = 32;
const FIRST: usize = 16;

impl Pins {
    /// `page`, held as long as these pins are.
    pub fn hold(&self, page: Arc<Page>) -> &Page {
        let n = {
            let mut next = self.next.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            *next += 1;
            *next - 1
        };
        // Slot n: chunk k starts at FIRST * (2^k - 1).
        let k = (n / FIRST + 1).ilog2() as usize;
        let at = n - FIRST * ((1 << k) - 1);
        let chunk = self.chunks[k].get_or_init(|| (0..FIRST << k).map(|_| OnceLock::new()).collect());
        chunk[at].get_or_init(|| page)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(n: usize) -> Arc<Page> {
        Arc::new(Page { buf: vec![0; n], offs: Vec::new() })
    }

    #[test]
    fn pins_hand_out_every_page_they_hold() {
        let pins = Pins::default();
        let held: Vec<&Page> = (0..1000).map(|i| pins.hold(page(i))).collect();
        for (i, p) in held.iter().enumerate() {
            assert_eq!(p.buf.len(), i);
        }
    }

    #[test]
    fn clock_keeps_within_budget_and_spares_a_read_page() {
        let mut c = Clock { slots: Vec::new(), index: None, hand: 0, bytes: 0 };
        let one = page_bytes(&page(1000));
        let budget = 2 * one;
        c.insert((1, 0), page(1000), budget);
        c.insert((1, 1), page(1000), budget);
        assert!(c.get((1, 0)).is_some());
        c.insert((1, 2), page(1000), budget);
        assert!(c.bytes <= budget);
        // Page 0 was read since the hand passed: page 1 went instead.
        assert!(c.get((1, 0)).is_some());
        assert!(c.get((1, 1)).is_none());
        assert!(c.get((1, 2)).is_some());
    }
}
