//! The PostgreSQL backend of rabosh-memory (and of the Postgres-wire databases that accept the
//! same SQL: CockroachDB, YugabyteDB), built on `rabosh_memory::backend_kit` alone. A binding
//! opens its URLs by passing [`PostgresOpener`] to `rabosh_memory::open_with` (`url.rs` holds the
//! URL's parameters).
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
//! connection, a wrong password or a missing database is a typed error from `open`. A pooled
//! connection that went stale (server restart) is found at checkout (the server's goodbye is
//! already in the socket) or at BEGIN, before anything was sent that could commit, and is
//! replaced transparently. A transaction sends its BEGIN with its first statement (one round
//! trip; `view.rs`), and its writes with COMMIT (another); a stale connection found in that first
//! flight is swapped for another before the body sees any answer. A body that read nothing
//! from the server (a create: its one read, the history setting, is answered by the handle's
//! settings cache and checked in the commit flight, `settings_cache.rs`) sends BEGIN in that
//! flight too: one round trip; a stale connection is then one the checkout found closed, and
//! one that breaks in the flight leaves the outcome unknown unless the server ended the session
//! at BEGIN. A create's commit (at most one settings guard, its row, its summary rows) is not
//! even that flight but ONE statement in autocommit, the session's default isolation being
//! SERIALIZABLE (`PgBackend::commit_fused`): each statement of a flight is a server cycle of its
//! own, and on a server sharing the client's cores those cycles cost more than the writes.
//! On a connection idle for a second or more BEGIN still goes alone first, so a
//! server that stopped answering meanwhile answers Timeout, nothing sent that could commit. A command's own snapshot view (`read_deferred`) begins with its first query (the
//! metadata and value of a file view in one), and its read-only COMMIT is not waited for.
//! A connection lost later in a transaction, before COMMIT was sent, reruns the body on a new
//! connection (nothing committed; at most 3 times); a snapshot view that has not answered yet
//! begins again on a new one. When COMMIT itself was in flight the
//! call answers [`PgErrorKind::CommitOutcomeUnknown`], and the handle goes on (it keeps no state
//! the outcome could change). A multi-host URL rides a failover: new connections go to the
//! node that takes writes now, retried every 100 ms while none does, and a stale primary is
//! refused (`failover.rs`). Every call has a client-side deadline
//! (`client.rs`), so a server that does not answer at all fails calls instead of holding
//! threads. Durability is the server's (`synchronous_commit` and its replication).

mod client;
mod columns;
mod error;
mod failover;
mod feed;
mod handle;
mod pool;
mod pooler;
mod retry;
mod schema;
mod seal;
mod settings_cache;
mod sql;
mod summary;
mod tls;
mod url;
mod view;

pub use error::{PgError, PgErrorKind};
pub use handle::{PgCounters, PgHandle};
pub use url::{CAPABILITIES, PostgresOpener, is_url};

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use postgres::config::Host;

use error::{Phase, Redactor};
use pool::{Conn, Manager};
use rabosh_memory::backend_kit::{
    Backend, ChangePage, Committed, Cursor, EncryptionKey, Error, Poison, ReadView, Result, SETTINGS_PREFIX, TxBody,
    WriteOp, WriteSet, size_changes,
};
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
    /// Client-side bound on every call (COMMIT included), for a server that cannot answer at
    /// all (stopped, frozen, or cut off without a reset), where `statement_timeout` cannot fire.
    /// None: `statement_timeout` plus 5 s. Past it the call fails with
    /// [`PgErrorKind::Timeout`] (nothing committed), or [`PgErrorKind::CommitOutcomeUnknown`]
    /// when COMMIT was the unanswered call, and the connection is discarded.
    pub client_timeout: Option<Duration>,
    /// Most runs of one transaction body before answering Conflict.
    pub max_attempts: u32,
    /// Create the schema and its tables when the store is not there yet; false answers
    /// [`Error::NotAStore`] instead, having created nothing. An existing store of an older version
    /// is migrated either way (it is a store; this build cannot read it unmigrated).
    pub create: bool,
    /// Seal every row's value and metadata client-side under a data key this host key wraps
    /// (`seal.rs`); None: a plain store.
    pub encryption: Option<EncryptionKey>,
}

