//! A process stopped (SIGSTOP: a debugger pause, a laptop asleep) while it holds the commit lock
//! must not freeze the others: their reads answer from what is durable without the lock, their
//! commits and opens fail with `Busy` naming the holder once the lock timeout passes, and all
//! goes on when the holder continues. Own `main` (harness = false): re-executes itself as the child.

mod common;
use common::{read_line, spawn};

use rabosh::{Batch, Error, Options, Store};
use std::io::{BufRead, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const TIMEOUT: Duration = Duration::from_millis(1500);

fn shared() -> Options {
    Options { shared: true, lock_timeout: TIMEOUT, ..Options::default() }
}

fn put(store: &Store, key: &str, value: &str) -> rabosh::Result<u64> {
    let mut b = Batch::new();
    b.put(key.as_bytes().to_vec(), value.as_bytes().to_vec(), Vec::new());
    store.write(b)
}

fn get(store: &Store, key: &str) -> Option<String> {
    store.snapshot().unwrap().get(key.as_bytes()).unwrap().map(|v| String::from_utf8(v).unwrap())
}

/// Commits, then takes the commit lock and starts a frame it never finishes (what a holder
/// stopped mid-append leaves), then waits for a line on stdin to let go.
fn child_hold(dir: &Path, compact: bool) {
    let store = Store::open(dir, shared()).unwrap();
    put(&store, "k", "from-child").unwrap();
    if compact {
        store.compact().unwrap(); // replaces the MANIFEST: a reader must reload, under the lock
    }
    let guard = store.commit_guard().unwrap();
    if !compact {
        tear(dir);
    }
    println!("HOLDING");
    std::io::stdout().flush().unwrap();
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line).unwrap();
    drop(guard);
    println!("RELEASED");
}

/// Starts a frame after the last one of the active segment (the highest-numbered: no compaction
/// ran) that is never finished.
fn tear(dir: &Path) {
    let active = common::active_segment(dir);
    let end = common::log_end(&std::fs::read(dir.join(&active)).unwrap());
    let mut f = std::fs::OpenOptions::new().write(true).open(dir.join(active)).unwrap();
    f.seek(SeekFrom::Start(end)).unwrap();
    f.write_all(&[0xAB; 30]).unwrap();
}

/// SIGSTOP / SIGCONT. Windows has no stop signal: there the child, blocked on its stdin with the
/// lock held, is a stuck holder rather than a stopped one, which the engine cannot tell apart
/// (it sees a live holder that moves nothing) and the assertions are the same.
fn signal(pid: u32, sig: &str) {
    if cfg!(unix) {
        assert!(std::process::Command::new("kill").args([sig, &pid.to_string()]).status().unwrap().success());
    }
}

/// Kills the child when the test ends, passed or not: a stopped child left behind would keep
/// the test's output pipe open and hang the run.
struct KillOnDrop(u32);
impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let pid = self.0.to_string();
        let mut kill =
            if cfg!(windows) { std::process::Command::new("taskkill") } else { std::process::Command::new("kill") };
        if cfg!(windows) {
            kill.args(["/F", "/PID", &pid]);
        } else {
            kill.args(["-KILL", &pid]);
        }
        let _ = kill.stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null()).status();
    }
}

fn busy(r: rabosh::Result<impl Sized>, holder_pid: u32, what: &str) {
    match r {
        Err(Error::Busy { holder, waited_ms, .. }) => {
            assert!(waited_ms >= TIMEOUT.as_millis() as u64, "{what}: gave up after {waited_ms} ms");
            if cfg!(target_os = "linux") {
                assert_eq!(holder.pid, Some(holder_pid), "{what}: names the holder");
            }
        }
        Err(e) => panic!("{what}: expected Busy, got {e}"),
        Ok(_) => panic!("{what}: expected Busy, it went through"),
    }
}

