//! A primary and a synchronous standby (scripts/pg-cluster.mjs starts them), and one store opened
//! on their multi-host URL with `target_session_attrs=read-write`: a failover under concurrent
//! writers, the old primary coming back as a stale node, an operator's switchover, and a
//! failover to a standby whose replay fell behind. Each scenario prints its figures. Own `main`
//! (harness = false): the scenarios run one after another, each on a cluster of its own, since
//! each kills or stops servers.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Lines, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rabosh_memory::{Create, Error, Memories, MemoryOptions, StoreOptions, View};
use rabosh_memory_postgres::{PgError, PgErrorKind, PostgresOpener};

fn main() {
    if cfg!(any(not(target_os = "linux"), target_env = "musl")) {
        // Linux only, natively: the cluster is Debian's (or the CI image's) PostgreSQL driven by
        // node, which a binary under Wine cannot wait for, and CI's time is spent once; what is
        // tested here is the same code on every target.
        println!("\ntest result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 4 filtered out");
        return;
    }
    let steps: [(&str, fn()); 4] = [
        (
            "a_failover_under_32_writers_loses_nothing_and_resumes",
            a_failover_under_32_writers_loses_nothing_and_resumes,
        ),
        ("a_stale_primary_never_takes_writes", a_stale_primary_never_takes_writes),
        ("a_switchover_loses_nothing_and_resumes", a_switchover_loses_nothing_and_resumes),
        (
            "a_standby_behind_in_replay_loses_nothing_at_promotion",
            a_standby_behind_in_replay_loses_nothing_at_promotion,
        ),
    ];
    // Like libtest: arguments that are not flags filter the scenarios by name.
    let filters: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with('-')).collect();
    let steps: Vec<_> = steps.into_iter().filter(|(n, _)| filters.iter().all(|f| n.contains(f.as_str()))).collect();
    for (name, step) in &steps {
        println!("test {name} ...");
        step();
        println!("test {name} ... ok");
    }
    println!("\ntest result: ok. {} passed; 0 failed; 0 ignored; 0 measured; 0 filtered out", steps.len());
}

/// The two servers, driven through the helper's stdin; stopped and removed when dropped (the
/// helper stops them at the end of its input, also when this process dies).
struct Cluster {
    child: Child,
    stdin: Option<ChildStdin>,
    answers: Lines<BufReader<ChildStdout>>,
    ports: [u16; 2],
}

impl Cluster {
    fn start() -> Cluster {
        let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scripts/pg-cluster.mjs");
        let mut child = Command::new("node")
            .arg(script)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("run node scripts/pg-cluster.mjs");
        let stdin = child.stdin.take();
        let mut answers = BufReader::new(child.stdout.take().expect("stdout")).lines();
        let ready = answers.next().expect("the cluster helper ended before it was ready").expect("read");
        let ports: Vec<u16> =
            ready.strip_prefix("ready ").expect(&ready).split(' ').map(|p| p.parse().unwrap()).collect();
        Cluster { child, stdin, answers, ports: [ports[0], ports[1]] }
    }

    fn run(&mut self, command: &str) {
        let stdin = self.stdin.as_mut().expect("stdin");
        writeln!(stdin, "{command}").unwrap();
        stdin.flush().unwrap();
        let answer = self.answers.next().expect("an answer").expect("read");
        assert_eq!(answer, "ok", "{command}");
    }

    /// The URL of both nodes, as a fleet would be given it.
    fn url(&self, schema: &str, extra: &str) -> String {
        let [a, b] = self.ports;
        format!(
            "postgres://postgres@127.0.0.1:{a},127.0.0.1:{b}/postgres?target_session_attrs=read-write&schema={schema}{extra}"
        )
    }

    /// A session on one node, bypassing the store (to steer the node or look at it).
    fn session(&self, node: usize) -> postgres::Client {
        let conninfo = format!("host=127.0.0.1 port={} user=postgres dbname=postgres", self.ports[node]);
        postgres::Client::connect(&conninfo, postgres::NoTls).expect("connect to a node")
    }

    /// The URL of one node alone, whatever it is now.
    fn node_url(&self, node: usize, schema: &str) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres?schema={schema}", self.ports[node])
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let _ = self.child.wait();
    }
}

fn open(url: &str) -> Arc<Memories> {
    let store = rabosh_memory::open_with(url, StoreOptions::default(), &[&PostgresOpener]).expect("open the store");
    Arc::new(Memories::new(store.backend(), MemoryOptions::default()).unwrap())
}

/// One create as its caller saw it.
struct Call {
    path: String,
    started: Instant,
    ended: Instant,
    /// Ok(true): created; Ok(false): answered "exists"; Err: the error's code.
    outcome: Result<bool, String>,
}

