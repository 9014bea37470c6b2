//! Several processes, one store (shared mode): lost updates, SIGKILL of a commit-lock holder, a
//! long-lived observer. Own `main` (harness = false): the binary re-executes itself as children.

mod common;
use common::{read_line, spawn};

use rabosh::{Batch, Durability, Error, Options, Store};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const KEYS: u64 = 4;
const BIG: usize = 300;

fn env_num(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|s| s.parse().ok()).unwrap_or(default)
}

fn shared() -> Options {
    // Small segments: rotation (and so MANIFEST replacement) happens during the runs.
    Options { shared: true, segment_bytes: 32 << 10, ..Options::default() }
}

fn counter(key: &str, snap: &rabosh::Snapshot) -> u64 {
    snap.get(key.as_bytes()).unwrap().map_or(0, |v| String::from_utf8(v).unwrap().parse().unwrap())
}

/// Read-increment-write under the commit guard: the engine-level view + `str_replace`.
fn increment(store: &Store, key: &str) -> Result<u64, Error> {
    let guard = store.commit_guard()?;
    let n = counter(key, &store.latest_snapshot()?) + 1;
    let mut b = Batch::new();
    b.put(key.as_bytes().to_vec(), n.to_string().into_bytes(), Vec::new());
    let seq = store.append(b)?;
    store.wait_durable(seq)?;
    drop(guard);
    Ok(n)
}

