//! Fuzzing the recovery path (proptest, small budget in CI): a store directory whose MANIFEST,
//! segments and hints are arbitrary bytes, random mutations of valid files, or mutations
//! re-sealed with fresh checksums (so the decoders behind the CRCs see hostile structure), plus
//! stray files with our names. Open — and, when it succeeds, every read and `verify()` — must
//! return Ok or an error, never panic, and never allocate more than the input can justify
//! (a counting allocator bounds the largest single allocation).
//!
//! Knob: `RABOSH_FUZZ_CASES` (default 2000).
//!
//! `unsafe`: the counting allocator is a `GlobalAlloc` over the system one.
#![allow(unsafe_code)]

mod common;

use common::{Model, knob, opts, random_batch};
use proptest::prelude::*;
use rabosh::{Store, Vfs};
use rabosh_testkit::{Rng, SimFs};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

struct Counting;
thread_local! {
    // Per thread: the harness runs other tests (and proptest's own work) beside the armed one.
    static ARMED: Cell<bool> = const { Cell::new(false) };
}
static LARGEST: AtomicUsize = AtomicUsize::new(0);

fn note(size: usize) {
    if ARMED.with(std::cell::Cell::get) {
        LARGEST.fetch_max(size, Ordering::Relaxed);
    }
}

