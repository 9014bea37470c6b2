//! Counters production code keeps and tests read (what the engine did, not a test kit): how many
//! hint files an open mapped, sealed pages it opened, heap trims.

use std::sync::atomic::{AtomicU64, Ordering};

thread_local! {
    static HINTS_MAPPED: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// How many plain hint files this thread has mapped instead of read (unix, the standard file
/// system): an open of a store whose every segment has a hint maps each.
#[must_use]
pub fn hints_mapped() -> u64 {
    HINTS_MAPPED.with(std::cell::Cell::get)
}

pub(crate) fn count_hint_mapped() {
    HINTS_MAPPED.with(|c| c.set(c.get() + 1));
}

thread_local! {
    static PAGES_OPENED: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// How many hint pages this thread has opened (decrypted, or checked against their checksum):
/// a point read after a lazy open opens one, open itself none.
#[must_use]
pub fn hint_pages_opened() -> u64 {
    PAGES_OPENED.with(std::cell::Cell::get)
}

pub(crate) fn count_page_opened() {
    PAGES_OPENED.with(|c| c.set(c.get() + 1));
}

thread_local! {
    static HINTS_MIGRATED: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// How many whole hints (a layout no longer written) this thread's opens rewrote paged.
#[must_use]
pub fn hints_migrated() -> u64 {
    HINTS_MIGRATED.with(std::cell::Cell::get)
}

pub(crate) fn count_hint_migrated() {
    HINTS_MIGRATED.with(|c| c.set(c.get() + 1));
}

static HEAP_TRIMS: AtomicU64 = AtomicU64::new(0);

/// How many times this process handed freed heap pages back (`malloc_trim`, glibc) — a call
/// that holds each malloc arena's lock while it walks it, so every other thread's allocation
/// waits meanwhile (a JS thread's too).
pub fn heap_trims() -> u64 {
    HEAP_TRIMS.load(Ordering::Relaxed)
}

#[cfg(all(target_os = "linux", target_env = "gnu"))] // the one caller: glibc's malloc_trim
pub(crate) fn count_heap_trim() {
    HEAP_TRIMS.fetch_add(1, Ordering::Relaxed);
}
