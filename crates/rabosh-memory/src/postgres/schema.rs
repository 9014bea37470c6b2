//! The versioned schema, created or migrated on first open inside one transaction.
//!
//! Two processes may open at once. The lock is a row (`rabosh_schema`, id 1) taken with
//! `SELECT … FOR UPDATE` — not an advisory lock, which CockroachDB does not implement. The row
//! cannot exist before the first open creates it, so two first opens can race on the
//! `CREATE … IF NOT EXISTS` statements themselves (PostgreSQL then fails the loser with a
//! unique violation, CockroachDB with a serialization failure); the whole transaction is then
//! rolled back and rerun, and the rerun finds the schema made and the version current.

use std::time::Duration;

use super::error::{PgError, PgErrorKind, Phase, Redactor};
use super::pool::Conn;
use super::retry::Backoff;

/// The version this build writes and reads.
pub const CURRENT: i32 = 1;

/// Migration `i` takes version `i` to `i + 1`. `{s}` is the quoted schema name.
const MIGRATIONS: [&str; CURRENT as usize] = [
    // Keys, values and metadata are opaque bytes; bytea compares as bytes, the trait's order.
    // Large values are TOASTed out of line, so scans (key, meta only) do not read them.
    "CREATE TABLE {s}.kv (k BYTEA PRIMARY KEY, v BYTEA NOT NULL, m BYTEA NOT NULL)",
];

/// SQLSTATEs of a lost race between first opens.
fn raced(e: &PgError) -> bool {
    e.is_retryable() || matches!(e.sqlstate(), Some("23505") | Some("42P06") | Some("42P07") | Some("42710"))
}

pub fn ensure(conn: &mut Conn, schema: &str, redactor: &Redactor) -> Result<(), PgError> {
    let s = format!("\"{schema}\"");
    // Fast path: an up-to-date schema needs no DDL (and no CREATE privilege).
    let probe = conn.client.query_opt(&format!("SELECT version FROM {s}.rabosh_schema WHERE id = 1"), &[]);
    if let Ok(Some(row)) = &probe
        && row.get::<_, i32>(0) == CURRENT
    {
        return Ok(());
    }
    if let Err(e) = &probe {
        let err = conn.fail(e, Phase::Statement, redactor);
        // Missing schema (3F000) or table (42P01) is the first open; anything else is real.
        if !matches!(err.sqlstate(), Some("3F000") | Some("42P01")) {
            return Err(err);
        }
    }
    let mut backoff = Backoff::new(Duration::from_millis(2), Duration::from_millis(200));
    for _ in 0..32 {
        match migrate(conn, &s, redactor) {
            Ok(()) => return Ok(()),
            Err(e) => {
                let _ = conn.client.batch_execute("ROLLBACK");
                if !raced(&e) || conn.broken {
                    return Err(e);
                }
                backoff.sleep();
            }
        }
    }
    Err(PgError::new(PgErrorKind::Conflict, "the schema migration kept conflicting with another opener"))
}

fn migrate(conn: &mut Conn, s: &str, redactor: &Redactor) -> Result<(), PgError> {
    let exec = |conn: &mut Conn, sql: &str| {
        conn.client.batch_execute(sql).map_err(|e| conn.fail(&e, Phase::Statement, redactor))
    };
    exec(conn, "BEGIN")?;
    exec(conn, &format!("CREATE SCHEMA IF NOT EXISTS {s}"))?;
    exec(conn, &format!("CREATE TABLE IF NOT EXISTS {s}.rabosh_schema (id INT4 PRIMARY KEY, version INT4 NOT NULL)"))?;
    exec(
        conn,
        &format!(
            "CREATE TABLE IF NOT EXISTS {s}.rabosh_migrations \
             (version INT4 PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())"
        ),
    )?;
    exec(conn, &format!("INSERT INTO {s}.rabosh_schema (id, version) VALUES (1, 0) ON CONFLICT (id) DO NOTHING"))?;
    let row = conn
        .client
        .query_one(&format!("SELECT version FROM {s}.rabosh_schema WHERE id = 1 FOR UPDATE"), &[])
        .map_err(|e| conn.fail(&e, Phase::Statement, redactor))?;
    let version: i32 = row.get(0);
    if version > CURRENT {
        return Err(PgError::new(
            PgErrorKind::SchemaTooNew,
            format!("the database holds schema version {version}; this build reads up to {CURRENT}"),
        ));
    }
    for v in version..CURRENT {
        exec(conn, &MIGRATIONS[v as usize].replace("{s}", s))?;
        exec(conn, &format!("INSERT INTO {s}.rabosh_migrations (version) VALUES ({})", v + 1))?;
    }
    exec(conn, &format!("UPDATE {s}.rabosh_schema SET version = {CURRENT} WHERE id = 1"))?;
    conn.client.batch_execute("COMMIT").map_err(|e| conn.fail(&e, Phase::Commit, redactor))
}
