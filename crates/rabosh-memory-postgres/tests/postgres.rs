//! The PostgreSQL backend against a real server (`RABOSH_PG_URL`; scripts/with-postgres.mjs
//! starts one). Each test has its own schema.

mod postgres_util;

use std::ops::ControlFlow;
use std::sync::{Arc, Barrier};

use postgres_util::{Schema, url};
use rabosh_memory::{Backend, Error, ReadView, WriteSet};
use rabosh_memory_postgres::{PgBackend, PgError, PgErrorKind, PgOptions};

fn put(b: &PgBackend, key: &[u8], value: &[u8], meta: &[u8]) {
    b.transact(&mut |_, w| {
        w.put(key.to_vec(), value.to_vec(), meta.to_vec());
        Ok(())
    })
    .unwrap();
}

fn scan(view: &dyn ReadView, prefix: &[u8]) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut out = Vec::new();
    view.scan_prefix(prefix, &mut |k, m| {
        out.push((k.to_vec(), m.to_vec()));
        ControlFlow::Continue(())
    })
    .unwrap();
    out
}

fn keys(rows: &[(Vec<u8>, Vec<u8>)]) -> Vec<Vec<u8>> {
    rows.iter().map(|(k, _)| k.clone()).collect()
}

fn pg_kind(e: &Error) -> PgErrorKind {
    match PgError::of(e) {
        Some(p) => p.kind(),
        None => panic!("not a PostgreSQL error: {e}"),
    }
}

#[test]
fn binary_keys_round_trip_and_scan_in_byte_order_within_prefix() {
    let s = Schema::new("bytes");
    let b = s.open();
    let all: Vec<Vec<u8>> = vec![
        vec![0x00],
        vec![0x00, 0x00],
        vec![0x01],
        vec![0x01, 0x00],
        vec![0x01, 0xFF],
        vec![0x01, 0xFF, 0xFF],
        vec![0x02],
        vec![0x7F, 0x80],
        vec![0xFF],
        vec![0xFF, 0x00],
        vec![0xFF, 0xFF, 0xFF],
    ];
    // Inserted out of order, with values and metadata that contain NUL and 0xFF too.
    for k in all.iter().rev() {
        let mut v = k.clone();
        v.extend_from_slice(&[0, 0xFF, 0]);
        put(&b, k, &v, &[0xFF, k.len() as u8, 0]);
    }
    let view = b.read().unwrap();
    assert_eq!(view.get(&[0x01, 0xFF]).unwrap(), Some(vec![0x01, 0xFF, 0, 0xFF, 0]));
    assert_eq!(view.meta(&[0x01, 0xFF]).unwrap(), Some(vec![0xFF, 2, 0]));
    assert_eq!(view.get(&[0x01, 0xFE]).unwrap(), None);
    assert_eq!(view.meta(&[0x03]).unwrap(), None);
    assert_eq!(keys(&scan(&*view, &[])), all, "the empty prefix scans everything in byte order");
    assert_eq!(keys(&scan(&*view, &[0x01])), all[2..6].to_vec());
    // Prefix boundaries: [0x01, 0xFF] has successor [0x02]; [0xFF] has none (open range).
    assert_eq!(keys(&scan(&*view, &[0x01, 0xFF])), all[4..6].to_vec());
    assert_eq!(keys(&scan(&*view, &[0xFF])), all[8..].to_vec());
    assert_eq!(keys(&scan(&*view, &[0xFF, 0xFF])), vec![vec![0xFF, 0xFF, 0xFF]]);
    assert_eq!(keys(&scan(&*view, &[0x00])), all[..2].to_vec());
    assert_eq!(scan(&*view, &[0x03]), vec![]);
    assert_eq!(scan(&*view, &[0x01])[1].1, vec![0xFF, 2, 0], "scans yield the metadata");
    // Break stops the scan.
    let mut seen = 0;
    view.scan_prefix(&[], &mut |_, _| {
        seen += 1;
        if seen == 3 { ControlFlow::Break(()) } else { ControlFlow::Continue(()) }
    })
    .unwrap();
    assert_eq!(seen, 3);
    drop(view);

    b.transact(&mut |_, w| {
        w.delete(vec![0x01, 0xFF]);
        w.delete(vec![0xFF]);
        Ok(())
    })
    .unwrap();
    let view = b.read().unwrap();
    assert_eq!(view.get(&[0x01, 0xFF]).unwrap(), None);
    assert_eq!(keys(&scan(&*view, &[0x01])), vec![vec![0x01], vec![0x01, 0x00], vec![0x01, 0xFF, 0xFF]]);
    assert_eq!(keys(&scan(&*view, &[0xFF])), vec![vec![0xFF, 0x00], vec![0xFF, 0xFF, 0xFF]]);
}

