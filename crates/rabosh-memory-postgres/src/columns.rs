//! Reading the store's tables as they were made. Every column read goes through [`get`]: a NULL
//! or a column of another type can only come from a table changed by hand (or by a foreign
//! tool), and is answered as [`Error::Corruption`] naming the table, the row and the column,
//! never as a panic (which would poison the handle and print a backtrace). [`check`] compares the
//! tables' column types with the ones this build made, once at open.

use postgres::Row;
use postgres::types::{FromSql, WasNull};

use super::error::{Phase, Redactor};
use super::pool::Conn;
use rabosh_memory::backend_kit::{Error, Result};

/// Column `i` of `row` (from `table`) as `T`; `row_name` says which row, for the error.
pub fn get<'a, T: FromSql<'a>>(row: &'a Row, i: usize, table: &str, row_name: &dyn Fn() -> String) -> Result<T> {
    row.try_get(i).map_err(|e| {
        let column = row.columns().get(i);
        let name = column.map_or("?", |c| c.name());
        let what = if std::error::Error::source(&e).is_some_and(|s| s.downcast_ref::<WasNull>().is_some()) {
            "is NULL".to_string()
        } else {
            match column {
                Some(c) => format!("has type {}", c.type_().name()),
                None => "is missing".to_string(),
            }
        };
        Error::Corruption(format!(
            "the PostgreSQL table {table} was changed outside rabosh: column {name} {what} in the row of {}",
            row_name()
        ))
    })
}

/// A key as errors name it: its bytes as text (memory keys are `m:{scope}:{path}`).
pub fn key_name(key: &[u8]) -> String {
    format!("key {}", String::from_utf8_lossy(key))
}

/// The tables' columns as this build creates them: `(table, column, information_schema type)`.
const EXPECTED: [(&str, &str, &str); 17] = [
    ("kv", "k", "bytea"),
    ("kv", "v", "bytea"),
    ("kv", "m", "bytea"),
    ("dirs", "d", "bytea"),
    ("dirs", "r", "bytea"),
    ("dirs", "f", "boolean"),
    ("dirs", "s", "smallint"),
    ("dirs", "n", "bigint"),
    ("dirs", "b", "bigint"),
    ("dirs", "vn", "bigint"),
    ("dirs", "vb", "bigint"),
    ("feed", "k", "bytea"),
    ("feed", "s", "bytea"),
    ("feed", "x", "bigint"),
    ("feed", "t", "smallint"),
    ("feed_horizon", "id", "integer"),
    ("feed_horizon", "x", "bigint"),
];

/// Refuses, as Corruption, tables whose columns are missing or of another type than the ones
/// made by the migrations: no row of them could be read. One query, at open.
pub fn check(conn: &mut Conn, schema: &str, redactor: &Redactor) -> Result<()> {
    let rows = conn
        .client
        .query(
            "SELECT table_name::TEXT, column_name::TEXT, data_type::TEXT FROM information_schema.columns \
             WHERE table_schema = $1 AND table_name IN ('kv', 'dirs', 'feed', 'feed_horizon')",
            &[&schema],
        )
        .map_err(|e| conn.fail(&e, Phase::Statement, redactor))?;
    let mut found = Vec::with_capacity(rows.len());
    for row in &rows {
        let name = || "information_schema.columns".to_string();
        let table: String = get(row, 0, "information_schema.columns", &name)?;
        let column: String = get(row, 1, "information_schema.columns", &name)?;
        let ty: String = get(row, 2, "information_schema.columns", &name)?;
        found.push((table, column, ty));
    }
    for (table, column, ty) in EXPECTED {
        match found.iter().find(|(t, c, _)| t == table && c == column) {
            Some((_, _, got)) if got == ty => {}
            Some((_, _, got)) => {
                return Err(Error::Corruption(format!(
                    "the PostgreSQL table {table} was changed outside rabosh: column {column} has type {got}, expected {ty}"
                )));
            }
            None => {
                return Err(Error::Corruption(format!(
                    "the PostgreSQL table {table} was changed outside rabosh: column {column} is missing"
                )));
            }
        }
    }
    Ok(())
}
