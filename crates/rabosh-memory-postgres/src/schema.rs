//! The versioned schema, created or migrated on first open inside one transaction.
//!
//! Two processes may open at once. The lock is a row (`rabosh_schema`, id 1) taken with
//! `SELECT … FOR UPDATE` — not an advisory lock, which CockroachDB does not implement. The row
//! cannot exist before the first open creates it, so two first opens can race on the
//! `CREATE … IF NOT EXISTS` statements themselves (PostgreSQL then fails the loser with a
//! unique violation, CockroachDB with a serialization failure); the whole transaction is then
//! rolled back and rerun, and the rerun finds the schema made and the version current.

use std::time::Duration;

use super::columns;
use super::error::{PgError, PgErrorKind, Phase, Redactor};
use super::pool::Conn;
use super::retry::Backoff;
use super::sql::{self, Sql};
use super::summary::{self, Deltas};
use rabosh_memory::backend_kit::{Error, Result, memory_size};

/// The version this build writes and reads.
pub const CURRENT: i32 = 4;

/// Migration `i` takes version `i` to `i + 1`: its DDL (`{s}` is the quoted schema name), then,
/// when set, a step that fills what the DDL made from the data already there.
const MIGRATIONS: [(&str, Option<Fill>); CURRENT as usize] = [
    // Keys, values and metadata are opaque bytes; bytea compares as bytes, the trait's order.
    // Large values are TOASTed out of line, so scans (key, meta only) do not read them.
    ("CREATE TABLE {s}.kv (k BYTEA PRIMARY KEY, v BYTEA NOT NULL, m BYTEA NOT NULL)", None),
    // The directory summary (`summary.rs`); a store written by version 1 is summarised in place.
    (
        "CREATE TABLE {s}.dirs (d BYTEA NOT NULL, r BYTEA NOT NULL, f BOOL NOT NULL, s INT2 NOT NULL, \
         n INT8 NOT NULL, b INT8 NOT NULL, vn INT8 NOT NULL, vb INT8 NOT NULL, PRIMARY KEY (d, r, f, s))",
        Some(summarise_existing),
    ),
    // The settings' own index (`Q::SettingMeta`, issue 24): existing `c:` rows are indexed by
    // the DDL itself. Builds before version 3 refuse this schema (`SchemaTooNew`), though one
    // writing settings into kv would still be exact (the same table): the bump is only so the
    // index is made once, by the migration lock.
    ("CREATE INDEX kv_settings ON {s}.kv (k) WHERE {settings}", None),
    // The change feed (`feed.rs`): one row per memory key, its latest change, at the id of the
    // transaction that made it; the horizon below which changes may be missing (memories
    // written before this version: all of them, when there are any).
    (
        "CREATE TABLE {s}.feed (k BYTEA PRIMARY KEY, s BYTEA NOT NULL, x INT8 NOT NULL, t INT2 NOT NULL); \
         CREATE INDEX feed_order ON {s}.feed (s, x, k); \
         CREATE TABLE {s}.feed_horizon (id INT4 PRIMARY KEY, x INT8 NOT NULL); \
         INSERT INTO {s}.feed_horizon (id, x) SELECT 1, CASE WHEN EXISTS \
         (SELECT 1 FROM {s}.kv WHERE k >= 'm:'::BYTEA AND k < 'm;'::BYTEA) \
         THEN pg_current_xact_id()::TEXT::INT8 + 1 ELSE 0 END",
        None,
    ),
];

type Fill = fn(&mut Conn, &str, &Redactor) -> Result<()>;

/// Rows per page when reading the existing memories for the summary.
const FILL_PAGE: i64 = 4096;