fn stopped_holder() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    let store = Store::open(&dir, shared()).unwrap();
    put(&store, "mine", "1").unwrap();
    let (mut child, mut out) = spawn(&["child-hold", dir.to_str().unwrap()]);
    assert_eq!(read_line(&mut out).as_deref(), Some("HOLDING"));
    let pid = child.id();
    let _reaper = KillOnDrop(pid);
    signal(pid, "-STOP");

    // Reads answer (not Busy) and see the stopped process's acknowledged commit.
    let pinned = store.snapshot_without_waiting().unwrap();
    assert_eq!(pinned.get(b"k").unwrap().as_deref(), Some(&b"from-child"[..]), "a pin answers at once");
    assert_eq!(get(&store, "k").as_deref(), Some("from-child"), "a read answers from what is durable");
    assert_eq!(store.snapshot().unwrap().range(b"", None).count(), 2, "a listing answers too");
    let t = Instant::now();
    busy(put(&store, "mine", "2"), pid, "a commit");
    assert!(t.elapsed() < TIMEOUT * 10, "the wait is bounded");
    busy(Store::open(&dir, shared()), pid, "an open");
    assert_eq!(get(&store, "mine").as_deref(), Some("1"), "the refused commit did nothing");

    signal(pid, "-CONT");
    writeln!(child.stdin.as_mut().unwrap(), "release").unwrap();
    assert_eq!(read_line(&mut out).as_deref(), Some("RELEASED"));
    child.wait().unwrap();
    // The next holder cuts the unfinished frame and commits.
    put(&store, "mine", "2").unwrap();
    assert_eq!(get(&store, "mine").as_deref(), Some("2"));
    assert_eq!(get(&store, "k").as_deref(), Some("from-child"));
    drop(store);
    let strict = Store::open(&dir, Options { strict: true, ..Options::default() }).unwrap();
    assert_eq!(get(&strict, "mine").as_deref(), Some("2"));
    strict.verify().unwrap();
}

/// A holder stopped right after it compacted: a read must reload the MANIFEST, which takes the
/// lock. A pin that must not wait fails with `Busy` at once; a read waits the timeout, then `Busy`.
fn stopped_after_compaction() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    let store = Store::open(&dir, shared()).unwrap();
    put(&store, "mine", "1").unwrap();
    let (mut child, mut out) = spawn(&["child-hold-compacted", dir.to_str().unwrap()]);
    assert_eq!(read_line(&mut out).as_deref(), Some("HOLDING"));
    let pid = child.id();
    let _reaper = KillOnDrop(pid);
    signal(pid, "-STOP");
    match store.snapshot_without_waiting() {
        Err(Error::Busy { waited_ms: 0, .. }) => {}
        other => panic!("expected Busy at once, got {:?}", other.map(|s| s.seq())),
    }
    busy(store.snapshot(), pid, "a read that must reload");
    signal(pid, "-CONT");
    writeln!(child.stdin.as_mut().unwrap(), "release").unwrap();
    assert_eq!(read_line(&mut out).as_deref(), Some("RELEASED"));
    child.wait().unwrap();
    assert_eq!(get(&store, "k").as_deref(), Some("from-child"));
    assert_eq!(store.snapshot_without_waiting().unwrap().get(b"mine").unwrap().as_deref(), Some(&b"1"[..]));
}