fn code(e: &Error) -> String {
    match PgError::of(e) {
        Some(pe) => pe.code().to_string(),
        None if matches!(e, Error::Poisoned(_)) => "RABOSH_POISONED".into(),
        None => format!("{e}"),
    }
}

fn create(m: &Memories, path: String) -> Call {
    let started = Instant::now();
    let outcome = match m.create(&path, &path) {
        Ok(Create::Created) => Ok(true),
        Ok(_) => Ok(false),
        Err(e) => Err(code(&e)),
    };
    Call { path, started, ended: Instant::now(), outcome }
}

/// `n` callers creating memories at paths never used before, until `stop`.
fn writers(m: &Arc<Memories>, n: usize, stop: &Arc<AtomicBool>) -> Vec<JoinHandle<Vec<Call>>> {
    (0..n)
        .map(|w| {
            let (m, stop) = (m.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut calls = Vec::new();
                for i in 0.. {
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    calls.push(create(&m, format!("/memories/w{w}/{i}")));
                }
                calls
            })
        })
        .collect()
}

/// When the primary went: the command to stop it was sent at `.0` and done at `.1`.
type Outage = (Instant, Instant);

/// What the callers saw around an outage (`down`) that ended at `up` (the standby took
/// writes), checked against what `survivor` holds.
fn check(scenario: &str, calls: &[Call], down: Outage, up: Instant, survivor: &str) {
    let acknowledged: Vec<&Call> = calls.iter().filter(|c| c.outcome == Ok(true)).collect();
    // Every path is new: "exists" would be an unknown commit retried behind the caller's back.
    let exists = calls.iter().filter(|c| c.outcome == Ok(false)).count();
    let mut errors: BTreeMap<&str, usize> = BTreeMap::new();
    for c in calls {
        if let Err(code) = &c.outcome {
            *errors.entry(code.as_str()).or_default() += 1;
        }
    }
    let first_after = acknowledged.iter().filter(|c| c.started >= up).map(|c| c.ended).min();
    let resumed = first_after.map(|t| t.duration_since(up));
    // The pause a caller saw: from the outage to the first create started after it that succeeded.
    let paused =
        acknowledged.iter().filter(|c| c.started >= down.1).map(|c| c.ended).min().map(|t| t.duration_since(down.0));
    let lost = lost(&acknowledged, survivor);
    println!(
        "  {scenario}: {} acknowledged, {lost} lost, {exists} answered exists, outage until promoted {:?}, first \
         create started after the promotion acknowledged {resumed:?} after it, callers paused {paused:?}, errors \
         {errors:?}",
        acknowledged.len(),
        up.duration_since(down.0)
    );
    assert_eq!(lost, 0, "acknowledged creates missing from the new primary");
    assert_eq!(exists, 0, "a create was answered 'exists' for a path never created before");
    for c in calls {
        if let Err(code) = &c.outcome {
            assert_eq!(code, PgErrorKind::CommitOutcomeUnknown.code(), "{}", c.path);
            assert!(c.started < down.1 && c.ended > down.0, "{} failed but was not in flight at the outage", c.path);
        }
    }
    let resumed = resumed.expect("no create started after the promotion succeeded");
    assert!(resumed < Duration::from_secs(5), "the first create after the promotion took {resumed:?}");
}

/// Acknowledged creates the node at `url` does not hold, read through a handle of its own.
fn lost(acknowledged: &[&Call], url: &str) -> usize {
    let m = open(url);
    let paths: Vec<String> = acknowledged.iter().map(|c| c.path.clone()).collect();
    let chunks: Vec<Vec<String>> = paths.chunks(paths.len().div_ceil(8).max(1)).map(<[String]>::to_vec).collect();
    let readers: Vec<_> = chunks
        .into_iter()
        .map(|chunk| {
            let m = m.clone();
            std::thread::spawn(move || {
                chunk.iter().filter(|p| !matches!(m.view(p), Ok(View::File { content }) if content == **p)).count()
            })
        })
        .collect();
    readers.into_iter().map(|r| r.join().unwrap()).sum()
}