// SAFETY: every method hands its arguments unchanged to the system allocator, so each keeps
// `GlobalAlloc`'s contract exactly as `System` does (blocks come from and go back to `System`
// alone). `note` neither allocates nor unwinds: a const-initialised thread-local `Cell<bool>`
// (no destructor, so always accessible) and an atomic.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        note(l.size());
        // SAFETY: the caller's `l` meets `GlobalAlloc::alloc`'s contract (non-zero size).
        unsafe { System.alloc(l) }
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        note(l.size());
        // SAFETY: as for `alloc`.
        unsafe { System.alloc_zeroed(l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        note(new);
        // SAFETY: the caller guarantees `p` is a block of this allocator (so of `System`) of
        // layout `l`, and `new` is a valid non-zero size for `l`'s alignment.
        unsafe { System.realloc(p, l, new) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        // SAFETY: the caller guarantees `p` is a live block of this allocator (so of `System`)
        // of layout `l`.
        unsafe { System.dealloc(p, l) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

const DIR: &str = "/f/store";

/// The files of a small valid store: compacted, sealed and active segments, hints, MANIFEST.
fn base() -> &'static Vec<(String, Vec<u8>)> {
    static B: OnceLock<Vec<(String, Vec<u8>)>> = OnceLock::new();
    B.get_or_init(|| {
        let fs = SimFs::new();
        let store = Store::open(DIR, opts(Arc::new(fs.clone()) as Arc<dyn Vfs>, 500)).unwrap();
        let mut rng = Rng::new(3);
        let mut m = Model::new();
        for seq in 1..=30 {
            store.write(random_batch(&mut rng, &mut m, seq)).unwrap();
            if seq == 15 {
                store.compact().unwrap();
            }
        }
        drop(store);
        let d = Path::new(DIR);
        fs.names(d)
            .into_iter()
            .filter(|n| !n.starts_with("LOCK"))
            .map(|n| (n.clone(), fs.read_file(&d.join(n)).unwrap()))
            .collect()
    })
}

#[derive(Debug, Clone)]
enum Mut {
    Byte(usize, u8),
    U32(usize, u32),
    Truncate(usize),
    Insert(usize, Vec<u8>),
    /// Copy a span of the file over another place (duplicated frames, shifted headers).
    Copy(usize, usize, usize),
}

#[derive(Debug, Clone)]
enum Edit {
    Keep,
    Delete,
    Replace(Vec<u8>),
    Mutate(Vec<Mut>),
    /// Mutate, then recompute every checksum the format has, so the damage gets past them.
    Reseal(Vec<Mut>),
}

fn interesting_u32() -> impl Strategy<Value = u32> {
    prop_oneof![
        Just(0u32),
        Just(1),
        Just(u32::MAX),
        Just(1 << 30),
        Just((1 << 30) + 1),
        Just(0x5246_4252),
        Just(2),
        any::<u32>()
    ]
}

fn muts() -> impl Strategy<Value = Vec<Mut>> {
    let m = prop_oneof![
        4 => (any::<usize>(), any::<u8>()).prop_map(|(a, b)| Mut::Byte(a, b)),
        4 => (any::<usize>(), interesting_u32()).prop_map(|(a, v)| Mut::U32(a, v)),
        1 => any::<usize>().prop_map(Mut::Truncate),
        1 => (any::<usize>(), prop::collection::vec(any::<u8>(), 1..64)).prop_map(|(a, b)| Mut::Insert(a, b)),
        1 => (any::<usize>(), any::<usize>(), 1usize..200).prop_map(|(a, b, n)| Mut::Copy(a, b, n)),
    ];
    prop::collection::vec(m, 1..6)
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        4 => Just(Edit::Keep),
        1 => Just(Edit::Delete),
        1 => prop::collection::vec(any::<u8>(), 0..600).prop_map(Edit::Replace),
        3 => muts().prop_map(Edit::Mutate),
        4 => muts().prop_map(Edit::Reseal),
    ]
}

fn apply(b: &mut Vec<u8>, m: &Mut) {
    let at = |x: usize, len: usize| if len == 0 { 0 } else { x % len };
    match m {
        Mut::Byte(a, v) => {
            if !b.is_empty() {
                let i = at(*a, b.len());
                b[i] = *v;
            }
        }
        Mut::U32(a, v) => {
            if b.len() >= 4 {
                let i = at(*a, b.len() - 3);
                b[i..i + 4].copy_from_slice(&v.to_le_bytes());
            }
        }
        Mut::Truncate(a) => b.truncate(at(*a, b.len() + 1)),
        Mut::Insert(a, bytes) => {
            let i = at(*a, b.len() + 1);
            b.splice(i..i, bytes.iter().copied());
        }
        Mut::Copy(from, to, n) => {
            if !b.is_empty() {
                let f = at(*from, b.len());
                let n = (*n).min(b.len() - f);
                let t = at(*to, b.len() - n + 1);
                let span = b[f..f + n].to_vec();
                b[t..t + n].copy_from_slice(&span);
            }
        }
    }
}

fn crc(parts: &[&[u8]]) -> u32 {
    parts.iter().fold(0, |c, p| crc32c::crc32c_append(c, p))
}

/// Recomputes the checksums of a MANIFEST, hint or segment (header and every frame).
fn reseal(name: &str, b: &mut [u8]) {
    let n = b.len();
    if name == "MANIFEST" && n >= 20 {
        b[12..16].copy_from_slice(&((n - 20) as u32).to_le_bytes());
        let c = crc(&[&b[8..n - 4]]);
        b[n - 4..].copy_from_slice(&c.to_le_bytes());
    } else if name.ends_with(".hint") && n >= 4 {
        let c = crc(&[&b[..n - 4]]);
        b[n - 4..].copy_from_slice(&c.to_le_bytes());
    } else if name.ends_with(".seg") && n >= 40 {
        let c = crc(&[&b[..32]]);
        b[32..36].copy_from_slice(&c.to_le_bytes());
        let mut off = 40;
        while off + 12 <= n {
            let len = u32::from_le_bytes(b[off + 4..off + 8].try_into().unwrap()) as usize;
            if off + 12 + len > n {
                break;
            }
            let c = crc(&[&b[off + 4..off + 8], &b[off + 12..off + 12 + len]]);
            b[off + 8..off + 12].copy_from_slice(&c.to_le_bytes());
            off += 12 + len;
        }
    }
}

const STRAY: [&str; 6] =
    ["0000000050.seg", "0000000002.hint", "0000000001.seg", "MANIFEST.tmp", "0000000003.hint.tmp", "LOCK.holder"];

fn run_case(edits: &[Edit], strays: &[(usize, Vec<u8>)]) -> Result<(), TestCaseError> {
    let fs = SimFs::new();
    let d = Path::new(DIR);
    let mut total = 0usize;
    for ((name, bytes), e) in base().iter().zip(edits.iter().cycle()) {
        let mut b = bytes.clone();
        match e {
            Edit::Keep => {}
            Edit::Delete => continue,
            Edit::Replace(r) => b.clone_from(r),
            Edit::Mutate(ms) => ms.iter().for_each(|m| apply(&mut b, m)),
            Edit::Reseal(ms) => {
                for m in ms {
                    apply(&mut b, m);
                }
                reseal(name, &mut b);
            }
        }
        total += b.len();
        fs.write_file(&d.join(name), &b).unwrap();
    }
    for (i, bytes) in strays {
        total += bytes.len();
        fs.write_file(&d.join(STRAY[i % STRAY.len()]), bytes).unwrap();
    }
    LARGEST.store(0, Ordering::Relaxed);
    ARMED.with(|a| a.set(true));
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        if let Ok(store) = Store::open(DIR, opts(Arc::new(fs.clone()) as Arc<dyn Vfs>, 500)) {
            let snap = store.snapshot().unwrap();
            let keys: Vec<Vec<u8>> = snap.range(b"", None).map(|(k, _)| k.to_vec()).collect();
            for k in keys {
                let _ = snap.get(&k);
            }
            let _ = store.verify();
        }
    }));
    ARMED.with(|a| a.set(false));
    prop_assert!(outcome.is_ok(), "open or a read panicked");
    let largest = LARGEST.load(Ordering::Relaxed);
    // Read-ahead and hint/MANIFEST buffers are bounded by the file sizes; nothing may trust a
    // length field beyond the bytes that exist.
    let bound = (256 << 10) + 4 * total;
    prop_assert!(largest <= bound, "allocated {largest} bytes from {total} bytes of input");
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: knob("RABOSH_FUZZ_CASES", 2000) as u32, failure_persistence: None, ..ProptestConfig::default() })]
    #[test]
    fn open_survives_hostile_store_files(
        edits in prop::collection::vec(edit(), 1..24),
        strays in prop::collection::vec((any::<usize>(), prop::collection::vec(any::<u8>(), 0..300)), 0..3),
    ) {
        run_case(&edits, &strays)?;
    }
}

#[test]
fn the_unmodified_base_store_opens() {
    // The fuzz inputs start from a store that is valid: without edits it must open whole.
    run_case(&[Edit::Keep], &[]).unwrap();
    let fs = SimFs::new();
    for (n, b) in base() {
        fs.write_file(&Path::new(DIR).join(n), b).unwrap();
    }
    let s = Store::open(DIR, opts(Arc::new(fs) as Arc<dyn Vfs>, 500)).unwrap();
    assert_eq!(s.stats().seq, 30);
    s.verify().unwrap();
}