/// Another program holding `WRITER` with `flock` (util-linux) is a holder like any other.
fn external_flock() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    let store = Store::open(&dir, shared()).unwrap();
    put(&store, "a", "1").unwrap();
    let mut flock = match std::process::Command::new("flock")
        .arg(dir.join("WRITER"))
        .args(["-c", "echo HELD; read line"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
    {
        Ok(c) => c,
        Err(e) => return println!("skipped: no flock(1) here ({e})"),
    };
    let _reaper = KillOnDrop(flock.id());
    let mut out = std::io::BufReader::new(flock.stdout.take().unwrap());
    assert_eq!(read_line(&mut out).as_deref(), Some("HELD"));
    assert_eq!(get(&store, "a").as_deref(), Some("1"));
    let other = Store::open(&dir, shared());
    assert!(matches!(other, Err(Error::Busy { .. })), "an open under a held WRITER: {:?}", other.err());
    assert!(matches!(put(&store, "a", "2"), Err(Error::Busy { .. })));
    writeln!(flock.stdin.as_mut().unwrap()).unwrap();
    flock.wait().unwrap();
    put(&store, "a", "2").unwrap();
    assert_eq!(get(&store, "a").as_deref(), Some("2"));
}

/// Another handle on the store, in this process, holding the commit lock on a thread of its own
/// until `release` is sent (its own open file: the OS lock excludes this process's other handles).
fn hold_elsewhere(dir: &Path) -> (std::sync::mpsc::Sender<()>, std::thread::JoinHandle<()>) {
    let (held_tx, held_rx) = std::sync::mpsc::channel();
    let (release_tx, release_rx) = std::sync::mpsc::channel::<()>();
    let dir = dir.to_path_buf();
    let holder = std::thread::spawn(move || {
        let other = Store::open(&dir, shared()).unwrap();
        let guard = other.commit_guard().unwrap();
        held_tx.send(()).unwrap();
        let _ = release_rx.recv_timeout(Duration::from_secs(30));
        drop(guard);
    });
    held_rx.recv_timeout(Duration::from_secs(30)).expect("the holder never took the lock");
    (release_tx, holder)
}

/// Several threads wait for a lock held elsewhere: each answers `Busy` once its OWN timeout has
/// passed, not behind the others' waits (a second thread used to wait for the first to give up,
/// then a timeout of its own). Then a holder that lets go in time: the waiting commit goes through.
fn each_waiter_answers_within_its_own_timeout() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    let store = Store::open(&dir, shared()).unwrap();
    put(&store, "a", "1").unwrap();
    let (release, holder) = hold_elsewhere(&dir);
    let waits: Vec<Duration> = std::thread::scope(|s| {
        let threads: Vec<_> = (0..3)
            .map(|i| {
                let store = &store;
                s.spawn(move || {
                    std::thread::sleep(TIMEOUT / 4 * i);
                    let t = Instant::now();
                    let r = put(store, &format!("t{i}"), "x");
                    assert!(matches!(r, Err(Error::Busy { .. })), "thread {i}: {r:?}");
                    t.elapsed()
                })
            })
            .collect();
        threads.into_iter().map(|t| t.join().unwrap()).collect()
    });
    for (i, w) in waits.iter().enumerate() {
        assert!(*w >= TIMEOUT.checked_sub(Duration::from_millis(50)).unwrap(), "thread {i} gave up early, after {w:?}");
        // Behind another's wait it took 1.5 to 2 timeouts; a loaded machine adds far less.
        assert!(*w < TIMEOUT + TIMEOUT / 2, "thread {i} answered after {w:?} (timeout {TIMEOUT:?})");
    }
    release.send(()).unwrap();
    holder.join().unwrap();
    for i in 0..3 {
        assert_eq!(get(&store, &format!("t{i}")), None, "a refused commit did nothing");
    }

    // Released a third of the way into the wait: the commit succeeds, soon after the release.
    let (release, holder) = hold_elsewhere(&dir);
    let t = Instant::now();
    let letting_go = std::thread::spawn(move || {
        std::thread::sleep(TIMEOUT / 3);
        release.send(()).unwrap();
    });
    put(&store, "a", "2").unwrap();
    assert!(t.elapsed() < TIMEOUT, "the commit waited past the release: {:?}", t.elapsed());
    letting_go.join().unwrap();
    holder.join().unwrap();
    assert_eq!(get(&store, "a").as_deref(), Some("2"));
}

/// A read that needs the lock (another process compacted: the MANIFEST is replaced) while a
/// commit of this process already waits for it: the read answers `Busy` within its own timeout,
/// not after the commit's and then its own.
fn a_read_behind_a_waiting_commit_answers_within_its_timeout() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    let store = Store::open(&dir, shared()).unwrap();
    put(&store, "a", "1").unwrap();
    {
        let other = Store::open(&dir, shared()).unwrap();
        put(&other, "b", "1").unwrap();
        other.compact().unwrap();
    }
    let (release, holder) = hold_elsewhere(&dir);
    std::thread::scope(|s| {
        let committing = s.spawn(|| put(&store, "c", "1"));
        std::thread::sleep(TIMEOUT / 4);
        let t = Instant::now();
        let read = store.snapshot();
        let waited = t.elapsed();
        assert!(matches!(read, Err(Error::Busy { .. })), "the read: {:?}", read.map(|s| s.seq()));
        assert!(waited < TIMEOUT + TIMEOUT / 2, "the read answered after {waited:?} (timeout {TIMEOUT:?})");
        assert!(matches!(committing.join().unwrap(), Err(Error::Busy { .. })));
    });
    release.send(()).unwrap();
    holder.join().unwrap();
    assert_eq!(get(&store, "b").as_deref(), Some("1"));
    assert_eq!(get(&store, "c"), None);
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    match args.get(1).map(String::as_str) {
        Some("child-hold") => return child_hold(&PathBuf::from(&args[2]), false),
        Some("child-hold-compacted") => return child_hold(&PathBuf::from(&args[2]), true),
        _ => {}
    }
    let filters: Vec<&String> = args[1..].iter().filter(|a| !a.starts_with('-')).collect();
    let tests: [(&str, fn()); 5] = [
        ("stopped_holder", stopped_holder),
        ("stopped_after_compaction", stopped_after_compaction),
        ("external_flock", external_flock),
        ("each_waiter_answers_within_its_own_timeout", each_waiter_answers_within_its_own_timeout),
        (
            "a_read_behind_a_waiting_commit_answers_within_its_timeout",
            a_read_behind_a_waiting_commit_answers_within_its_timeout,
        ),
    ];
    common::run_named(&filters, &tests);
}
