//! Helpers shared by the reliability tests: a reference model, store contents, budgets.
#![allow(dead_code)]

pub mod hint_files;

use rabosh::{Batch, Error, Options, Store, Vfs};
use rabosh_testkit::Rng;
use std::collections::BTreeMap;
use std::sync::Arc;

/// key → (value, meta): what a store must show.
pub type Model = BTreeMap<Vec<u8>, (Vec<u8>, Vec<u8>)>;

/// A budget knob: the env var if set, else the CI default.
pub fn knob(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|s| s.parse().ok()).unwrap_or(default)
}

pub fn opts(vfs: Arc<dyn Vfs>, segment_bytes: u64) -> Options {
    Options { segment_bytes, vfs: Some(vfs), ..Options::default() }
}

/// Opaque metadata whose length varies with the seed (0..=63 bytes: empty, inline and boxed).
pub fn meta(seed: u64) -> Vec<u8> {
    let mut m: Vec<u8> = seed.to_le_bytes().iter().cycle().take((seed % 64) as usize).copied().collect();
    if let Some(last) = m.last_mut() {
        *last = 0x5A;
    }
    m
}

/// A random batch over a small key space; applies it to `model` too.
pub fn random_batch(rng: &mut Rng, model: &mut Model, seq: u64) -> Batch {
    let mut b = Batch::new();
    for j in 0..=rng.below(4) {
        let key = format!("k{:02}", rng.below(10)).into_bytes();
        if rng.below(5) == 0 {
            model.remove(&key);
            b.delete(key);
        } else {
            let len = if rng.below(8) == 0 { 200 + rng.below(400) } else { rng.below(60) };
            let value: Vec<u8> = (0..len).map(|i| (seq * 31 + j * 7 + i) as u8).collect();
            let m = meta(seq * 16 + j);
            model.insert(key.clone(), (value.clone(), m.clone()));
            b.put(key, value, m);
        }
    }
    b
}

/// Everything the store shows at its latest state: listing, metadata and every value.
pub fn contents(store: &Store) -> rabosh::Result<Model> {
    let s = store.snapshot()?;
    let mut out = Model::new();
    for (k, m) in s.range(b"", None) {
        let v = s.get(k)?.expect("a listed key has a value");
        out.insert(k.to_vec(), (v, m.to_vec()));
    }
    Ok(out)
}

pub fn is_corruption(e: &Error) -> bool {
    matches!(e, Error::Corruption { .. })
}

/// The main of a harness-less test binary (one that re-execs itself as a child): runs the tests
/// whose names contain one of the non-flag arguments (all when there are none), printing the
/// closing line the CI reads.
pub fn run_named(filters: &[&String], tests: &[(&str, fn())]) {
    let mut ran = 0;
    for (name, f) in tests {
        if filters.is_empty() || filters.iter().any(|p| name.contains(p.as_str())) {
            println!("test {name} ...");
            f();
            println!("test {name} ... ok");
            ran += 1;
        }
    }
    println!("test result: ok. {ran} passed");
}

/// Runs this test binary again as a child (`args` name what it does, see `run_named`), with
/// stdin and stdout piped; stdout is read line by line.
pub fn spawn(args: &[&str]) -> (std::process::Child, std::io::BufReader<std::process::ChildStdout>) {
    use std::process::{Command, Stdio};
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let out = std::io::BufReader::new(child.stdout.take().unwrap());
    (child, out)
}

/// The child's next line without its line end; `None` once it closed its stdout.
pub fn read_line(r: &mut std::io::BufReader<std::process::ChildStdout>) -> Option<String> {
    use std::io::BufRead;
    let mut s = String::new();
    match r.read_line(&mut s) {
        Ok(0) | Err(_) => None,
        Ok(_) => Some(s.trim_end().to_string()),
    }
}

/// Where the frames of a segment's bytes end: the zeros a writer puts ahead of its log
/// (FORMAT.md, "Zeros ahead") are not part of it, and a frame never starts with a zero byte.
pub fn log_end(bytes: &[u8]) -> u64 {
    let mut at = 40;
    while at + 12 <= bytes.len() && bytes[at..at + 4] != [0; 4] {
        at += 12 + (u32::from_le_bytes(bytes[at + 4..at + 8].try_into().unwrap()) & 0x7fff_ffff) as usize;
    }
    at as u64
}

/// The file name of `dir`'s active segment: the highest-numbered one (on the real file system;
/// right while no compaction has run).
pub fn active_segment(dir: &std::path::Path) -> String {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".seg"))
        .max()
        .unwrap()
}

/// Inside an `impl Vfs for T`: every method but `rename` and `remove` passed to the real
/// filesystem, for the test filesystems that only stop or announce themselves at a rename or an
/// unlink (`killed_reencrypt.rs`, `interrupted_compaction.rs`). The caller writes those two.
#[allow(unused_macros)]
macro_rules! std_fs_except_rename_and_remove {
    () => {
        fn open(
            &self,
            path: &std::path::Path,
            mode: rabosh::OpenMode,
        ) -> std::io::Result<std::sync::Arc<dyn rabosh::VFile>> {
            rabosh::StdFs.open(path, mode)
        }
        fn hard_link(&self, from: &std::path::Path, to: &std::path::Path) -> std::io::Result<()> {
            rabosh::StdFs.hard_link(from, to)
        }
        fn sync_dir(&self, dir: &std::path::Path) -> std::io::Result<()> {
            rabosh::StdFs.sync_dir(dir)
        }
        fn list(&self, dir: &std::path::Path) -> std::io::Result<Vec<String>> {
            rabosh::StdFs.list(dir)
        }
        fn create_dir_all(&self, dir: &std::path::Path) -> std::io::Result<()> {
            rabosh::StdFs.create_dir_all(dir)
        }
        fn exists(&self, path: &std::path::Path) -> std::io::Result<bool> {
            rabosh::StdFs.exists(path)
        }
        fn try_lock(&self, path: &std::path::Path) -> std::io::Result<Option<rabosh::LockGuard>> {
            rabosh::StdFs.try_lock(path)
        }
        fn try_lock_dir(&self, dir: &std::path::Path) -> std::io::Result<Option<rabosh::LockGuard>> {
            rabosh::StdFs.try_lock_dir(dir)
        }
        fn try_lock_shared(&self, path: &std::path::Path) -> std::io::Result<Option<rabosh::LockGuard>> {
            rabosh::StdFs.try_lock_shared(path)
        }
        fn try_lock_dir_shared(&self, dir: &std::path::Path) -> std::io::Result<Option<rabosh::LockGuard>> {
            rabosh::StdFs.try_lock_dir_shared(dir)
        }
        fn commit_lock(&self, path: &std::path::Path) -> std::io::Result<Box<dyn rabosh::CommitLock>> {
            rabosh::StdFs.commit_lock(path)
        }
        fn canonicalize(&self, dir: &std::path::Path) -> std::io::Result<std::path::PathBuf> {
            rabosh::StdFs.canonicalize(dir)
        }
    };
}
