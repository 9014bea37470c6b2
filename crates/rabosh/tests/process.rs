//! Tests that need a second, real process: SIGKILL crash rounds and the directory lock.
//! Own `main` (harness = false): the binary re-executes itself as the child.

mod common;
use common::{read_line, spawn};

use rabosh::{Batch, Error, Options, Store};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

const BIG: usize = 2000;

fn env_num(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|s| s.parse().ok()).unwrap_or(default)
}

/// Commit `i` of the writer child, as a batch and as its effect on the model.
fn commit_ops(i: u64) -> Vec<(Vec<u8>, Option<Vec<u8>>)> {
    if i.is_multiple_of(10) {
        // A large batch: all or nothing.
        (0..BIG).map(|j| (format!("big/{j:04}").into_bytes(), Some(format!("{i}").into_bytes()))).collect()
    } else {
        let mut v = vec![(
            format!("k{:02}", i % 50).into_bytes(),
            Some(format!("v{i}{}", "p".repeat((i % 7 * 40) as usize)).into_bytes()),
        )];
        if i.is_multiple_of(3) {
            v.push((format!("k{:02}", (i + 25) % 50).into_bytes(), None));
        }
        v.push((b"last".to_vec(), Some(i.to_string().into_bytes())));
        v
    }
}

fn model(n: u64) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let mut m = BTreeMap::new();
    for i in 1..=n {
        for (k, v) in commit_ops(i) {
            match v {
                Some(v) => m.insert(k, v),
                None => m.remove(&k),
            };
        }
    }
    m
}

/// `encrypted`: the crash rounds also run over an encrypted store (parent and child, one key).
fn crash_opts(encrypted: bool) -> Options {
    let encryption = encrypted.then(|| rabosh::Encryption::new([0x77; 32]));
    Options { segment_bytes: 64 << 10, encryption, ..Options::default() }
}

fn child_writer(dir: &Path, encrypted: bool) {
    let store = Store::open(dir, crash_opts(encrypted)).unwrap();
    let start = store.stats().seq + 1;
    let mut out = std::io::stdout().lock();
    writeln!(out, "READY").unwrap();
    for i in start..start + 100_000 {
        let mut b = Batch::new();
        for (k, v) in commit_ops(i) {
            match v {
                Some(v) => b.put(k, v, [(i % 251) as u8; 40]),
                None => b.delete(k),
            }
        }
        assert_eq!(store.write(b).unwrap(), i);
        writeln!(out, "ACK {i}").unwrap();
        out.flush().unwrap();
        if i % 25 == 0 {
            store.compact().unwrap();
        }
    }
    // Reaching here means the parent never killed us: it will notice the exit.
}

/// SIGKILL a writer after k acks, reopen, check: every ack present, a contiguous prefix, big
/// batches whole. The child runs across rounds in the same directory, so kills land on a store
/// with history (rotation, compaction, recovery after an earlier kill).
fn crash_rounds() {
    crash_rounds_with(false, env_num("RABOSH_CRASH_ROUNDS", 24));
}

fn crash_rounds_encrypted() {
    crash_rounds_with(true, env_num("RABOSH_CRASH_ROUNDS", 24) / 2);
}

