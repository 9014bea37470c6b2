//! A compaction (what a redaction runs to erase) killed right after its MANIFEST swap, before it
//! unlinked the segments it retired: the next compaction — by a process that had the store open
//! all along, so it never runs open's leftover sweep — must leave no byte of the erased value in
//! any file of the store. Own `main` (harness = false): the binary re-executes itself as the child.

#[macro_use]
mod common;
use common::{read_line, spawn};

use rabosh::{Batch, Options, StdFs, Store, Vfs};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

const SECRET: &[u8] = b"sk-live-7c1f0e-the-leaked-secret";

/// The real filesystem, except that the first unlink of a segment — the compaction retiring
/// its inputs, after its MANIFEST swap — announces itself and then waits to be killed.
#[derive(Debug)]
struct HangBeforeRetire;

impl Vfs for HangBeforeRetire {
    std_fs_except_rename_and_remove!();
    fn rename(&self, from: &Path, to: &Path) -> std::io::Result<()> {
        StdFs.rename(from, to)
    }
    fn remove(&self, path: &Path) -> std::io::Result<()> {
        if path.extension().is_some_and(|e| e == "seg") {
            println!("SWAPPED");
            std::io::stdout().flush().unwrap();
            std::thread::sleep(std::time::Duration::from_secs(120));
        }
        StdFs.remove(path)
    }
}

fn shared() -> Options {
    Options { shared: true, ..Options::default() }
}

fn put(store: &Store, key: &[u8], value: &[u8]) {
    let mut b = Batch::new();
    b.put(key, value, &b""[..]);
    store.write(b).unwrap();
}

/// Overwrites the secret (the "redaction"), then compacts until the hang after the swap.
fn child_compact(dir: &Path) {
    let store = Store::open(dir, Options { vfs: Some(Arc::new(HangBeforeRetire)), ..shared() }).unwrap();
    put(&store, b"version/1", b"redacted");
    store.compact().unwrap();
    println!("COMPACTED");
}

/// Every file of the store that holds `needle`, by name.
fn files_holding(dir: &Path, needle: &[u8]) -> Vec<String> {
    let mut hits = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let bytes = std::fs::read(e.path()).unwrap();
        if bytes.windows(needle.len()).any(|w| w == needle) {
            hits.push(e.file_name().into_string().unwrap());
        }
    }
    hits.sort();
    hits
}

fn retired_segments_of_a_killed_compaction() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    // The long-lived process: open before the secret is written, and never reopened.
    let store = Store::open(&dir, shared()).unwrap();
    put(&store, b"version/1", SECRET);
    put(&store, b"other", b"kept");
    assert_eq!(store.snapshot().unwrap().get(b"version/1").unwrap().as_deref(), Some(SECRET));
    let (mut child, mut out) = spawn(&["child-compact", dir.to_str().unwrap()]);
    assert_eq!(read_line(&mut out).as_deref(), Some("SWAPPED"), "the child reached its MANIFEST swap");
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(!files_holding(&dir, SECRET).is_empty(), "the killed compaction left its inputs behind");

    store.compact().unwrap();
    assert_eq!(files_holding(&dir, SECRET), Vec::<String>::new(), "no file of the store holds the secret");
    let snap = store.snapshot().unwrap();
    assert_eq!(snap.get(b"version/1").unwrap().as_deref(), Some(&b"redacted"[..]));
    assert_eq!(snap.get(b"other").unwrap().as_deref(), Some(&b"kept"[..]));
    drop(snap);
    store.verify().unwrap();
    drop(store);
    let reopened = Store::open(&dir, Options::default()).unwrap();
    assert_eq!(reopened.snapshot().unwrap().get(b"other").unwrap().as_deref(), Some(&b"kept"[..]));
    reopened.verify().unwrap();
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("child-compact") {
        return child_compact(&PathBuf::from(&args[2]));
    }
    let filters: Vec<&String> = args[1..].iter().filter(|a| !a.starts_with('-')).collect();
    let tests: [(&str, fn()); 1] =
        [("retired_segments_of_a_killed_compaction", retired_segments_of_a_killed_compaction)];
    common::run_named(&filters, &tests);
}
