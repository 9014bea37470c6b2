//! Pooled connections: r2d2 with a manager that knows which connections broke and remembers the
//! last typed connect failure (r2d2 itself reports a pool timeout only as text).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use postgres::Statement;
use postgres::types::Type;
use tokio_postgres_rustls::MakeRustlsConnect;

use super::client::{Client, Failure};
use super::error::{PgError, PgErrorKind, Phase, Redactor, classify, timed_out};
use super::failover::{Guard, Hosts};
use super::settings_cache::Assumed;
use super::sql::{Q, Sql};

/// One server connection and its prepared statements.
pub struct Conn {
    pub client: Client,
    statements: Vec<Option<Statement>>,
    /// Set when a statement failed in a way that leaves the session unusable (connection lost,
    /// or a transaction that could not be ended): r2d2 then discards it instead of reusing it.
    pub broken: bool,
    /// A transaction body is running on it; still set if the body panicked, so the pool drops
    /// the connection instead of handing its open transaction to the next caller.
    pub in_body: bool,
    /// The BEGIN of a transaction not sent yet: it goes in one flight with the transaction's
    /// first statement (`ConnView`, `PgBackend::commit`), saving a round trip.
    pub pending_begin: Option<&'static str>,
    /// Settings the running body was answered from the handle's cache: checked in its commit
    /// flight (`settings_cache.rs`).
    pub assumed: Vec<Assumed>,
}

impl Conn {
    /// The prepared statement for `q`, prepared once per connection (saves a round trip per use).
    pub fn statement(&mut self, sql: &Sql, q: Q, redactor: &Redactor) -> Result<Statement, PgError> {
        let i = q as usize;
        if let Some(s) = &self.statements[i] {
            return Ok(s.clone());
        }
        let s = self.client.prepare(sql.text(q)).map_err(|e| self.fail(&e, Phase::Statement, redactor))?;
        let expected = q.result_types();
        let got: Vec<&Type> = s.columns().iter().map(postgres::Column::type_).collect();
        if got.len() != expected.len() || got.iter().zip(expected).any(|(g, e)| *g != e) {
            let (name, ty) = s
                .columns()
                .iter()
                .zip(expected)
                .find(|(c, e)| c.type_() != *e)
                .map_or(("?", "?".to_string()), |(c, _)| (c.name(), c.type_().name().to_string()));
            return Err(PgError::tampered(format!(
                "a table of the PostgreSQL store was changed outside rabosh: column {name} has type {ty}"
            )));
        }
        self.statements[i] = Some(s.clone());
        Ok(s)
    }

    /// Classifies `e` and marks the connection broken when it is.
    pub fn fail(&mut self, e: &Failure, phase: Phase, redactor: &Redactor) -> PgError {
        let err = match e {
            Failure::Pg(e) => classify(e, phase, redactor),
            Failure::TimedOut => {
                // The session is somewhere in the middle of a message exchange: never reuse it.
                self.broken = true;
                timed_out(phase)
            }
        };
        if err.is_tampered() {
            // Prepared against the old column types: prepare again on the next use.
            self.statements.fill(None);
        }
        if err.breaks_connection() || self.client.is_closed() {
            self.broken = true;
        }
        err
    }
}

impl Drop for Conn {
    fn drop(&mut self) {
        self.client.close(!self.broken);
    }
}

pub struct Manager {
    /// The URL's hosts (`failover.rs`).
    pub hosts: Hosts,
    /// Refuses a server behind the ones this handle used (`failover.rs`).
    pub guard: Guard,
    pub tls: MakeRustlsConnect,
    pub redactor: Redactor,
    pub statement_timeout: Duration,
    /// Bound on connecting: TCP, TLS, authentication and session setup together.
    pub connect_timeout: Duration,
    /// Client-side bound on every call, COMMIT included.
    pub client_timeout: Duration,
    pub last_error: Arc<Mutex<Option<PgError>>>,
    /// Round trips made by every connection of the pool (tests count them per command).
    pub round_trips: Arc<std::sync::atomic::AtomicU64>,
}

