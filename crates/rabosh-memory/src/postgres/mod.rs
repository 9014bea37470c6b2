//! The backend seam over PostgreSQL (and the Postgres-wire databases that accept the same SQL:
//! CockroachDB, YugabyteDB).
//!
//! Per schema, `kv (k BYTEA PRIMARY KEY, v BYTEA, m BYTEA)`: bytea compares as bytes, which is
//! the trait's key order, and a prefix scan is a range on the primary key reading only `k` and
//! `m`. Beside it the directory summary (`summary.rs`), updated in each commit's transaction,
//! answers `dir_summary` and `usage` from a directory's depth-1/2 rows.
//!
//! Concurrency: `transact` runs the body in a SERIALIZABLE transaction and reruns it on a
//! serialization failure (SQLSTATE 40001) or deadlock (40P01), a bounded number of times with
//! jittered exponential backoff; past the bound it answers [`PgErrorKind::Conflict`]. Row locks
//! (`SELECT … FOR UPDATE`) were not chosen because the commands decide on keys that do not
//! exist yet (a create's target, a rename's destination, a directory's listing): no row is
//! there to lock, and guarding those would need a lock row per directory or one global lock.
//! Serializable isolation covers absent keys and ranges as well, it is CockroachDB's native
//! mode (which asks clients to retry exactly so), and the trait already documents the body as
//! re-runnable: it only stages into the write set, which is cleared before each run.
//!
//! `read` returns a view holding a REPEATABLE READ READ ONLY transaction on a pooled
//! connection, with its snapshot taken before `read` returns; dropping the view ends it. A view
//! holds a pool slot and an old snapshot (which keeps the server from vacuuming): hold it for
//! one command, not longer. With every slot held, `read`/`transact` wait up to the connect
//! timeout and answer [`PgErrorKind::Timeout`].
//!
//! Connections: an r2d2 pool of synchronous clients, checked out and used on the calling thread
//! (a libuv pool thread under the binding; r2d2's own threads only open replacements). The
//! first connection, which creates the schema, is made on the opening thread, so a refused
//! connection, a wrong password or a missing database is a typed error from `open`. A pooled connection that went stale (server restart)
//! fails at BEGIN, before anything was sent that could commit, and is replaced transparently.
//! A connection lost later fails that call with [`PgErrorKind::ConnectionLost`] (nothing
//! committed) or, when COMMIT itself was in flight, [`PgErrorKind::CommitOutcomeUnknown`]; the
//! next call reconnects. Durability is the server's (`synchronous_commit` and its replication).

mod error;
mod pool;
mod retry;
mod schema;
mod sql;
mod summary;
mod tls;
mod view;

pub use error::{PgError, PgErrorKind};

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use postgres::config::Host;

use crate::Result;
use crate::backend::{Backend, ReadView, TxBody, WriteOp, WriteSet};
use crate::poison::Poison;
use error::{Phase, Redactor};
use pool::{Conn, Manager, checkout_error};
use retry::Backoff;
use sql::{Q, Sql, WRITE_CHUNK_BYTES, WRITE_CHUNK_ROWS};
use view::ConnView;

/// How to reach and use the database. The URL carries host, credentials, database and TLS.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PgOptions {
    /// Schema holding the tables (created on first open): a lower-case identifier.
    pub schema: String,
    /// Most connections held open at once.
    pub pool_size: u32,
    /// Bound on connecting, and on waiting for a free pooled connection, unless the URL sets
    /// `connect_timeout`.
    pub connect_timeout: Duration,
    /// Server-side bound on one statement.
    pub statement_timeout: Duration,
    /// Most runs of one transaction body before answering Conflict.
    pub max_attempts: u32,
    /// Create the schema and its tables when the store is not there yet; false answers
    /// [`crate::Error::NotAStore`] instead, having created nothing. An existing store of an older
    /// version is migrated either way (it is a store; this build cannot read it unmigrated).
    pub create: bool,
}

impl Default for PgOptions {
    fn default() -> Self {
        PgOptions {
            schema: "rabosh".into(),
            pool_size: 8,
            connect_timeout: Duration::from_secs(10),
            statement_timeout: Duration::from_secs(30),
            max_attempts: 64,
            create: true,
        }
    }
}

/// What views and transactions share.
pub(crate) struct Shared {
    sql: Sql,
    redactor: Redactor,
    /// Values returned by `get` (tests prove listings read none).
    values_read: AtomicU64,
    /// Rows returned to views by every query (tests prove a listing reads only its entries).
    rows_read: AtomicU64,
}

pub struct PgBackend {
    pool: r2d2::Pool<Manager>,
    shared: Arc<Shared>,
    last_error: Arc<Mutex<Option<PgError>>>,
    max_attempts: u32,
    poison: Poison,
    commits: AtomicU64,
    attempts: AtomicU64,
}