fn crash_rounds_with(encrypted: bool, rounds: u64) {
    let mode = if encrypted { "encrypted" } else { "plain" };
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    let mut total_acked = 0u64;
    for round in 0..rounds {
        let (mut child, mut out) = spawn(&["child-writer", dir.to_str().unwrap(), mode]);
        assert_eq!(read_line(&mut out).as_deref(), Some("READY"));
        // Vary where the kill lands: after 1..=40 acks of this round.
        let target = 1 + (round * 7 + round * round) % 40;
        let mut acked = total_acked;
        for _ in 0..target {
            let line = read_line(&mut out).expect("child died before it was killed");
            acked = line.strip_prefix("ACK ").unwrap().parse().unwrap();
        }
        assert!(child.try_wait().unwrap().is_none(), "the kill must land while the child works");
        child.kill().unwrap();
        child.wait().unwrap();
        // Acks the child printed before it died but we had not read yet count too.
        while let Some(line) = read_line(&mut out) {
            if let Some(n) = line.strip_prefix("ACK ") {
                acked = n.parse().unwrap();
            }
        }
        let store = Store::open(&dir, crash_opts(encrypted)).unwrap();
        let seq = store.stats().seq;
        assert!(seq >= acked, "round {round}: acked commit {acked} lost (recovered {seq})");
        assert!(seq <= acked + 1, "round {round}: recovered {seq} but only {acked} acked and one in flight");
        let snap = store.snapshot().unwrap();
        let got: BTreeMap<Vec<u8>, Vec<u8>> =
            snap.range(b"", None).map(|(k, _)| (k.to_vec(), snap.get(k).unwrap().unwrap())).collect();
        let want = model(seq);
        assert!(got == want, "round {round}: state after recovery is not the prefix of {seq} commits");
        store.verify().unwrap();
        drop(snap);
        drop(store);
        total_acked = seq;
    }
    assert!(total_acked > rounds * 5, "the rounds made progress: {total_acked}");
    println!("crash rounds ({mode}): {rounds}, commits recovered: {total_acked}");
}

fn child_holder(dir: &Path) {
    let store = Store::open(dir, Options::default()).unwrap();
    let mut b = Batch::new();
    b.put(b"held".to_vec(), b"yes".to_vec(), [0; 40]);
    store.write(b).unwrap();
    println!("READY");
    std::thread::sleep(Duration::from_secs(60));
}

fn child_try_open(dir: &Path) {
    match Store::open(dir, Options::default()) {
        Err(Error::Locked { holder, .. }) => println!(
            "LOCKED pid={} running={} this={}",
            holder.pid.unwrap_or(0),
            holder.is_running,
            holder.this_process
        ),
        Err(e) => println!("ERROR {e}"),
        Ok(_) => println!("OPENED"),
    }
}

fn lock_between_processes() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("held");
    let (mut child, mut out) = spawn(&["child-holder", dir.to_str().unwrap()]);
    assert_eq!(read_line(&mut out).as_deref(), Some("READY"));
    match Store::open(&dir, Options::default()) {
        Err(e @ Error::Locked { .. }) => {
            assert_eq!(e.code(), "RABOSH_STORE_LOCKED");
            let Error::Locked { holder, .. } = e else { unreachable!() };
            assert_eq!(holder.pid, Some(child.id()));
            assert!(holder.is_running, "{holder:?}");
            assert!(!holder.this_process);
            assert!(holder.host.is_some() && holder.started_at_ms.is_some());
        }
        Err(e) => panic!("expected Locked, got {e}"),
        Ok(_) => panic!("a second process opened a held store"),
    }
    child.kill().unwrap();
    child.wait().unwrap();
    // The lock dies with its holder; the LOCK file stays.
    let store = Store::open(&dir, Options::default()).unwrap();
    assert!(dir.join("LOCK").exists());
    assert_eq!(store.snapshot().unwrap().get(b"held").unwrap().as_deref(), Some(&b"yes"[..]));

    // The other direction: this process holds it, a child tries.
    let (mut c2, mut out2) = spawn(&["child-try-open", dir.to_str().unwrap()]);
    let line = read_line(&mut out2).unwrap();
    c2.wait().unwrap();
    assert_eq!(line, format!("LOCKED pid={} running=true this=false", std::process::id()));

    // A second open in this same process.
    match Store::open(&dir, Options::default()) {
        Err(Error::Locked { holder, .. }) => {
            assert!(holder.this_process && holder.is_running);
            assert_eq!(holder.pid, Some(std::process::id()));
        }
        Err(e) => panic!("expected Locked, got {e}"),
        Ok(_) => panic!("opened twice in one process"),
    }
    // Closing releases it for this process too.
    store.close().unwrap();
    Store::open(&dir, Options::default()).unwrap();
}