impl Default for PgOptions {
    fn default() -> Self {
        PgOptions {
            schema: "rabosh".into(),
            pool_size: 8,
            connect_timeout: Duration::from_secs(10),
            statement_timeout: Duration::from_secs(30),
            client_timeout: None,
            max_attempts: 64,
            create: true,
            encryption: None,
        }
    }
}

/// A snapshot view's transaction; the trailing SELECT fixes the snapshot now, not at the view's
/// first query.
const SNAPSHOT: &str = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SELECT 1";

/// A deferred snapshot view's transaction (`Backend::read_deferred`): sent with the view's first
/// query, whose start fixes the snapshot.
const SNAPSHOT_DEFERRED: &str = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY";

/// A body that read nothing from the server sends BEGIN in its commit flight, unless its
/// connection has had no answer for this long (`PgBackend::commit_flight`).
const PROBE_AFTER_IDLE: Duration = Duration::from_secs(1);

/// Reruns of one transaction body after its connection broke before COMMIT.
const LOST_RETRIES: u32 = 3;

/// What views and transactions share.
pub(crate) struct Shared {
    sql: Sql,
    redactor: Redactor,
    /// Values returned by `get` (tests prove listings read none).
    values_read: AtomicU64,
    /// Rows returned to views by every query (tests prove a listing reads only its entries).
    rows_read: AtomicU64,
    /// The store's data key when it is encrypted (`seal.rs`).
    sealer: Option<seal::Sealer>,
    schema: String,
    /// The pool and its last connect failure, for a transaction's first flight that finds its
    /// connection stale and continues on another (`view.rs`).
    pool: r2d2::Pool<Manager>,
    last_error: Arc<Mutex<Option<PgError>>>,
    /// Settings rows this handle read, for bodies that read them again (`settings_cache.rs`).
    settings: settings_cache::SettingsCache,
}

impl Shared {
    /// A column as read from the server, opened when the store is sealed.
    pub(crate) fn open_column<'a>(
        &self,
        column: seal::Column,
        key: &[u8],
        bytes: &'a [u8],
    ) -> Result<std::borrow::Cow<'a, [u8]>> {
        seal::open_opt(self.sealer.as_ref(), column, key, bytes)
    }
}

pub struct PgBackend {
    pool: r2d2::Pool<Manager>,
    shared: Arc<Shared>,
    last_error: Arc<Mutex<Option<PgError>>>,
    max_attempts: u32,
    poison: Poison,
    commits: AtomicU64,
    attempts: AtomicU64,
    conflicts: AtomicU64,
    round_trips: Arc<AtomicU64>,
    /// Statements sent by commits, BEGIN and COMMIT included (`commit_statements`).
    commit_statements: AtomicU64,
    /// Held by a transaction's reruns after a serialization failure (see `transact`).
    retry_gate: Mutex<()>,
}

type Pooled = r2d2::PooledConnection<Manager>;
/// A staged row: value and metadata.
type Row<'a> = (&'a [u8], &'a [u8]);