#[test]
fn scans_cross_page_boundaries_and_visitors_may_read() {
    let s = Schema::new("pages");
    let b = s.open();
    let n = 1_300u32;
    b.transact(&mut |_, w| {
        for i in 0..n {
            w.put(format!("p/{i:05}").into_bytes(), i.to_string().into_bytes(), vec![]);
        }
        w.put(b"p0".to_vec(), b"outside".to_vec(), vec![]);
        Ok(())
    })
    .unwrap();
    let view = b.read().unwrap();
    let mut got = Vec::new();
    view.scan_prefix(b"p/", &mut |k, _| {
        // A visitor calling back into the view must not deadlock.
        let v = view.get(k).unwrap().unwrap();
        got.push(String::from_utf8(v).unwrap().parse::<u32>().unwrap());
        ControlFlow::Continue(())
    })
    .unwrap();
    assert_eq!(got, (0..n).collect::<Vec<_>>());
}

#[test]
fn a_write_set_is_applied_in_order_last_write_wins() {
    let s = Schema::new("order");
    let b = s.open();
    put(&b, b"gone", b"1", b"m");
    b.transact(&mut |_, w| {
        w.put(b"a".to_vec(), b"first".to_vec(), b"1".to_vec());
        w.delete(b"a".to_vec());
        w.put(b"a".to_vec(), b"second".to_vec(), b"2".to_vec());
        w.put(b"b".to_vec(), b"x".to_vec(), vec![]);
        w.delete(b"b".to_vec());
        w.delete(b"gone".to_vec());
        w.delete(b"never".to_vec());
        Ok(())
    })
    .unwrap();
    let view = b.read().unwrap();
    assert_eq!(view.get(b"a").unwrap(), Some(b"second".to_vec()));
    assert_eq!(view.meta(b"a").unwrap(), Some(b"2".to_vec()));
    assert_eq!(view.get(b"b").unwrap(), None);
    assert_eq!(view.get(b"gone").unwrap(), None);
}

#[test]
fn a_body_that_errors_commits_nothing() {
    let s = Schema::new("abort");
    let b = s.open();
    put(&b, b"k", b"old", b"");
    let r = b.transact(&mut |_, w| {
        for i in 0..1_200 {
            w.put(format!("n{i}").into_bytes(), b"v".to_vec(), vec![]);
        }
        w.put(b"k".to_vec(), b"new".to_vec(), vec![]);
        Err(Error::NotNormalised("refused by the body".into()))
    });
    assert!(matches!(r, Err(Error::NotNormalised(_))), "{r:?}");
    let view = b.read().unwrap();
    assert_eq!(view.get(b"k").unwrap(), Some(b"old".to_vec()));
    assert_eq!(scan(&*view, b"n"), vec![]);
}

#[test]
fn a_large_write_set_commits_whole() {
    let s = Schema::new("large");
    let b = s.open();
    // More rows than one write statement carries, and more bytes than one chunk.
    let big = vec![7u8; 40 << 10];
    b.transact(&mut |_, w| {
        for i in 0..1_000u32 {
            let v = if i % 3 == 0 { big.clone() } else { vec![i as u8] };
            w.put(format!("big/{i:04}").into_bytes(), v, vec![i as u8]);
        }
        Ok(())
    })
    .unwrap();
    let view = b.read().unwrap();
    let rows = scan(&*view, b"big/");
    assert_eq!(rows.len(), 1_000);
    assert_eq!(view.get(b"big/0999").unwrap().unwrap().len(), 40 << 10);
    assert_eq!(view.get(b"big/0998").unwrap(), Some(vec![(998 % 256) as u8]));
}

#[test]
fn a_view_is_a_snapshot() {
    let s = Schema::new("snap");
    let b = s.open();
    put(&b, b"k", b"1", b"");
    let before = b.read().unwrap();
    put(&b, b"k", b"2", b"");
    put(&b, b"new", b"x", b"");
    assert_eq!(before.get(b"k").unwrap(), Some(b"1".to_vec()));
    assert_eq!(scan(&*before, b""), vec![(b"k".to_vec(), vec![])]);
    let after = b.read().unwrap();
    assert_eq!(after.get(b"k").unwrap(), Some(b"2".to_vec()));
    // A second handle (another process, in effect) sees every acknowledged commit too.
    let other = s.open();
    assert_eq!(other.read().unwrap().get(b"new").unwrap(), Some(b"x".to_vec()));
}