impl Manager {
    /// Connects on the calling thread to the first of the URL's hosts that accepts (the one
    /// that accepted last first) and sets the session up; the last host's failure when none
    /// does.
    pub fn open(&self) -> Result<Conn, PgError> {
        let mut failure = None;
        for (i, config) in self.hosts.in_order() {
            match self.open_host(config) {
                Ok(conn) => {
                    self.hosts.accepted(i);
                    return Ok(conn);
                }
                Err(e) => failure = Some(e),
            }
        }
        Err(failure.expect("a URL names at least one host"))
    }

    /// Connects on the calling thread and, when the server is not refused (`failover.rs`),
    /// sets the session up.
    fn open_host(&self, config: &tokio_postgres::Config) -> Result<Conn, PgError> {
        let connect_error = |e: Failure| match e {
            Failure::Pg(e) => classify(&e, Phase::Connect, &self.redactor),
            Failure::TimedOut => timed_out(Phase::Connect),
        };
        let client = Client::connect(
            config,
            self.tls.clone(),
            self.connect_timeout,
            self.client_timeout,
            self.round_trips.clone(),
        )
        .map_err(connect_error)?;
        let mut conn = Conn {
            client,
            statements: vec![None; Q::COUNT],
            broken: false,
            in_body: false,
            pending_begin: None,
            assumed: Vec::new(),
        };
        // A statement bound keeps a stuck query from holding a pool slot and a thread forever.
        let ms = self.statement_timeout.as_millis();
        // Serializable by default too: a create's commit is one statement in autocommit
        // (`PgBackend::commit_fused`), and so the same SERIALIZABLE transaction as the
        // explicit BEGINs. Every other transaction names its isolation.
        let timeout = format!("SET statement_timeout = '{ms}ms'; SET default_transaction_isolation = 'serializable'");
        // Under SERIALIZABLE a sequential scan takes a predicate lock on the whole table, which
        // every insert then conflicts with; PostgreSQL's manual advises steering serializable
        // work to index scans. Every statement here is a key lookup or a key range, and in a
        // small analysed table the planner would otherwise scan it for the settings read of
        // every transaction (`Q::SettingMeta`), so concurrent creates would abort each other
        // (issue 24). Sent with the timeout (one round trip); a server without the setting
        // (42704: CockroachDB plans by keys anyway) refuses the pair, and gets the timeout alone.
        let set = match conn.client.batch_execute(&format!("{timeout}; SET enable_seqscan = off")) {
            Err(Failure::Pg(pe)) if pe.code() == Some(&postgres::error::SqlState::UNDEFINED_OBJECT) => {
                conn.client.batch_execute(&timeout)
            }
            other => other,
        };
        set.map_err(|e| {
            conn.broken = true;
            connect_error(e)
        })?;
        self.guard.check(&mut conn.client).map_err(|refused| {
            conn.broken = true;
            refused.unwrap_or_else(connect_error)
        })?;
        Ok(conn)
    }

    /// [`Manager::open`], tried again every [`RECONNECT_EVERY`] for up to `connect_timeout`
    /// while no host accepts for a reason that can pass (a server restarting or down, a standby
    /// not promoted yet, a stale node refused): r2d2 itself retries a failed connect only after
    /// a doubling wait (up to half the timeout), which after a failover would leave callers
    /// waiting seconds after the new primary took writes.
    fn open_patiently(&self) -> Result<Conn, PgError> {
        let deadline = Instant::now() + self.connect_timeout;
        loop {
            let e = match self.open() {
                Ok(conn) => return Ok(conn),
                Err(e) => e,
            };
            let passing =
                matches!(e.kind(), PgErrorKind::Unreachable | PgErrorKind::Timeout | PgErrorKind::ConnectionLost);
            if !passing || Instant::now() + RECONNECT_EVERY >= deadline {
                return Err(e);
            }
            // Callers that give up meanwhile are told why (`checkout_error`).
            *self.last_error.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(e);
            std::thread::sleep(RECONNECT_EVERY);
        }
    }
}