/// `threads` threads each increment counters `per_thread` times, printing `ACK key` after each
/// acknowledged increment, then `DONE` (buffered: after a `sync()`).
fn child_counter(dir: &Path, threads: u64, per_thread: u64, durability: Durability) {
    let store = Arc::new(Store::open(dir, Options { durability, ..shared() }).unwrap());
    let out = Arc::new(Mutex::new(std::io::stdout()));
    writeln!(out.lock().unwrap(), "READY").unwrap();
    let hs: Vec<_> = (0..threads)
        .map(|t| {
            let (store, out) = (store.clone(), out.clone());
            std::thread::spawn(move || {
                for i in 0..per_thread {
                    let key = format!("c{}", (t + i) % KEYS);
                    increment(&store, &key).unwrap();
                    let mut o = out.lock().unwrap();
                    writeln!(o, "ACK {key}").unwrap();
                    o.flush().unwrap();
                    if i % 97 == 50 && t == 0 {
                        store.compact().unwrap();
                    }
                }
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
    store.sync().unwrap();
    println!("DONE");
}

/// Opens once, never again; prints the counters each time it reads a line on stdin.
fn child_observer(dir: &Path) {
    let store = Store::open(dir, shared()).unwrap();
    println!("READY");
    for line in std::io::stdin().lock().lines() {
        if line.is_err() {
            break;
        }
        let snap = store.snapshot().unwrap();
        let v: Vec<String> = (0..KEYS).map(|k| counter(&format!("c{k}"), &snap).to_string()).collect();
        println!("VALUES {}", v.join(" "));
    }
}

/// Commits big all-or-nothing batches forever, printing `ACK i`.
fn child_big_writer(dir: &Path) {
    let store = Store::open(dir, shared()).unwrap();
    println!("READY");
    let mut out = std::io::stdout().lock();
    loop {
        let guard = store.commit_guard().unwrap();
        let i = counter("big-round", &store.latest_snapshot().unwrap()) + 1;
        let mut b = Batch::new();
        for j in 0..BIG {
            b.put(format!("big/{j:04}").into_bytes(), i.to_string().into_bytes(), Vec::new());
        }
        b.put(b"big-round".to_vec(), i.to_string().into_bytes(), Vec::new());
        let seq = store.append(b).unwrap();
        store.wait_durable(seq).unwrap();
        drop(guard);
        writeln!(out, "ACK {i}").unwrap();
        out.flush().unwrap();
    }
}

/// Takes the commit lock, leaves garbage (a torn frame) after the last commit, and waits to be
/// killed: the next holder must cut it before appending.
fn child_tear(dir: &Path) {
    let store = Store::open(dir, Options { segment_bytes: 64 << 20, ..shared() }).unwrap();
    let _guard = store.commit_guard().unwrap();
    let active = common::active_segment(dir);
    let mut f = std::fs::OpenOptions::new().append(true).open(dir.join(active)).unwrap();
    f.write_all(&[0xAB; 100]).unwrap();
    println!("TORN");
    std::thread::sleep(Duration::from_secs(60));
}

fn ask(stdin: &mut ChildStdin, out: &mut BufReader<ChildStdout>) -> Vec<u64> {
    writeln!(stdin, "?").unwrap();
    stdin.flush().unwrap();
    let line = read_line(out).unwrap();
    line.strip_prefix("VALUES ").unwrap().split(' ').map(|v| v.parse().unwrap()).collect()
}

/// Counts ACK lines per counter until the stream ends (or `stop_after` acks were read).
fn count_acks(out: &mut BufReader<ChildStdout>, acks: &mut [u64], stop_after: Option<u64>) -> bool {
    let mut seen = 0;
    while let Some(line) = read_line(out) {
        if line == "DONE" {
            return true;
        }
        let k: usize = line.strip_prefix("ACK c").unwrap().parse().unwrap();
        acks[k] += 1;
        seen += 1;
        if stop_after.is_some_and(|s| seen >= s) {
            return false;
        }
    }
    false
}

/// N processes × M threads increment shared counters; one process is SIGKILLed mid-run. Final
/// counts equal the acknowledged increments, plus at most the killed process's in-flight ones
/// (one per thread); an observer opened before any of it sees the final values.
fn no_lost_update() {
    let (procs, threads, per) = (env_num("MP_PROCS", 3), env_num("MP_THREADS", 3), env_num("MP_PER", 150));
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    drop(Store::open(&dir, shared()).unwrap());
    let (mut observer, mut obs_out) = spawn(&["child-observer", dir.to_str().unwrap()]);
    assert_eq!(read_line(&mut obs_out).as_deref(), Some("READY"));
    let mut obs_in = observer.stdin.take().unwrap();
    assert_eq!(ask(&mut obs_in, &mut obs_out), vec![0; KEYS as usize]);

    let d = dir.to_str().unwrap().to_string();
    let (t, p) = (threads.to_string(), per.to_string());
    let mut children: Vec<(Child, BufReader<ChildStdout>)> =
        (0..procs).map(|_| spawn(&["child-counter", &d, &t, &p])).collect();
    for (_, out) in &mut children {
        assert_eq!(read_line(out).as_deref(), Some("READY"));
    }
    let mut acks = vec![0u64; KEYS as usize];
    kill_first_and_count(children, &mut acks, threads * per / 3);

    let store = Store::open(&dir, shared()).unwrap();
    let (finals, total, acked) = check_counts(&store, &acks, threads);
    assert_eq!(ask(&mut obs_in, &mut obs_out), finals, "the long-lived observer sees the final values");
    drop(obs_in);
    observer.wait().unwrap();
    println!(
        "no lost update: {acked} acknowledged increments, {total} counted, by {procs} processes x {threads} threads"
    );
}

/// Buffered and Sync processes counting on one store, a buffered one SIGKILLed mid-run (its
/// commits are in the page cache, so they count): no lost update, and the store then opens
/// strictly (no torn tail, no damage judged) and verifies — unflagged frames behind another
/// process's unsynced ones, or a synced record ahead of the disk, would fail one of those.
fn mixed_durability() {
    let (threads, per) = (env_num("MP_THREADS", 3), env_num("MP_PER", 150));
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    drop(Store::open(&dir, shared()).unwrap());
    let d = dir.to_str().unwrap().to_string();
    let (t, p) = (threads.to_string(), per.to_string());
    let modes = ["buffered", "sync", "buffered", "sync"];
    let mut children: Vec<(Child, BufReader<ChildStdout>)> =
        modes.iter().map(|m| spawn(&["child-counter", &d, &t, &p, m])).collect();
    for (_, out) in &mut children {
        assert_eq!(read_line(out).as_deref(), Some("READY"));
    }
    let mut acks = vec![0u64; KEYS as usize];
    kill_first_and_count(children, &mut acks, threads * per / 3);
    let store = Store::open(&dir, Options { strict: true, shared: false, ..shared() }).unwrap();
    let (_, total, acked) = check_counts(&store, &acks, threads);
    println!("mixed durability: {acked} acknowledged increments, {total} counted");
}

/// A writer SIGKILLed while it holds the commit lock (it holds it nearly all the time, mid-way
/// through big appends): this process commits again within a bounded time, and never sees a
/// torn commit — every big batch is all or nothing, and its round is at least the acked one.
fn kill_lock_holder() {
    let rounds = env_num("MP_KILL_ROUNDS", 100);
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    let store = Store::open(&dir, shared()).unwrap();
    let mut mine = 0u64;
    let mut worst = Duration::ZERO;
    for round in 0..rounds {
        let (mut child, mut out) = spawn(&["child-big-writer", dir.to_str().unwrap()]);
        assert_eq!(read_line(&mut out).as_deref(), Some("READY"));
        let target = 1 + (round * 7 + round * round) % 5;
        let mut acked = 0;
        for _ in 0..target {
            acked = read_line(&mut out).unwrap().strip_prefix("ACK ").unwrap().parse().unwrap();
        }
        child.kill().unwrap();
        child.wait().unwrap();
        while let Some(line) = read_line(&mut out) {
            acked = line.strip_prefix("ACK ").unwrap().parse().unwrap();
        }
        let started = Instant::now();
        mine = increment(&store, "mine").unwrap();
        if round % 10 == 9 {
            // Retires segments the next child's open and this handle's snapshots may still read.
            store.compact().unwrap();
        }
        worst = worst.max(started.elapsed());
        // Liveness, not speed: a lock that died with its holder must not be waited for.
        assert!(started.elapsed() < Duration::from_secs(30), "round {round}: a commit waited {:?}", started.elapsed());
        let snap = store.snapshot().unwrap();
        let r = counter("big-round", &snap);
        assert!(r >= acked && r <= acked + 1, "round {round}: big round {r}, acked {acked}");
        for j in 0..BIG {
            assert_eq!(counter(&format!("big/{j:04}"), &snap), r, "round {round}: torn commit visible at big/{j:04}");
        }
    }
    assert_eq!(mine, rounds);
    store.verify().unwrap();
    drop(store);
    let reopened = Store::open(&dir, Options { shared: false, ..shared() }).unwrap();
    reopened.verify().unwrap();
    println!("kill lock holder: {rounds} rounds, worst commit after a kill {worst:?}");
}

/// A holder killed after leaving a torn frame: this process cuts it under the lock before its
/// own commit, so the log stays clean (strict open refuses any torn tail).
fn torn_tail_of_dead_holder() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    let opts = Options { segment_bytes: 64 << 20, ..shared() };
    let store = Store::open(&dir, opts.clone()).unwrap();
    increment(&store, "n").unwrap();
    let (mut child, mut out) = spawn(&["child-tear", dir.to_str().unwrap()]);
    assert_eq!(read_line(&mut out).as_deref(), Some("TORN"));
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(counter("n", &store.snapshot().unwrap()), 1);
    assert_eq!(increment(&store, "n").unwrap(), 2);
    drop(store);
    let strict = Store::open(&dir, Options { strict: true, shared: false, ..opts }).unwrap();
    assert_eq!(counter("n", &strict.snapshot().unwrap()), 2);
    strict.verify().unwrap();
}

/// Exclusive stays exclusive: a shared opener is refused by an exclusive holder and vice versa.
fn exclusive_refuses_shared() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    let ex = Store::open(&dir, Options::default()).unwrap();
    assert!(matches!(Store::open(&dir, shared()), Err(Error::Locked { .. })));
    drop(ex);
    let a = Store::open(&dir, shared()).unwrap();
    let b = Store::open(&dir, shared()).unwrap();
    assert!(matches!(Store::open(&dir, Options::default()), Err(Error::Locked { .. })));
    increment(&a, "x").unwrap();
    assert_eq!(counter("x", &b.snapshot().unwrap()), 1, "a second handle sees the first's commit");
    increment(&b, "x").unwrap();
    assert_eq!(counter("x", &a.snapshot().unwrap()), 2);
}

/// Figures, not a test (run by name only): commit latency exclusive vs shared, two processes
/// committing at once, and the cost of a read that must catch up on another's commit.
fn bench() {
    let n = env_num("MP_BENCH_N", 300);
    let tmp = tempfile::tempdir().unwrap();
    let per_commit = |store: &Store, key: &str| {
        let t = Instant::now();
        for _ in 0..n {
            increment(store, key).unwrap();
        }
        t.elapsed() / n as u32
    };
    let ex = Store::open(tmp.path().join("ex"), Options::default()).unwrap();
    println!("exclusive, one process: {:?} per commit", per_commit(&ex, "k"));
    drop(ex);
    let dir = tmp.path().join("sh");
    let sh = Store::open(&dir, shared()).unwrap();
    println!("shared, one process: {:?} per commit", per_commit(&sh, "k"));
    let d = dir.to_str().unwrap().to_string();
    let (mut c, mut out) = spawn(&["child-counter", &d, "1", &n.to_string(), "sync"]);
    assert_eq!(read_line(&mut out).as_deref(), Some("READY"));
    let here = per_commit(&sh, "c0");
    let mut acks = vec![0u64; KEYS as usize];
    count_acks(&mut out, &mut acks, None);
    c.wait().unwrap();
    println!("shared, two processes committing at once: {here:?} per commit in this one");
    // Reads: nothing new vs one commit by another handle (a second shared handle, same costs).
    let other = Store::open(&dir, shared()).unwrap();
    let t = Instant::now();
    for _ in 0..n {
        counter("k", &sh.snapshot().unwrap());
    }
    let idle = t.elapsed() / n as u32;
    let mut caught = Duration::ZERO;
    for _ in 0..n {
        increment(&other, "o").unwrap();
        let t = Instant::now();
        counter("o", &sh.snapshot().unwrap());
        caught += t.elapsed();
    }
    println!("shared read: {idle:?} when nothing changed, {:?} catching up one commit", caught / n as u32);
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    match args.get(1).map(String::as_str) {
        Some("child-counter") => {
            let durability = match args.get(5).map(String::as_str) {
                Some("buffered") => Durability::Buffered,
                _ => Durability::Sync,
            };
            return child_counter(
                &PathBuf::from(&args[2]),
                args[3].parse().unwrap(),
                args[4].parse().unwrap(),
                durability,
            );
        }
        Some("child-observer") => return child_observer(&PathBuf::from(&args[2])),
        Some("child-big-writer") => return child_big_writer(&PathBuf::from(&args[2])),
        Some("child-tear") => return child_tear(&PathBuf::from(&args[2])),
        _ => {}
    }
    let filters: Vec<&String> = args[1..].iter().filter(|a| !a.starts_with('-')).collect();
    if filters.iter().any(|f| f.as_str() == "bench") {
        return bench();
    }
    let tests: [(&str, fn()); 5] = [
        ("mixed_durability", mixed_durability),
        ("exclusive_refuses_shared", exclusive_refuses_shared),
        ("torn_tail_of_dead_holder", torn_tail_of_dead_holder),
        ("no_lost_update", no_lost_update),
        ("kill_lock_holder", kill_lock_holder),
    ];
    common::run_named(&filters, &tests);
}

/// Final counters against acknowledged increments: none lost, at most `in_flight` extra (the
/// killed process's); the store verifies. Returns (finals, total counted, total acknowledged).
fn check_counts(store: &Store, acks: &[u64], in_flight: u64) -> (Vec<u64>, u64, u64) {
    let snap = store.snapshot().unwrap();
    let finals: Vec<u64> = (0..KEYS).map(|k| counter(&format!("c{k}"), &snap)).collect();
    let (total, acked): (u64, u64) = (finals.iter().sum(), acks.iter().sum());
    for k in 0..KEYS as usize {
        assert!(finals[k] >= acks[k], "counter c{k}: {} acknowledged increments, only {} counted", acks[k], finals[k]);
    }
    assert!(total <= acked + in_flight, "{total} counted but {acked} acknowledged and at most {in_flight} in flight");
    store.verify().unwrap();
    (finals, total, acked)
}

/// SIGKILLs the first child once it acknowledged `kill_after` increments (it must still be
/// working), then counts every acknowledgement of it and of the others, which must finish.
fn kill_first_and_count(mut children: Vec<(Child, BufReader<ChildStdout>)>, acks: &mut [u64], kill_after: u64) {
    let (mut victim, mut vout) = children.remove(0);
    assert!(!count_acks(&mut vout, acks, Some(kill_after)), "the kill must land while the child works");
    victim.kill().unwrap();
    victim.wait().unwrap();
    count_acks(&mut vout, acks, None);
    for (mut c, mut out) in children {
        assert!(count_acks(&mut out, acks, None), "a surviving child did not finish");
        assert!(c.wait().unwrap().success());
    }
}