fn run_until(m: &Memories, prefix: &str, within: Duration) -> Vec<Call> {
    let deadline = Instant::now() + within;
    let mut calls = Vec::new();
    for i in 0.. {
        let call = create(m, format!("{prefix}/{i}"));
        let done = call.outcome.is_ok();
        calls.push(call);
        if done || Instant::now() > deadline {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    calls
}

/// `n` writers on `schema` while node 0 goes down (`down`: "kill 0" or "stop 0") after `warm`
/// and node 1 is promoted; `at_outage` runs just before it. Writing stops `settle` after the
/// promotion, and every call is checked against node 1.
fn ride_outage(
    cluster: &mut Cluster,
    schema: &str,
    n: usize,
    (warm, settle): (Duration, Duration),
    at_outage: impl FnOnce(),
    down: &str,
) {
    let m = open(&cluster.url(schema, ""));
    let stop = Arc::new(AtomicBool::new(false));
    let threads = writers(&m, n, &stop);
    std::thread::sleep(warm);
    at_outage();
    let went = Instant::now();
    cluster.run(down);
    let outage = (went, Instant::now());
    cluster.run("promote 1");
    let up = Instant::now();
    std::thread::sleep(settle);
    stop.store(true, Ordering::Relaxed);
    let calls: Vec<Call> = threads.into_iter().flat_map(|t| t.join().unwrap()).collect();
    check(schema, &calls, outage, up, &cluster.node_url(1, schema));
}

fn a_failover_under_32_writers_loses_nothing_and_resumes() {
    let mut cluster = Cluster::start();
    ride_outage(
        &mut cluster,
        "failover",
        32,
        (Duration::from_millis(700), Duration::from_millis(1500)),
        || {},
        "kill 0",
    );
}

fn a_stale_primary_never_takes_writes() {
    let mut cluster = Cluster::start();
    // A short connect_timeout: the creates below that find no usable node fail sooner.
    let m = open(&cluster.url("stale", "&connect_timeout=2"));
    assert!(create(&m, "/memories/before".into()).outcome == Ok(true));
    // The standby alone does not take writes, and the refusal says so.
    let standby = format!("{}&target_session_attrs=read-write", cluster.node_url(1, "stale"));
    let e = rabosh_memory::open_with(&standby, StoreOptions::default(), &[&PostgresOpener]).err().expect("refused");
    assert!(e.to_string().contains("does not take writes"), "{e}");
    cluster.run("kill 0");
    cluster.run("promote 1");
    let moved = run_until(&m, "/memories/moved", Duration::from_secs(10));
    assert_eq!(moved.last().unwrap().outcome, Ok(true), "no create succeeded after the promotion");
    // The old primary comes back as a primary of its own on its old port, and the new one goes
    // away: the URL's only read-write node is now the stale one, behind what the handle saw.
    cluster.run("start 0");
    cluster.run("stop 1");
    let refused = m.create("/memories/refused", "x").expect_err("written while only the stale node took writes");
    println!("  stale primary up, new primary down: a create answered {}: {refused}", code(&refused));
    assert!(refused.to_string().contains("refused a stale server"), "{refused}");
    cluster.run("start 1");
    let resumed = run_until(&m, "/memories/resumed", Duration::from_secs(10));
    assert_eq!(resumed.last().unwrap().outcome, Ok(true), "no create succeeded once the new primary was back");
    // The stale node holds nothing written after the failover.
    let stale = open(&cluster.node_url(0, "stale"));
    let paths = moved.iter().chain(&resumed).map(|c| c.path.as_str());
    for path in paths.chain(["/memories/refused"]) {
        assert!(matches!(stale.view(path), Ok(View::NotFound)), "{path} is on the stale node");
    }
    let ours = open(&cluster.node_url(1, "stale"));
    for c in [&moved, &resumed].map(|calls| calls.last().unwrap()) {
        assert!(matches!(ours.view(&c.path), Ok(View::File { .. })), "{} is missing from the new primary", c.path);
    }
    let created = moved.iter().chain(&resumed).filter(|c| c.outcome == Ok(true)).count();
    println!("  stale primary: {created} created on the new primary, 0 on the stale node");
}

fn a_switchover_loses_nothing_and_resumes() {
    let mut cluster = Cluster::start();
    ride_outage(&mut cluster, "switchover", 8, (Duration::from_millis(500), Duration::from_secs(1)), || {}, "stop 0");
}

/// A synchronous standby acknowledges a commit once its WAL is flushed there, not replayed: with
/// replay paused it falls behind what the primary acknowledged, and a promotion must replay it
/// all before the first write.
fn a_standby_behind_in_replay_loses_nothing_at_promotion() {
    let mut cluster = Cluster::start();
    let mut standby = cluster.session(1);
    standby.batch_execute("SELECT pg_wal_replay_pause()").unwrap();
    let at_outage = move || {
        let behind: i64 = standby
            .query_one("SELECT (pg_last_wal_receive_lsn() - pg_last_wal_replay_lsn())::INT8", &[])
            .unwrap()
            .get(0);
        assert!(behind > 0, "the standby replayed everything it received: it is not behind");
        println!("  standby behind: {behind} bytes of WAL received and not replayed at the kill");
    };
    ride_outage(&mut cluster, "behind", 8, (Duration::from_millis(500), Duration::from_secs(1)), at_outage, "kill 0");
}