fn increments(threads: usize, each: usize, options: PgOptions) -> u64 {
    let s = Schema::new("incr");
    let b = Arc::new(PgBackend::open(&url(), PgOptions { schema: s.name.clone(), ..options }).unwrap());
    put(&b, b"counter", b"0", b"");
    let start = Arc::new(Barrier::new(threads));
    let handles: Vec<_> = (0..threads)
        .map(|_| {
            let (b, start) = (b.clone(), start.clone());
            std::thread::spawn(move || {
                start.wait();
                for _ in 0..each {
                    b.transact(&mut |view, w| {
                        let n: u64 = String::from_utf8(view.get(b"counter")?.unwrap()).unwrap().parse().unwrap();
                        w.put(b"counter".to_vec(), (n + 1).to_string().into_bytes(), vec![]);
                        Ok(())
                    })
                    .unwrap();
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let v = b.read().unwrap().get(b"counter").unwrap().unwrap();
    String::from_utf8(v).unwrap().parse().unwrap()
}

#[test]
fn concurrent_increments_lose_no_update() {
    let (threads, each) = (8, 25);
    assert_eq!(increments(threads, each, PgOptions::default()), (threads * each) as u64);
}

#[test]
fn retries_are_bounded_and_answer_conflict() {
    // One attempt only: contenders must see a typed Conflict, never a lost update.
    let s = Schema::new("bound");
    let b = Arc::new(PgBackend::open(&url(), PgOptions { max_attempts: 1, ..s.options() }).unwrap());
    put(&b, b"c", b"0", b"");
    let gate = Arc::new(Barrier::new(2));
    let t = {
        let (b, gate) = (b.clone(), gate.clone());
        std::thread::spawn(move || {
            b.transact(&mut |view, w| {
                view.get(b"c")?;
                gate.wait(); // both have read
                gate.wait(); // the other committed
                w.put(b"c".to_vec(), b"from-a".to_vec(), vec![]);
                Ok(())
            })
        })
    };
    b.transact(&mut |view, w| {
        view.get(b"c")?;
        gate.wait();
        w.put(b"c".to_vec(), b"from-b".to_vec(), vec![]);
        Ok(())
    })
    .unwrap();
    gate.wait();
    let r = t.join().unwrap();
    assert_eq!(pg_kind(&r.unwrap_err()), PgErrorKind::Conflict);
    assert_eq!(b.read().unwrap().get(b"c").unwrap(), Some(b"from-b".to_vec()));
}

#[test]
fn two_concurrent_first_opens_migrate_once() {
    let s = Schema::new("migrate");
    let n = 6;
    let start = Arc::new(Barrier::new(n));
    let handles: Vec<_> = (0..n)
        .map(|_| {
            let (start, options) = (start.clone(), s.options());
            std::thread::spawn(move || {
                start.wait();
                PgBackend::open(&url(), options).map(|_| ())
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap().expect("every concurrent first open succeeds");
    }
    let mut c = s.client();
    let applied: Vec<i32> = c
        .query(&format!("SELECT version FROM \"{}\".rabosh_migrations ORDER BY version", s.name), &[])
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(applied, vec![1, 2, 3, 4], "each migration applied exactly once");
    let version: i32 = c.query_one(&format!("SELECT version FROM \"{}\".rabosh_schema", s.name), &[]).unwrap().get(0);
    assert_eq!(version, 4);
}

#[test]
fn a_newer_schema_is_refused() {
    let s = Schema::new("newer");
    drop(s.open());
    s.client().batch_execute(&format!("UPDATE \"{}\".rabosh_schema SET version = 99", s.name)).unwrap();
    let e = PgBackend::open(&url(), s.options()).err().expect("a newer schema must be refused");
    assert_eq!(pg_kind(&e), PgErrorKind::SchemaTooNew);
}

#[test]
fn a_panicking_body_poisons_the_handle_and_commits_nothing() {
    let s = Schema::new("panic");
    let b = PgBackend::open(&url(), PgOptions { pool_size: 1, ..s.options() }).unwrap();
    let other = s.open();
    put(&b, b"k", b"1", b"");
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = b.transact(&mut |view, w| {
            view.get(b"k")?; // the transaction has a snapshot on the pooled connection
            w.put(b"k".to_vec(), b"panicked".to_vec(), vec![]);
            panic!("body panics");
        });
    }));
    assert!(r.is_err());
    // The trait's rule: every later call on the handle is refused until reopened.
    assert!(matches!(b.read().err(), Some(Error::Poisoned(_))));
    assert!(matches!(b.transact(&mut |_, _| Ok(())), Err(Error::Poisoned(_))));
    assert_eq!(other.read().unwrap().get(b"k").unwrap(), Some(b"1".to_vec()), "nothing committed");
    put(&other, b"k", b"2", b"");
    let reopened = s.open();
    reopened
        .transact(&mut |view, w| {
            let v = view.get(b"k")?.unwrap();
            w.put(b"k".to_vec(), [v, b"+".to_vec()].concat(), vec![]);
            Ok(())
        })
        .unwrap();
    assert_eq!(other.read().unwrap().get(b"k").unwrap(), Some(b"2+".to_vec()));
}

/// The URL with one part replaced; `url()` is `postgres://user:password@host:port/db`.
struct Parts {
    user: String,
    password: String,
    host: String,
    port: String,
    db: String,
}

fn parts() -> Parts {
    let u = url();
    let rest = u.strip_prefix("postgres://").or_else(|| u.strip_prefix("postgresql://")).unwrap();
    let (auth, rest) = rest.split_once('@').expect("RABOSH_PG_URL with user:password@");
    let (user, password) = auth.split_once(':').expect("RABOSH_PG_URL with a password");
    let (hostport, db) = rest.split_once('/').unwrap();
    let db = db.split('?').next().unwrap();
    let (host, port) = hostport.rsplit_once(':').unwrap_or((hostport, "5432"));
    Parts { user: user.into(), password: password.into(), host: host.into(), port: port.into(), db: db.into() }
}

impl Parts {
    fn url(&self) -> String {
        format!("postgres://{}:{}@{}:{}/{}", self.user, self.password, self.host, self.port, self.db)
    }
}

fn open_err(url: &str) -> Error {
    let s = Schema::new("err");
    match PgBackend::open(url, s.options()) {
        Ok(_) => panic!("open should have failed"),
        Err(e) => e,
    }
}

#[test]
fn connection_failures_are_typed_and_name_no_host_or_password() {
    let p = parts();
    let free_port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port().to_string()
    };
    let refused = Parts { port: free_port, ..parts() };
    let wrong_password = Parts { password: "not-the-password-xyzzy".into(), ..parts() };
    let missing_db = Parts { db: "no_such_database_here".into(), ..parts() };
    let unresolvable = Parts { host: "nonexistent.invalid".into(), ..parts() };
    let no_tls = Parts { port: fake_server(Fake::RefusesTls), ..parts() };
    let silent = Parts { port: fake_server(Fake::Silent), ..parts() };
    // (url, kind, the cause the message must name)
    let cases = [
        (refused.url(), PgErrorKind::Unreachable, "connection refused"),
        (unresolvable.url(), PgErrorKind::Unreachable, "the host name could not be resolved"),
        (wrong_password.url(), PgErrorKind::AuthenticationFailed, "authentication failed"),
        (missing_db.url(), PgErrorKind::DatabaseMissing, "does not exist"),
        // The test CA is not among the webpki roots.
        (format!("{}?sslmode=verify-full", p.url()), PgErrorKind::Tls, "not signed by a trusted root"),
        (format!("{}?sslmode=require", no_tls.url()), PgErrorKind::Tls, "does not offer TLS"),
        (format!("{}?connect_timeout=1", silent.url()), PgErrorKind::Timeout, "within connect_timeout"),
        (format!("{}?sslmode=sometimes", p.url()), PgErrorKind::InvalidUrl, "sslmode"),
        (format!("{}?connect_timeout=zz", p.url()), PgErrorKind::InvalidUrl, "could not be parsed"),
    ];
    for (u, kind, cause) in cases {
        let e = open_err(&u);
        let text = format!("{e} {e:?}");
        assert_eq!(pg_kind(&e), kind, "{text}");
        assert!(text.contains(cause), "{u}: {text:?} does not say {cause:?}");
        assert!(!text.contains("uncategorized"), "{text}");
        for secret in [&p.host, &p.password, &"not-the-password-xyzzy".to_string(), &"nonexistent".to_string(), &u] {
            assert!(!text.contains(secret.as_str()), "{secret:?} leaked into {text:?}");
        }
    }
}

enum Fake {
    /// Answers the TLS request with "N", as a server without TLS does.
    RefusesTls,
    /// Accepts and never answers (a stopped server, seen from the client).
    Silent,
}

/// A local listener playing a server that fails in one way; its port. It lives for the test
/// binary's run (a thread blocked on accept).
fn fake_server(kind: Fake) -> String {
    use std::io::{Read, Write};
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port().to_string();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in l.incoming() {
            let Ok(mut stream) = stream else { return };
            if let Fake::RefusesTls = kind {
                let mut request = [0u8; 8];
                if stream.read_exact(&mut request).is_ok() {
                    let _ = stream.write_all(b"N");
                }
            }
            held.push(stream);
        }
    });
    port
}

#[test]
fn server_errors_inside_a_body_are_typed_and_redacted() {
    let s = Schema::new("srverr");
    let b = s.open();
    // Drop the table under the backend: the next read fails with a server error that must
    // not quote the connection target.
    s.client().batch_execute(&format!("DROP TABLE \"{}\".kv", s.name)).unwrap();
    let e = b.transact(&mut |view, _w: &mut WriteSet| view.get(b"k").map(|_| ())).unwrap_err();
    assert_eq!(pg_kind(&e), PgErrorKind::Server);
    let text = format!("{e} {e:?}");
    let p = parts();
    assert!(!text.contains(&p.password) && !text.contains(&p.host), "{text}");
    assert!(text.contains("42P01"), "carries the SQLSTATE: {text}");
}

fn ca() -> String {
    std::env::var("RABOSH_PG_CA").unwrap_or_else(|_| {
        panic!(
            "RABOSH_PG_CA is not set: the sslmode test needs the CA of a TLS-enabled server \
             (scripts/with-postgres.mjs sets up both when the openssl command exists)"
        )
    })
}

/// Whether the backend's session (found by its `application_name`) is encrypted, per the server.
fn session_encrypted(s: &Schema, app: &str) -> bool {
    let rows = s
        .client()
        .query(
            "SELECT s.ssl FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid) WHERE a.application_name = $1",
            &[&app],
        )
        .unwrap();
    assert!(!rows.is_empty(), "no session named {app}");
    rows.iter().all(|r| r.get::<_, bool>(0))
}

#[test]
fn sslmode_is_honoured_with_rustls() {
    let ca = ca();
    let p = parts();
    let by_name = Parts { host: "localhost".into(), ..parts() };
    let s = Schema::new("tls");
    let root = format!("&sslrootcert={ca}");
    // (url, encrypted): each connects, and the server confirms whether TLS carries it.
    let ok = [
        (format!("{}?sslmode=disable", p.url()), false),
        (format!("{}?sslmode=prefer", p.url()), true),
        (format!("{}?sslmode=require", p.url()), true),
        (format!("{}?sslmode=verify-ca{root}", p.url()), true),
        (format!("{}?sslmode=verify-full{root}", p.url()), true),
        // The certificate names 127.0.0.1 only: verify-ca does not compare names.
        (format!("{}?sslmode=verify-ca{root}", by_name.url()), true),
    ];
    for (i, (url, encrypted)) in ok.iter().enumerate() {
        let app = format!("rabosh_tls_{}_{i}", std::process::id());
        let b = PgBackend::open(&format!("{url}&application_name={app}"), s.options())
            .unwrap_or_else(|e| panic!("{url}: {e}"));
        put(&b, b"k", url.as_bytes(), b"");
        assert_eq!(session_encrypted(&s, &app), *encrypted, "{url}");
    }
    let refused = [
        // Name mismatch under verify-full; unknown CA without sslrootcert.
        format!("{}?sslmode=verify-full{root}", by_name.url()),
        format!("{}?sslmode=verify-ca", p.url()),
        format!("{}?sslmode=verify-full", p.url()),
    ];
    for url in refused {
        let e = open_err(&url);
        assert_eq!(pg_kind(&e), PgErrorKind::Tls, "{url}: {e}");
        let text = format!("{e} {e:?}");
        assert!(!text.contains(&p.password) && !text.contains(&p.host), "{text}");
    }
}

#[test]
fn a_commit_whose_answer_never_comes_is_unknown_and_the_handle_goes_on() {
    // A deferred constraint trigger runs at COMMIT: a COMMIT that takes 4 s on the server, past
    // a 1 s client deadline (statement_timeout stays above it, so the server lets it finish).
    let s = Schema::new("slowcommit");
    let options = PgOptions {
        statement_timeout: std::time::Duration::from_secs(20),
        client_timeout: Some(std::time::Duration::from_secs(1)),
        ..s.options()
    };
    let b = PgBackend::open(&url(), options).unwrap();
    s.client()
        .batch_execute(&format!(
            "CREATE FUNCTION \"{0}\".slow() RETURNS trigger LANGUAGE plpgsql AS \
             $$ BEGIN PERFORM pg_sleep(4); RETURN NULL; END $$; \
             CREATE CONSTRAINT TRIGGER slow AFTER INSERT ON \"{0}\".kv DEFERRABLE INITIALLY DEFERRED \
             FOR EACH ROW EXECUTE FUNCTION \"{0}\".slow()",
            s.name
        ))
        .unwrap();
    let e = b
        .transact(&mut |_, w| {
            w.put(b"k".to_vec(), b"v".to_vec(), vec![]);
            Ok(())
        })
        .unwrap_err();
    assert_eq!(pg_kind(&e), PgErrorKind::CommitOutcomeUnknown, "{e}");
    // Not poisoned: the handle keeps nothing the commit could have changed, and its later
    // calls answer from the server's state, which is the truth (a failover must not stop it).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        if b.read().unwrap().get(b"k").unwrap() == Some(b"v".to_vec()) {
            break; // it did commit, after the client stopped waiting
        }
        assert!(std::time::Instant::now() < deadline, "the slow COMMIT never landed");
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}

/// Files of the relation `rel` (and its TOAST table) in the server's data directory holding
/// `needle`, after a CHECKPOINT writes the pages out. Needs scripts/with-postgres.mjs's server.
fn files_holding(s: &Schema, rel: &str, needle: &[u8]) -> usize {
    let log = std::env::var("RABOSH_PG_LOG").expect("RABOSH_PG_LOG: the test reads the server's own files");
    let data = std::path::Path::new(&log).parent().unwrap().join("data");
    let mut c = s.client();
    c.batch_execute("CHECKPOINT").unwrap();
    let q = format!(
        "SELECT pg_relation_filepath(c.oid), pg_relation_filepath(c.reltoastrelid) FROM pg_class c \
         JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = '{}' AND c.relname = '{rel}'",
        s.name
    );
    let row = c.query_one(&q, &[]).unwrap();
    let paths: Vec<String> = (0..2).filter_map(|i| row.get::<_, Option<String>>(i)).collect();
    paths
        .iter()
        .filter(|p| std::fs::read(data.join(p)).unwrap_or_default().windows(needle.len()).any(|w| w == needle))
        .count()
}

#[test]
fn reclaim_vacuums_so_deleted_bytes_leave_the_table_files() {
    let s = Schema::new("vacuum");
    let b = s.open();
    let small = b"SMALL-SECRET-a1b2c3";
    let mut big = b"BIG-SECRET-d4e5f6 ".to_vec();
    for i in 0..400u32 {
        big.extend_from_slice(format!("{:08x}", i.wrapping_mul(2_654_435_761)).as_bytes()); // TOASTed
    }
    put(&b, b"kept", b"other", b"");
    put(&b, b"small", small, b"");
    put(&b, b"big", &big, b"");
    assert!(files_holding(&s, "kv", small) > 0 && files_holding(&s, "kv", b"BIG-SECRET-d4e5f6") > 0);
    b.transact(&mut |_, w| {
        w.put(b"small".to_vec(), b"redacted".to_vec(), vec![]);
        w.delete(b"big".to_vec());
        Ok(())
    })
    .unwrap();
    // Deleted and overwritten rows stay in the table's pages as dead tuples until a vacuum.
    assert!(files_holding(&s, "kv", small) > 0, "an UPDATE leaves the old row version in the file");
    // VACUUM removes a dead row only once no transaction anywhere on the server may still see
    // it, and the other tests of this binary run transactions on the same server at the same
    // time (docs/guide/history.md says so of redaction on a URL): reclaim again until the horizon
    // passes, within a bound.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        b.reclaim().unwrap();
        let left = (files_holding(&s, "kv", small), files_holding(&s, "kv", b"BIG-SECRET-d4e5f6"));
        if left == (0, 0) {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "after reclaim (VACUUM) the overwritten and deleted bytes are gone: files still holding them {left:?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(250));
    }
    assert_eq!(b.read().unwrap().get(b"kept").unwrap(), Some(b"other".to_vec()));
}