/// How often a pool with no server to connect to tries again.
const RECONNECT_EVERY: Duration = Duration::from_millis(100);

impl r2d2::ManageConnection for Manager {
    type Connection = Conn;
    type Error = PgError;

    fn connect(&self) -> Result<Conn, PgError> {
        let r = self.open_patiently();
        if let Err(e) = &r {
            *self.last_error.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(e.clone());
        }
        r
    }

    fn is_valid(&self, conn: &mut Conn) -> Result<(), PgError> {
        conn.client.simple_query("").map(|_| ()).map_err(|e| conn.fail(&e, Phase::Statement, &self.redactor))
    }

    fn has_broken(&self, conn: &mut Conn) -> bool {
        conn.broken || conn.in_body || conn.pending_begin.is_some() || conn.client.is_closed()
    }
}

/// A pooled connection as it is.
pub fn checkout(
    pool: &r2d2::Pool<Manager>,
    last_error: &Mutex<Option<PgError>>,
) -> Result<r2d2::PooledConnection<Manager>, PgError> {
    pool.get().map_err(|_| checkout_error(last_error, pool.connection_timeout()))
}

/// A pooled connection for a transaction whose `begin` is sent with its first statement
/// (`Conn::pending_begin`). A connection the server already ended (seen at checkout without a
/// round trip) is discarded and another one tried; one that went stale unseen fails that first
/// flight, before anything could commit, and the transaction is rerun (`PgBackend::transact`).
pub fn deferred(
    pool: &r2d2::Pool<Manager>,
    last_error: &Mutex<Option<PgError>>,
    begin: &'static str,
) -> Result<r2d2::PooledConnection<Manager>, PgError> {
    let mut tries = pool.max_size() + 1;
    loop {
        let mut conn = pool.get().map_err(|_| checkout_error(last_error, pool.connection_timeout()))?;
        tries -= 1;
        if conn.client.is_closed() && tries > 0 {
            conn.broken = true;
            continue;
        }
        conn.pending_begin = Some(begin);
        return Ok(conn);
    }
}

/// A pooled connection with `begin` run on it. A connection the server already ended (seen at
/// checkout without a round trip) or that fails at BEGIN went stale: nothing was sent that
/// could commit, so it is discarded and another one tried, up to one more than the pool holds
/// (a new connection that fails at BEGIN means the server is failing, not the pool stale).
pub fn begin(
    pool: &r2d2::Pool<Manager>,
    last_error: &Mutex<Option<PgError>>,
    redactor: &Redactor,
    begin: &str,
) -> Result<r2d2::PooledConnection<Manager>, PgError> {
    let mut tries = pool.max_size() + 1;
    loop {
        let mut conn = pool.get().map_err(|_| checkout_error(last_error, pool.connection_timeout()))?;
        tries -= 1;
        if conn.client.is_closed() {
            conn.broken = true;
            if tries > 0 {
                continue;
            }
        }
        match conn.client.batch_execute(begin) {
            Ok(()) => return Ok(conn),
            Err(e) => {
                let err = conn.fail(&e, Phase::Statement, redactor);
                if !conn.broken || err.kind() != PgErrorKind::ConnectionLost || tries == 0 {
                    return Err(err);
                }
            }
        }
    }
}

/// A pool timeout, explained by the last connect failure when there was one.
fn checkout_error(last: &Mutex<Option<PgError>>, waited: Duration) -> PgError {
    match last.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take() {
        Some(e) => e,
        None => PgError::new(
            PgErrorKind::Timeout,
            format!("no pooled connection became free within {} ms", waited.as_millis()),
        ),
    }
}