impl PgBackend {
    /// Connects (on this thread, so a refused connection, a wrong password or a missing
    /// database is answered at once and typed), creates or migrates the schema, and sets up
    /// the pool.
    pub fn open(url: &str, options: PgOptions) -> Result<PgBackend> {
        if !sql::valid_schema(&options.schema) {
            return Err(Error::InvalidOption { option: "schema", value: options.schema });
        }
        if options.pool_size == 0 || options.max_attempts == 0 {
            let (option, value) = if options.pool_size == 0 {
                ("pool_size", options.pool_size)
            } else {
                ("max_attempts", options.max_attempts)
            };
            return Err(Error::InvalidOption { option, value: value.to_string() });
        }
        let request = tls::split_url(url)?;
        let mut config: tokio_postgres::Config = request
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
        let client_timeout = options.client_timeout.unwrap_or(options.statement_timeout + Duration::from_secs(5));
        if client_timeout.is_zero() {
            return Err(Error::InvalidOption { option: "client_timeout", value: "0".into() });
        }
        let manager = Manager {
            tls: tls::connector(&request)?,
            hosts: failover::Hosts::new(&config),
            guard: failover::Guard::default(),
            redactor: redactor.clone(),
            statement_timeout: options.statement_timeout,
            connect_timeout,
            client_timeout,
            last_error: last_error.clone(),
            round_trips: Arc::new(AtomicU64::new(0)),
        };
        let round_trips = manager.round_trips.clone();
        let mut first = manager.open()?;
        schema::ensure(&mut first, &options.schema, options.create, &redactor)?;
        let sealer = seal::settle(&mut first, &options.schema, options.encryption.as_ref(), &redactor)?;
        let pool = r2d2::Pool::builder()
            .max_size(options.pool_size)
            .min_idle(Some(0))
            // Staleness is found at checkout (what the server already sent: no round trip) and
            // at BEGIN, and retried there; a ping per checkout would add a round trip per call.
            .test_on_check_out(false)
            .connection_timeout(connect_timeout)
            .error_handler(Box::new(r2d2::NopErrorHandler))
            .build_unchecked(manager);
        // The pool's first connection, which stays in it (no connection made for the probe alone).
        let mut second = pool::checkout(&pool, &last_error)?;
        pooler::refuse_transaction_pooling(&mut first, &mut second, &redactor)?;
        drop((first, second));
        Ok(PgBackend {
            pool: pool.clone(),
            shared: Arc::new(Shared {
                sql: Sql::new(&options.schema, sealer.is_none()),
                redactor,
                values_read: AtomicU64::new(0),
                rows_read: AtomicU64::new(0),
                sealer,
                schema: options.schema.clone(),
                pool: pool.clone(),
                last_error: last_error.clone(),
                settings: settings_cache::SettingsCache::default(),
            }),
            last_error,
            max_attempts: options.max_attempts,
            poison: Poison::default(),
            commits: AtomicU64::new(0),
            attempts: AtomicU64::new(0),
            conflicts: AtomicU64::new(0),
            round_trips,
            commit_statements: AtomicU64::new(0),
            retry_gate: Mutex::new(()),
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

    /// Serialization failures and deadlocks (SQLSTATE 40001, 40P01) that reran a body.
    pub fn conflicts(&self) -> u64 {
        self.conflicts.load(Ordering::Relaxed)
    }

    /// Round trips to the server by every pooled connection (connecting excluded); a pipelined
    /// flight of statements counts once.
    pub fn round_trips(&self) -> u64 {
        self.round_trips.load(Ordering::Relaxed)
    }

    /// Statements that commits sent to the server, BEGIN and COMMIT included: a create in
    /// autocommit is one (`commit_fused`), a pipelined flight every statement it holds.
    pub fn commit_statements(&self) -> u64 {
        self.commit_statements.load(Ordering::Relaxed)
    }

    /// Rows returned by the queries of this handle's views (reads, scans, summaries).
    pub fn rows_read(&self) -> u64 {
        self.shared.rows_read.load(Ordering::Relaxed)
    }

    /// Values returned by `get` on this handle's views.
    pub fn values_read(&self) -> u64 {
        self.shared.values_read.load(Ordering::Relaxed)
    }

    pub fn is_encrypted(&self) -> bool {
        self.shared.sealer.is_some()
    }

    /// Rewraps the data key under `new` (one row, one statement); `NotEncrypted` for a plain store.
    pub fn rotate_key(&self, new: &EncryptionKey) -> Result<()> {
        self.poison.check()?;
        let Some(sealer) = &self.shared.sealer else {
            return Err(Error::NotEncrypted(format!(
                "the PostgreSQL store in schema {} is not encrypted: it has no key to rotate",
                self.shared.schema
            )));
        };
        let mut conn = self.begin("SELECT 1")?;
        seal::rotate(&mut conn, &self.shared.schema, sealer, new, &self.shared.redactor)
    }

    fn begin(&self, begin: &str) -> std::result::Result<Pooled, PgError> {
        pool::begin(&self.pool, &self.last_error, &self.shared.redactor, begin)
    }

    /// Sends the write set and the summary rows it changes, and commits; the caller ends the
    /// transaction on error.
    /// With `new_only`, the rows staged by [`WriteSet::write_new`] are plain INSERTs, first in the
    /// flight: a row already at one of their keys fails it with a unique violation, which rolls
    /// the whole transaction back (the COMMIT after it answers ROLLBACK) and is answered
    /// [`Committed::Taken`]. No read of the key is needed, so no predicate lock covers the index
    /// page the row goes into.
    /// Settings the body was answered from the cache are checked first in the flight; None
    /// when one had changed (nothing committed: the body is to run again on what the server
    /// holds). A body that read nothing from the server sends its BEGIN in the same flight: a
    /// create is one round trip.
    fn commit(&self, conn: &mut Conn, writes: &WriteSet, new_only: bool) -> Result<Option<Committed>> {
        let writes_settings = writes.ops().iter().any(|op| op_key(op).starts_with(SETTINGS_PREFIX));
        if writes_settings {
            // Another body of this handle must not be answered the value this commit replaces
            // (it would be caught by its guard, and rerun; this saves the rerun).
            self.shared.settings.clear();
        }
        let committed = self.commit_flight(conn, writes, new_only);
        if writes_settings {
            self.shared.settings.clear();
        }
        committed
    }

    fn commit_flight(&self, conn: &mut Conn, writes: &WriteSet, new_only: bool) -> Result<Option<Committed>> {
        let assumed = std::mem::take(&mut conn.assumed);
        let deltas = summary::deltas(&size_changes(writes)?);
        // Last write to a key wins; one statement may not touch a row twice.
        let mut last: BTreeMap<&[u8], Option<Row<'_>>> = BTreeMap::new();
        for op in writes.ops() {
            match op {
                WriteOp::Put { key, value, meta } => last.insert(key, Some((value, meta))),
                WriteOp::Delete { key } => last.insert(key, None),
            };
        }
        let redactor = &self.shared.redactor;
        let deletes: Vec<&[u8]> = last.iter().filter(|(_, v)| v.is_none()).map(|(k, _)| *k).collect();
        let sealed: Vec<(&[u8], Vec<u8>, Vec<u8>)>;
        let puts: Vec<(&[u8], &[u8], &[u8])> = match &self.shared.sealer {
            None => last.iter().filter_map(|(k, v)| v.map(|(value, meta)| (*k, value, meta))).collect(),
            Some(s) => {
                sealed = last
                    .iter()
                    .filter_map(|(k, v)| {
                        v.map(|(value, meta)| {
                            (*k, s.seal(seal::Column::Value, k, value), s.seal(seal::Column::Meta, k, meta))
                        })
                    })
                    .collect();
                sealed.iter().map(|(k, v, m)| (*k, v.as_slice(), m.as_slice())).collect()
            }
        };
        let mut planned: Planned<'_> = Vec::new();
        // The guards before the writes: the transaction reads what the body was told, then writes.
        for a in &assumed {
            planned.push((a.guard(), vec![Box::new(a.key.as_slice()), Box::new(a.raw.as_deref())]));
        }
        let fresh: std::collections::BTreeSet<&[u8]> =
            if new_only { writes.new_only_keys().into_iter().collect() } else { std::collections::BTreeSet::default() };
        let (inserts, puts): (Vec<_>, Vec<_>) = puts.into_iter().partition(|p| fresh.contains(p.0));
        for (q, rows) in [(Q::InsertNew, &inserts), (Q::Upsert, &puts)] {
            let mut start = 0;
            while start < rows.len() {
                let mut end = start;
                let mut bytes = 0;
                while end < rows.len() && end - start < WRITE_CHUNK_ROWS && (end == start || bytes < WRITE_CHUNK_BYTES)
                {
                    bytes += rows[end].0.len() + rows[end].1.len() + rows[end].2.len();
                    end += 1;
                }
                let chunk = &rows[start..end];
                let keys: Vec<&[u8]> = chunk.iter().map(|p| p.0).collect();
                let values: Vec<&[u8]> = chunk.iter().map(|p| p.1).collect();
                let metas: Vec<&[u8]> = chunk.iter().map(|p| p.2).collect();
                planned.push((q, vec![Box::new(keys), Box::new(values), Box::new(metas)]));
                start = end;
            }
        }
        for chunk in deletes.chunks(WRITE_CHUNK_ROWS) {
            planned.push((Q::Delete, vec![Box::new(chunk)]));
        }
        planned.extend(summary::plan(deltas));
        planned.extend(feed::plan(writes));
        if conn.pending_begin.is_some()
            && conn.client.idle_for() < PROBE_AFTER_IDLE
            && let Some(q) = fused(&planned)
        {
            return self.commit_fused(conn, q, planned);
        }
        self.commit_statements.fetch_add(planned.len() as u64 + 1, Ordering::Relaxed);
        let mut flight = Vec::with_capacity(planned.len());
        for (q, params) in &planned {
            flight.push((conn.statement(&self.shared.sql, *q, redactor)?, summary::refs(params)));
        }
        // The writes and COMMIT go in one flight (one round trip, and the transaction, with its
        // row and predicate locks, ends as soon as the server has run them). Nothing after a
        // failed statement can commit: the server fails the rest of the transaction and answers
        // the COMMIT with a rollback, so the first failure is the outcome.
        let mut begin = conn.pending_begin.take();
        if begin.is_some() && flight.is_empty() {
            // The body read and wrote nothing: there is no transaction to begin or end.
            return Ok(Some(Committed::Done));
        }
        if let Some(first) = begin
            && conn.client.idle_for() >= PROBE_AFTER_IDLE
        {
            // A connection unused for a while may reach a server that stopped answering
            // meanwhile: BEGIN alone first, so that call fails (Timeout, or ConnectionLost and a
            // rerun) before anything that could commit was sent. (A flight holding COMMIT that
            // gets no answer may still commit: its outcome is unknown.)
            conn.client.batch_execute(first).map_err(|e| conn.fail(&e, Phase::Statement, redactor))?;
            begin = None;
        }
        // A body that read nothing from the server (a create: its one read, the history setting,
        // answered from the cache) sends its BEGIN in this flight too. A connection the server
        // ended was found at checkout (its goodbye is in the socket); one that breaks now breaks
        // in a flight that holds a COMMIT, whose outcome is then unknown, as below.
        if begin.is_some() {
            self.commit_statements.fetch_add(1, Ordering::Relaxed);
        }
        let mut answers =
            conn.client.flight(begin, &flight, "COMMIT").map_err(|e| conn.fail(&e, Phase::Commit, redactor))?;
        if begin.is_some()
            && let Err(e) = answers.remove(0)
        {
            // The server refused BEGIN and ended the session (a shutdown's FATAL): it ran nothing
            // after it, and the body may run again on another connection. Any other failure
            // leaves the COMMIT's fate unknown.
            let ended = matches!(&e, client::Failure::Pg(pe) if pe.as_db_error().is_some()) && conn.client.is_closed();
            let phase = if ended { Phase::Statement } else { Phase::Commit };
            return Err(conn.fail(&e, phase, redactor).into());
        }
        let commit = answers.len() - 1;
        for (i, answer) in answers.into_iter().enumerate() {
            let Err(e) = answer else { continue };
            if i < commit
                && matches!(planned[i].0, Q::GuardValue | Q::GuardMeta)
                && matches!(&e, client::Failure::Pg(pe) if pe.code() == Some(&postgres::error::SqlState::DIVISION_BY_ZERO))
            {
                // A setting changed since this handle cached it: the server rolled the
                // transaction back (the COMMIT after the failed guard answered ROLLBACK).
                self.shared.settings.clear();
                return Ok(None);
            }
            if i < commit
                && matches!(planned[i].0, Q::InsertNew)
                && matches!(&e, client::Failure::Pg(pe) if pe.code() == Some(&postgres::error::SqlState::UNIQUE_VIOLATION))
            {
                // The server rolled the transaction back: nothing was written.
                return Ok(Some(Committed::Taken));
            }
            if i < commit
                && matches!(planned[i].0, Q::Upsert | Q::InsertNew)
                && self.shared.sealer.is_none()
                && sql::is_encrypted_refusal(&e)
            {
                return Err(self.key_required());
            }
            // A statement the server refused rolled the transaction back; a connection that broke
            // or a flight that timed out may have had its COMMIT run.
            // (A server that ended the session instead answered the statement and never ran the
            // COMMIT after it either.)
            let server_refused = i < commit && matches!(&e, client::Failure::Pg(pe) if pe.as_db_error().is_some());
            let phase = if server_refused { Phase::Statement } else { Phase::Commit };
            return Err(conn.fail(&e, phase, redactor).into());
        }
        Ok(Some(Committed::Done))
    }

    /// A plain handle's write refused because the schema was encrypted meanwhile.
    fn key_required(&self) -> Error {
        Error::KeyRequired(format!(
            "the PostgreSQL store in schema {} was encrypted after this handle opened it without a key: \
             nothing was written; reopen it with the encryption option",
            self.shared.schema
        ))
    }

    /// A create's commit (see [`fused`]) as one statement in autocommit, instead of BEGIN, its
    /// guard, its insert, its summary rows and COMMIT: the same SERIALIZABLE transaction (the
    /// session's default isolation, `pool.rs`), one server cycle instead of five. Its outcomes
    /// are the flight's: a unique violation is Taken, a changed cached setting (2201E from the
    /// fused guard) reruns the body, the encrypted mark refuses, and any statement the server
    /// refused committed nothing; only a flight that broke or timed out leaves it unknown.
    fn commit_fused(&self, conn: &mut Conn, q: Q, planned: Planned) -> Result<Option<Committed>> {
        let redactor = &self.shared.redactor;
        // On a prepare failure BEGIN is still pending: nothing began, nothing to roll back.
        let statement = conn.statement(&self.shared.sql, q, redactor)?;
        let begin = conn.pending_begin.take();
        let params: summary::Params<'_> = planned.into_iter().flat_map(|(_, p)| p).collect();
        self.commit_statements.fetch_add(1, Ordering::Relaxed);
        let Err(e) = conn.client.execute(&statement, &summary::refs(&params)) else {
            return Ok(Some(Committed::Done));
        };
        let code = match &e {
            client::Failure::Pg(pe) => pe.code(),
            client::Failure::TimedOut => None,
        };
        if code == Some(&postgres::error::SqlState::INVALID_ARGUMENT_FOR_LOG) && !matches!(q, Q::Fused) {
            self.shared.settings.clear();
            return Ok(None);
        }
        if code == Some(&postgres::error::SqlState::UNIQUE_VIOLATION) {
            return Ok(Some(Committed::Taken));
        }
        if self.shared.sealer.is_none() && sql::is_encrypted_refusal(&e) {
            return Err(self.key_required());
        }
        let server_refused = matches!(&e, client::Failure::Pg(pe) if pe.as_db_error().is_some());
        if server_refused {
            // No transaction is open (autocommit): `run` sends no ROLLBACK for a BEGIN not sent.
            conn.pending_begin = begin;
        }
        let phase = if server_refused { Phase::Statement } else { Phase::Commit };
        Err(conn.fail(&e, phase, redactor).into())
    }
}

/// The statements a commit plans, with their parameters.
type Planned<'a> = Vec<(Q, summary::Params<'a>)>;

/// The fused statement for `planned` when it is a create's commit: at most one guard, then one
/// chunk of rows that must not exist, then one chunk of summary deltas, then one of change feed
/// entries, and nothing else.
fn fused(planned: &Planned<'_>) -> Option<Q> {
    match planned.iter().map(|(q, _)| *q).collect::<Vec<Q>>().as_slice() {
        [Q::InsertNew, Q::DirsAdd, Q::FeedPut] => Some(Q::Fused),
        [Q::GuardValue, Q::InsertNew, Q::DirsAdd, Q::FeedPut] => Some(Q::FusedGuardValue),
        [Q::GuardMeta, Q::InsertNew, Q::DirsAdd, Q::FeedPut] => Some(Q::FusedGuardMeta),
        _ => None,
    }
}

fn op_key(op: &WriteOp) -> &[u8] {
    match op {
        WriteOp::Put { key, .. } | WriteOp::Delete { key } => key,
    }
}

/// Strings that must never appear in an error: the URL, the password, every host and address.
fn secrets(url: &str, config: &tokio_postgres::Config) -> Vec<String> {
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
    out.extend(config.get_hostaddrs().iter().map(std::string::ToString::to_string));
    out
}

impl PgBackend {
    /// `VACUUM` of the key and summary tables (and their TOAST tables), outside any transaction (VACUUM cannot
    /// run in one): the dead row versions a redaction, a deletion or an overwrite left are
    /// removed from the table's pages, so after the server's next checkpoint the table's files
    /// no longer hold their bytes (measured: text found in the heap and TOAST files after an
    /// UPDATE, gone after VACUUM + CHECKPOINT). A server that refuses (no privilege, or one
    /// without VACUUM such as CockroachDB) leaves it to its own vacuum or GC; what an open
    /// snapshot of another session still sees cannot be removed until that ends.
    fn vacuum(&self) -> Result<()> {
        self.poison.check()?;
        let mut conn = pool::begin(&self.pool, &self.last_error, &self.shared.redactor, "SELECT 1")?;
        let statement = format!("VACUUM {}", self.shared.sql.tables());
        match conn.client.batch_execute(&statement) {
            Ok(()) => Ok(()),
            Err(e) => {
                let err = conn.fail(&e, Phase::Statement, &self.shared.redactor);
                // Permission denied, syntax or feature not supported: the server's own vacuum
                // (or GC) is all there is.
                if matches!(err.sqlstate(), Some("42501" | "42601" | "0A000")) {
                    return Ok(());
                }
                Err(err.into())
            }
        }
    }
}

impl Backend for PgBackend {
    fn reclaim(&self) -> Result<()> {
        self.vacuum()
    }

    fn read(&self) -> Result<Box<dyn ReadView>> {
        self.poison.check()?;
        let conn = self.begin(SNAPSHOT)?;
        let (pool, last_error, shared) = (self.pool.clone(), self.last_error.clone(), self.shared.clone());
        let reopen = move || pool::begin(&pool, &last_error, &shared.redactor, SNAPSHOT);
        Ok(Box::new(ConnView::new(conn, self.shared.clone(), Some(Box::new(reopen)))))
    }

    /// One round trip for a view that reads one row: BEGIN goes with its first query, and the
    /// COMMIT at drop is not waited for.
    fn read_deferred(&self) -> Result<Box<dyn ReadView>> {
        self.poison.check()?;
        let conn = pool::deferred(&self.pool, &self.last_error, SNAPSHOT_DEFERRED)?;
        let (pool, last_error, shared) = (self.pool.clone(), self.last_error.clone(), self.shared.clone());
        let reopen = move || pool::begin(&pool, &last_error, &shared.redactor, SNAPSHOT);
        Ok(Box::new(ConnView::new(conn, self.shared.clone(), Some(Box::new(reopen)))))
    }

    fn transact(&self, body: &mut TxBody<'_>) -> Result<()> {
        self.run(body, false).map(|_| ())
    }

    fn changes(&self, scope: &str, since: &Cursor, limit: usize) -> Result<ChangePage> {
        self.poison.check()?;
        let mut conn = self.begin(SNAPSHOT)?;
        let page = feed::read(&mut conn, &self.shared.sql, &self.shared.redactor, scope, since, limit);
        // The read-only transaction ends without waiting for its answer, as a view's does.
        conn.client.send_without_waiting("COMMIT");
        page
    }

    fn transact_new(&self, body: &mut TxBody<'_>) -> Result<Committed> {
        self.run(body, true)
    }
}

impl PgBackend {
    /// Both `transact`s: `new_only` honours `WriteSet::write_new` rows (see `commit`).
    fn run(&self, body: &mut TxBody<'_>, new_only: bool) -> Result<Committed> {
        self.poison.check()?;
        // The trait's rule: a panic in the body or the commit poisons this handle. Nothing was
        // committed (the transaction dies with its connection), but the caller's state may be.
        let _on_panic = self.poison.on_panic();
        let mut backoff = Backoff::new(Duration::from_millis(1), Duration::from_millis(100));
        let mut writes = WriteSet::default();
        let mut lost = 0;
        for attempt in 1..=self.max_attempts {
            // A rerun after a serialization failure waits for the other reruns of this handle:
            // transactions that read and write the same index pages (creates in one directory:
            // PostgreSQL's predicate locks are per btree page) abort all but the first of any
            // that overlap, so reruns that overlap each other mostly abort again. First runs
            // stay concurrent; only the ones that already collided queue. Scheduling only: what
            // commits is decided by the server as before.
            let held = (attempt > 1).then(|| self.retry_gate.lock().unwrap_or_else(std::sync::PoisonError::into_inner));
            let mut conn = pool::deferred(&self.pool, &self.last_error, "BEGIN ISOLATION LEVEL SERIALIZABLE")?;
            self.attempts.fetch_add(1, Ordering::Relaxed);
            writes.clear();
            conn.assumed.clear();
            conn.in_body = true;
            let decided = body(&ConnView::new(&mut *conn, self.shared.clone(), None), &mut writes);
            conn.in_body = false;
            let result = match decided {
                Ok(()) => self.commit(&mut conn, &writes, new_only),
                Err(e) => Err(e),
            };
            let e = match result {
                Ok(Some(Committed::Done)) => {
                    if !writes.is_empty() {
                        self.commits.fetch_add(1, Ordering::Relaxed);
                    }
                    return Ok(Committed::Done);
                }
                Ok(Some(Committed::Taken)) => return Ok(Committed::Taken),
                // A cached setting had changed: nothing committed, the transaction is over, and
                // the next run reads the settings from the server.
                Ok(None) => continue,
                Err(e) => e,
            };
            // A commit whose outcome is unknown does not poison the handle: everything it
            // knows is on the server (the settings cache is cleared around every commit that
            // writes settings), so later calls answer from the server's state, which is the
            // truth, on whichever node now takes writes (`failover.rs`).
            // A BEGIN never sent began nothing to roll back.
            if !conn.broken && conn.pending_begin.take().is_none() && conn.client.batch_execute("ROLLBACK").is_err() {
                conn.broken = true;
            }
            drop(conn);
            // Not held through the backoff: the next rerun in line goes meanwhile.
            drop(held);
            match PgError::of(&e) {
                Some(pe) if pe.is_retryable() && attempt < self.max_attempts => {
                    self.conflicts.fetch_add(1, Ordering::Relaxed);
                    backoff.sleep();
                }
                // The connection broke before COMMIT was sent (a server restart, a failover): the
                // transaction died with it, so running the body again on a new connection is
                // the same as a serialization retry. Bounded: a server that keeps dropping
                // connections is answered, not chased.
                Some(pe)
                    if pe.kind() == PgErrorKind::ConnectionLost
                        && lost < LOST_RETRIES
                        && attempt < self.max_attempts =>
                {
                    lost += 1;
                }
                _ => return Err(e),
            }
        }
        Err(PgError::new(PgErrorKind::Conflict, "the transaction kept conflicting with concurrent ones").into())
    }
}