type Pooled = r2d2::PooledConnection<Manager>;
/// A staged row: value and metadata.
pub(crate) type Row<'a> = (&'a [u8], &'a [u8]);

impl PgBackend {
    /// Connects (on this thread, so a refused connection, a wrong password or a missing
    /// database is answered at once and typed), creates or migrates the schema, and sets up
    /// the pool.
    pub fn open(url: &str, options: PgOptions) -> Result<PgBackend> {
        if !sql::valid_schema(&options.schema) {
            return Err(crate::Error::InvalidOption { option: "schema", value: options.schema.clone() });
        }
        if options.pool_size == 0 || options.max_attempts == 0 {
            let (option, value) = if options.pool_size == 0 {
                ("pool_size", options.pool_size)
            } else {
                ("max_attempts", options.max_attempts)
            };
            return Err(crate::Error::InvalidOption { option, value: value.to_string() });
        }
        let request = tls::split_url(url)?;
        let mut config: postgres::Config = request
            .url
            .parse()
            .map_err(|_| PgError::new(PgErrorKind::InvalidUrl, "the PostgreSQL URL could not be parsed"))?;
        config.ssl_mode(request.mode);
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(options.connect_timeout);
        }
        if config.get_tcp_user_timeout().is_none() {
            // A server that vanished without closing the socket fails the call instead of
            // holding the thread until the kernel gives up (minutes).
            config.tcp_user_timeout(options.statement_timeout + Duration::from_secs(5));
        }
        if config.get_application_name().is_none() {
            config.application_name("rabosh-memory");
        }
        let redactor = Redactor::new(secrets(url, &config));
        let connect_timeout = *config.get_connect_timeout().unwrap_or(&options.connect_timeout);
        let last_error = Arc::new(Mutex::new(None));
        let manager = Manager {
            tls: tls::connector(&request)?,
            config,
            redactor: redactor.clone(),
            statement_timeout: options.statement_timeout,
            last_error: last_error.clone(),
        };
        let mut first = manager.open()?;
        schema::ensure(&mut first, &options.schema, options.create, &redactor)?;
        drop(first);
        let pool = r2d2::Pool::builder()
            .max_size(options.pool_size)
            .min_idle(Some(0))
            // Staleness is found at BEGIN and retried there; a ping per checkout would add a
            // round trip to every call.
            .test_on_check_out(false)
            .connection_timeout(connect_timeout)
            .error_handler(Box::new(r2d2::NopErrorHandler))
            .build_unchecked(manager);
        Ok(PgBackend {
            pool,
            shared: Arc::new(Shared {
                sql: Sql::new(&options.schema),
                redactor,
                values_read: AtomicU64::new(0),
                rows_read: AtomicU64::new(0),
            }),
            last_error,
            max_attempts: options.max_attempts,
            poison: Poison::default(),
            commits: AtomicU64::new(0),
            attempts: AtomicU64::new(0),
        })
    }

    /// Transactions that committed a non-empty write set through this handle.
    pub fn commits(&self) -> u64 {
        self.commits.load(Ordering::Relaxed)
    }

    /// Runs of transaction bodies through this handle: commands plus serialization retries.
    pub fn attempts(&self) -> u64 {
        self.attempts.load(Ordering::Relaxed)
    }

    /// Rows returned by the queries of this handle's views (reads, scans, summaries).
    pub fn rows_read(&self) -> u64 {
        self.shared.rows_read.load(Ordering::Relaxed)
    }

    /// Values returned by `get` on this handle's views.
    pub fn values_read(&self) -> u64 {
        self.shared.values_read.load(Ordering::Relaxed)
    }

    fn checkout(&self) -> std::result::Result<Pooled, PgError> {
        self.pool.get().map_err(|_| checkout_error(&self.last_error, self.pool.connection_timeout()))
    }

    /// A pooled connection with `begin` run on it. A reused connection that fails here went
    /// stale (nothing was sent that could commit): it is discarded and another one tried.
    fn begin(&self, begin: &str) -> std::result::Result<Pooled, PgError> {
        let mut tries = self.pool.max_size() + 1;
        loop {
            let mut conn = self.checkout()?;
            let reused = !conn.fresh;
            conn.fresh = false;
            match conn.client.batch_execute(begin) {
                Ok(()) => return Ok(conn),
                Err(e) => {
                    let err = conn.fail(&e, Phase::Statement, &self.shared.redactor);
                    tries -= 1;
                    if !(reused && conn.broken) || tries == 0 {
                        return Err(err);
                    }
                }
            }
        }
    }

    /// Sends the write set and the summary rows it changes, and commits; the caller ends the
    /// transaction on error.
    fn commit(&self, conn: &mut Conn, writes: &WriteSet) -> Result<()> {
        // Last write to a key wins; one statement may not touch a row twice.
        let mut last: BTreeMap<&[u8], Option<Row<'_>>> = BTreeMap::new();
        for op in writes.ops() {
            match op {
                WriteOp::Put { key, value, meta } => last.insert(key, Some((value, meta))),
                WriteOp::Delete { key } => last.insert(key, None),
            };
        }
        let redactor = &self.shared.redactor;
        let deltas = summary::deltas(conn, &self.shared.sql, redactor, &last)?;
        let deletes: Vec<&[u8]> = last.iter().filter(|(_, v)| v.is_none()).map(|(k, _)| *k).collect();
        for chunk in deletes.chunks(WRITE_CHUNK_ROWS) {
            let statement = conn.statement(&self.shared.sql, Q::Delete, redactor)?;
            conn.client.execute(&statement, &[&chunk]).map_err(|e| conn.fail(&e, Phase::Statement, redactor))?;
        }
        let puts: Vec<(&[u8], &[u8], &[u8])> =
            last.iter().filter_map(|(k, v)| v.map(|(value, meta)| (*k, value, meta))).collect();
        let mut start = 0;
        while start < puts.len() {
            let mut end = start;
            let mut bytes = 0;
            while end < puts.len() && end - start < WRITE_CHUNK_ROWS && (end == start || bytes < WRITE_CHUNK_BYTES) {
                bytes += puts[end].0.len() + puts[end].1.len() + puts[end].2.len();
                end += 1;
            }
            let chunk = &puts[start..end];
            let keys: Vec<&[u8]> = chunk.iter().map(|p| p.0).collect();
            let values: Vec<&[u8]> = chunk.iter().map(|p| p.1).collect();
            let metas: Vec<&[u8]> = chunk.iter().map(|p| p.2).collect();
            let statement = conn.statement(&self.shared.sql, Q::Upsert, redactor)?;
            conn.client
                .execute(&statement, &[&keys, &values, &metas])
                .map_err(|e| conn.fail(&e, Phase::Statement, redactor))?;
            start = end;
        }
        summary::apply(conn, &self.shared.sql, redactor, deltas)?;
        Ok(conn.client.batch_execute("COMMIT").map_err(|e| conn.fail(&e, Phase::Commit, redactor))?)
    }
}

