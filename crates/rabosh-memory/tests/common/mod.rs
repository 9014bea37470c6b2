//! Shared fixtures: a store in a temp directory and handlers over it with a settable clock.
#![allow(dead_code)]

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use rabosh_memory::{Clock, Memories, MemoryOptions, MemoryStore};
use tempfile::TempDir;

pub struct Fixture {
    pub store: Arc<MemoryStore>,
    pub now: Arc<AtomicI64>,
    _dir: TempDir,
}

pub fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let options = rabosh::Options { durability: rabosh::Durability::Buffered, ..Default::default() };
    let store = MemoryStore::open(dir.path().join("store"), options).unwrap();
    Fixture { store, now: Arc::new(AtomicI64::new(1_000)), _dir: dir }
}

impl Fixture {
    pub fn handler(&self, tweak: impl FnOnce(&mut MemoryOptions)) -> Memories {
        // Tests start from the plain scan and opt in to the index, so both paths stay covered.
        let mut options = MemoryOptions { listing_index: false, ..MemoryOptions::default() };
        tweak(&mut options);
        let now = self.now.clone();
        Memories::new(self.store.clone(), options)
            .unwrap()
            .with_clock(Clock::from_fn(move || now.load(Ordering::SeqCst)))
    }

    pub fn default_handler(&self) -> Memories {
        self.handler(|_| {})
    }

    pub fn set_now(&self, ms: i64) {
        self.now.store(ms, Ordering::SeqCst);
    }

    pub fn commits(&self) -> u64 {
        self.store.engine().stats().commits
    }

    pub fn values_read(&self) -> u64 {
        self.store.engine().stats().values_read
    }

    /// (size, lines, created, updated, accessed) from the raw 40-byte metadata.
    pub fn meta(&self, scope: &str, path: &str) -> Option<(u64, u64, i64, i64, i64)> {
        let snap = self.store.engine().snapshot().unwrap();
        let m = snap.meta(format!("m:{scope}:{path}").as_bytes())?;
        let u = |i: usize| u64::from_le_bytes(m[i..i + 8].try_into().unwrap());
        Some((u(0), u(8), u(16) as i64, u(24) as i64, u(32) as i64))
    }
}

pub fn content(m: &Memories, path: &str) -> Option<String> {
    match m.view(path).unwrap() {
        rabosh_memory::View::File { content, .. } => Some(content),
        _ => None,
    }
}