/// Issue 9, case 6: a deleted or replaced LOCK must not let a second writer in (two writers
/// would lose each other's acknowledged commits).
fn lock_file_deleted_or_replaced() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("held");
    let (mut child, mut out) = spawn(&["child-holder", dir.to_str().unwrap()]);
    assert_eq!(read_line(&mut out).as_deref(), Some("READY"));
    #[cfg(not(windows))]
    lock_deleted_then_replaced(&dir, child.id());
    #[cfg(windows)]
    lock_cannot_be_deleted_or_replaced(&dir, child.id());
    child.kill().unwrap();
    child.wait().unwrap();
    let store = Store::open(&dir, Options::default()).unwrap();
    assert_eq!(store.snapshot().unwrap().get(b"held").unwrap().as_deref(), Some(&b"yes"[..]));
}

/// Unix: the holder's lock on the directory itself outlives its LOCK file.
#[cfg(not(windows))]
fn lock_deleted_then_replaced(dir: &Path, holder_pid: u32) {
    std::fs::remove_file(dir.join("LOCK")).unwrap();
    match Store::open(dir, Options::default()) {
        Err(Error::Locked { holder, .. }) => assert_eq!(holder.pid, Some(holder_pid)),
        Err(e) => panic!("LOCK deleted: expected Locked, got {e}"),
        Ok(_) => panic!("LOCK deleted: a second writer opened a held store"),
    }
    // Replaced by a fresh file (what the failed open above may have created, or a tool).
    std::fs::write(dir.join("LOCK"), b"").unwrap();
    match Store::open(dir, Options::default()) {
        Err(Error::Locked { .. }) => {}
        Err(e) => panic!("LOCK replaced: expected Locked, got {e}"),
        Ok(_) => panic!("LOCK replaced: a second writer opened a held store"),
    }
}

/// Windows: the holder opened LOCK without `FILE_SHARE_DELETE`, so while held it can be neither
/// deleted nor renamed over (a directory cannot be locked there, so this is what keeps a second
/// writer out); the store stays locked.
#[cfg(windows)]
fn lock_cannot_be_deleted_or_replaced(dir: &Path, holder_pid: u32) {
    let e = std::fs::remove_file(dir.join("LOCK")).expect_err("a held LOCK was deleted");
    assert_eq!(e.raw_os_error(), Some(32), "deleting a held LOCK: {e}"); // ERROR_SHARING_VIOLATION
    std::fs::write(dir.join("LOCK.new"), b"").unwrap();
    let e = std::fs::rename(dir.join("LOCK.new"), dir.join("LOCK")).expect_err("a held LOCK was replaced");
    assert!(matches!(e.raw_os_error(), Some(5 | 32)), "replacing a held LOCK: {e}"); // access denied / sharing
    std::fs::remove_file(dir.join("LOCK.new")).unwrap();
    match Store::open(dir, Options::default()) {
        Err(Error::Locked { holder, .. }) => assert_eq!(holder.pid, Some(holder_pid)),
        Err(e) => panic!("expected Locked, got {e}"),
        Ok(_) => panic!("a second writer opened a held store"),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    match args.get(1).map(String::as_str) {
        Some("child-writer") => return child_writer(&PathBuf::from(&args[2]), args[3] == "encrypted"),
        Some("child-holder") => return child_holder(&PathBuf::from(&args[2])),
        Some("child-try-open") => return child_try_open(&PathBuf::from(&args[2])),
        _ => {}
    }
    let filters: Vec<&String> = args[1..].iter().filter(|a| !a.starts_with('-')).collect();
    let tests: [(&str, fn()); 4] = [
        ("crash_rounds", crash_rounds),
        ("crash_rounds_encrypted", crash_rounds_encrypted),
        ("lock_between_processes", lock_between_processes),
        ("lock_file_deleted_or_replaced", lock_file_deleted_or_replaced),
    ];
    common::run_named(&filters, &tests);
}