/// Strings that must never appear in an error: the URL, the password, every host and address.
fn secrets(url: &str, config: &postgres::Config) -> Vec<String> {
    let mut out = vec![url.to_string()];
    if let Some(p) = config.get_password() {
        out.push(String::from_utf8_lossy(p).into_owned());
    }
    for h in config.get_hosts() {
        out.push(match h {
            Host::Tcp(name) => name.clone(),
            // The client has socket-directory hosts only on Unix.
            #[cfg(unix)]
            Host::Unix(path) => path.display().to_string(),
        });
    }
    out.extend(config.get_hostaddrs().iter().map(|a| a.to_string()));
    out
}

impl Backend for PgBackend {
    fn read(&self) -> Result<Box<dyn ReadView>> {
        self.poison.check()?;
        // The trailing SELECT fixes the snapshot now, not at the view's first query.
        let conn = self.begin("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SELECT 1")?;
        Ok(Box::new(ConnView::new(conn, self.shared.clone(), true)))
    }

    fn transact(&self, body: &mut TxBody<'_>) -> Result<()> {
        self.poison.check()?;
        // The trait's rule: a panic in the body or the commit poisons this handle. Nothing was
        // committed (the transaction dies with its connection), but the caller's state may be.
        let _on_panic = self.poison.on_panic();
        let mut backoff = Backoff::new(Duration::from_millis(1), Duration::from_millis(100));
        let mut writes = WriteSet::default();
        for attempt in 1..=self.max_attempts {
            let mut conn = self.begin("BEGIN ISOLATION LEVEL SERIALIZABLE")?;
            self.attempts.fetch_add(1, Ordering::Relaxed);
            writes.clear();
            conn.in_body = true;
            let decided = body(&ConnView::new(&mut *conn, self.shared.clone(), false), &mut writes);
            conn.in_body = false;
            let result = match decided {
                Ok(()) => self.commit(&mut conn, &writes),
                Err(e) => Err(e),
            };
            let Err(e) = result else {
                if !writes.is_empty() {
                    self.commits.fetch_add(1, Ordering::Relaxed);
                }
                return Ok(());
            };
            if let crate::Error::Postgres(pe) = &e
                && pe.kind() == PgErrorKind::CommitOutcomeUnknown
            {
                // As the trait asks of a commit whose outcome is unknown; reopening answers
                // from the server's state, which is the truth.
                self.poison.set("the connection was lost during COMMIT");
            }
            if !conn.broken && conn.client.batch_execute("ROLLBACK").is_err() {
                conn.broken = true;
            }
            drop(conn);
            match &e {
                crate::Error::Postgres(pe) if pe.is_retryable() && attempt < self.max_attempts => backoff.sleep(),
                _ => return Err(e),
            }
        }
        Err(PgError::new(PgErrorKind::Conflict, "the transaction kept conflicting with concurrent ones").into())
    }
}