/// Builds the summary table from every memory key already in `kv`, inside the migration's
/// transaction (no commit can land in between: writers of this version wait for the schema).
fn summarise_existing(conn: &mut Conn, schema: &str, redactor: &Redactor) -> Result<()> {
    let page = format!("SELECT k, m FROM \"{schema}\".kv WHERE k >= $1 AND k < 'm;'::BYTEA ORDER BY k LIMIT $2");
    let mut deltas = Deltas::default();
    let mut from = b"m:".to_vec();
    loop {
        let rows =
            conn.client.query(&page, &[&from, &FILL_PAGE]).map_err(|e| conn.fail(&e, Phase::Statement, redactor))?;
        let mut last: &[u8] = &[];
        for row in &rows {
            let key: &[u8] = columns::get(row, 0, "kv", &|| format!("a key after {}", columns::key_name(&from)))?;
            let meta: &[u8] = columns::get(row, 1, "kv", &|| columns::key_name(key))?;
            deltas.memory(key, memory_size(key, meta)?, 1);
            last = key;
        }
        if i64::try_from(rows.len()) != Ok(FILL_PAGE) {
            break;
        }
        from = last.to_vec();
        from.push(0);
    }
    summary::apply(conn, &Sql::new(schema, false), redactor, deltas)
}

fn version(row: &postgres::Row) -> Result<i32> {
    columns::get(row, 0, "rabosh_schema", &|| "id 1".to_string())
}

/// SQLSTATEs of a lost race between first opens.
fn raced(e: &PgError) -> bool {
    e.is_retryable() || matches!(e.sqlstate(), Some("23505" | "42P06" | "42P07" | "42710"))
}

pub fn ensure(conn: &mut Conn, schema: &str, create: bool, redactor: &Redactor) -> Result<()> {
    let s = format!("\"{schema}\"");
    // Fast path: an up-to-date schema needs no DDL (and no CREATE privilege).
    let probe = conn.client.query_opt(&format!("SELECT version FROM {s}.rabosh_schema WHERE id = 1"), &[]);
    if let Ok(Some(row)) = &probe
        && version(row)? == CURRENT
    {
        return columns::check(conn, schema, redactor);
    }
    if let Err(e) = &probe {
        let err = conn.fail(e, Phase::Statement, redactor);
        // Missing schema (3F000) or table (42P01) is the first open; anything else is real.
        if !matches!(err.sqlstate(), Some("3F000" | "42P01")) {
            return Err(err.into());
        }
        if !create {
            return Err(Error::NotAStore(format!("the PostgreSQL schema {schema} holds no rabosh store")));
        }
    }
    let mut backoff = Backoff::new(Duration::from_millis(2), Duration::from_millis(200));
    for _ in 0..32 {
        match migrate(conn, schema, redactor) {
            Ok(()) => return columns::check(conn, schema, redactor),
            Err(e) => {
                let _ = conn.client.batch_execute("ROLLBACK");
                if !PgError::of(&e).is_some_and(raced) || conn.broken {
                    return Err(e);
                }
                backoff.sleep();
            }
        }
    }
    Err(PgError::new(PgErrorKind::Conflict, "the schema migration kept conflicting with another opener").into())
}

fn migrate(conn: &mut Conn, schema: &str, redactor: &Redactor) -> Result<()> {
    let s = &format!("\"{schema}\"");
    let exec = |conn: &mut Conn, sql: &str| {
        conn.client.batch_execute(sql).map_err(|e| conn.fail(&e, Phase::Statement, redactor))
    };
    // Named: the session's default is SERIALIZABLE (`pool.rs`); the migration lock is its row.
    exec(conn, "BEGIN ISOLATION LEVEL READ COMMITTED")?;
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
    let version = version(&row)?;
    if version > CURRENT {
        return Err(PgError::new(
            PgErrorKind::SchemaTooNew,
            format!("the database holds schema version {version}; this build reads up to {CURRENT}"),
        )
        .into());
    }
    for v in version..CURRENT {
        let (ddl, fill) = MIGRATIONS[usize::try_from(v).expect("a version read as valid")];
        exec(conn, &ddl.replace("{s}", s).replace("{settings}", &sql::settings_range()))?;
        if let Some(fill) = fill {
            fill(conn, schema, redactor)?;
        }
        exec(conn, &format!("INSERT INTO {s}.rabosh_migrations (version) VALUES ({})", v + 1))?;
    }
    exec(conn, &format!("UPDATE {s}.rabosh_schema SET version = {CURRENT} WHERE id = 1"))?;
    Ok(conn.client.batch_execute("COMMIT").map_err(|e| conn.fail(&e, Phase::Commit, redactor))?)
}
