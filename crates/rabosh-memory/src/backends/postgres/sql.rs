//! Every statement the backend runs on the key table, written once per schema. Kept to SQL that
//! CockroachDB and YugabyteDB also accept: bytea keys compared as bytes, `ON CONFLICT`,
//! multi-array `unnest`, `= ANY`, row-value `IN`, no advisory locks, no server-side functions or
//! triggers.

use postgres::types::Type;

/// Rows per page of a prefix scan (keyset pagination: portable, and bounded client memory).
pub const SCAN_PAGE: i64 = 512;
/// Bounds on one write statement, so a large write set is sent as several statements of one
/// transaction rather than one unbounded message.
pub const WRITE_CHUNK_ROWS: usize = 500;
pub const WRITE_CHUNK_BYTES: usize = 8 << 20;

#[derive(Debug, Clone, Copy)]
pub enum Q {
    Get,
    Meta,
    /// `k` in `[$1, $2)`, first `$3` rows.
    ScanBounded,
    /// `k >= $1`, first `$2` rows (the prefix has no successor: empty or all 0xFF).
    ScanOpen,
    Upsert,
    /// Inserts rows that must not exist: a unique violation (23505) says one did.
    InsertNew,
    Delete,
    /// The summary rows of directory `$1`.
    DirRows,
    /// Adds deltas to summary rows, creating missing ones.
    DirsAdd,
    /// Deletes the given summary rows that count nothing any more.
    DirsPrune,
}

impl Q {
    pub const COUNT: usize = 10;

    /// The types of the result columns, as the migrations made them: checked at each prepare,
    /// so a table changed by hand is refused before a row is read or written.
    pub fn result_types(self) -> &'static [Type] {
        match self {
            Q::Get | Q::Meta => &[Type::BYTEA],
            Q::ScanBounded | Q::ScanOpen => &[Type::BYTEA, Type::BYTEA],
            Q::DirRows => &[Type::BYTEA, Type::BOOL, Type::INT8, Type::INT8, Type::INT8, Type::INT8],
            Q::Upsert | Q::InsertNew | Q::Delete | Q::DirsAdd | Q::DirsPrune => &[],
        }
    }
}

pub struct Sql {
    texts: [String; Q::COUNT],
    tables: String,
}

/// The row of `rabosh_schema` that marks a schema encrypted (`seal.rs`): written with the key
/// row, in the same transaction. `rabosh_schema` exists in every schema of every version (id 1
/// is the schema version, which older builds read alone), so a plain handle's upsert can test
/// for this row without a migration.
pub const ENCRYPTED_MARK_ID: i32 = 2;

impl Sql {
    /// `schema` was validated as a plain lower-case identifier, so quoting it is enough.
    /// `plain`: the statements of a handle without a key, whose upsert fails once the
    /// schema is marked encrypted (see `ENCRYPTED_MARK_ID`, `PgBackend::commit`).
    pub fn new(schema: &str, plain: bool) -> Sql {
        let t = format!("\"{schema}\".kv");
        let dirs = format!("\"{schema}\".dirs");
        // Under SERIALIZABLE this read of the mark, with the first encrypted open's read of `kv`,
        // makes the two a cycle when they overlap: one of them fails (and is retried), so a
        // schema never ends with a key and a plain row.
        // The statement fails (division by zero, `is_encrypted_refusal`) rather than writing
        // nothing: it is sent in one flight with the COMMIT, which its failure turns into a
        // rollback, so nothing else of the transaction is written either.
        let unless_encrypted = match plain {
            true => format!(
                " WHERE (SELECT 1 / (1 - count(*)) FROM \"{schema}\".rabosh_schema WHERE id = {ENCRYPTED_MARK_ID}) = 1"
            ),
            false => String::new(),
        };
        Sql {
            texts: [
                format!("SELECT v FROM {t} WHERE k = $1"),
                format!("SELECT m FROM {t} WHERE k = $1"),
                format!("SELECT k, m FROM {t} WHERE k >= $1 AND k < $2 ORDER BY k LIMIT $3"),
                format!("SELECT k, m FROM {t} WHERE k >= $1 ORDER BY k LIMIT $2"),
                format!(
                    "INSERT INTO {t} (k, v, m) SELECT * FROM unnest($1::BYTEA[], $2::BYTEA[], $3::BYTEA[]){unless_encrypted} \
                     ON CONFLICT (k) DO UPDATE SET v = excluded.v, m = excluded.m"
                ),
                format!(
                    "INSERT INTO {t} (k, v, m) SELECT * FROM unnest($1::BYTEA[], $2::BYTEA[], $3::BYTEA[]){unless_encrypted}"
                ),
                format!("DELETE FROM {t} WHERE k = ANY($1::BYTEA[])"),
                format!("SELECT r, f, n, b, vn, vb FROM {dirs} WHERE d = $1"),
                format!(
                    "INSERT INTO {dirs} AS t (d, r, f, s, n, b, vn, vb) SELECT * FROM unnest($1::BYTEA[], \
                     $2::BYTEA[], $3::BOOL[], $4::INT2[], $5::INT8[], $6::INT8[], $7::INT8[], $8::INT8[]) \
                     ON CONFLICT (d, r, f, s) DO UPDATE \
                     SET n = t.n + excluded.n, b = t.b + excluded.b, vn = t.vn + excluded.vn, vb = t.vb + excluded.vb"
                ),
                format!(
                    "DELETE FROM {dirs} WHERE n = 0 AND (d, r, f, s) IN \
                     (SELECT * FROM unnest($1::BYTEA[], $2::BYTEA[], $3::BOOL[], $4::INT2[]))"
                ),
            ],
            tables: format!("{t}, {dirs}"),
        }
    }

    /// Both tables, schema-qualified and quoted, comma-separated (for VACUUM).
    pub fn tables(&self) -> &str {
        &self.tables
    }

    pub fn text(&self, q: Q) -> &str {
        &self.texts[q as usize]
    }
}

/// Whether a plain handle's upsert failed because the schema is marked encrypted (the guard in
/// `Sql::new` divides by zero then).
pub fn is_encrypted_refusal(e: &super::client::Failure) -> bool {
    matches!(e, super::client::Failure::Pg(pe) if pe.code() == Some(&postgres::error::SqlState::DIVISION_BY_ZERO))
}

/// The smallest key greater than every key starting with `prefix`, if any.
pub fn prefix_end(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xFF {
            end.push(last + 1);
            return Some(end);
        }
    }
    None
}

/// Whether `name` may name the schema: a plain identifier that needs no escaping.
pub fn valid_schema(name: &str) -> bool {
    let b = name.as_bytes();
    !b.is_empty()
        && b.len() <= 63
        && (b[0].is_ascii_lowercase() || b[0] == b'_')
        && b.iter().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'_')
        && !name.starts_with("pg_")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_end_is_the_byte_order_successor() {
        assert_eq!(prefix_end(b"ab"), Some(b"ac".to_vec()));
        assert_eq!(prefix_end(&[1, 0xFF]), Some(vec![2]));
        assert_eq!(prefix_end(&[0xFF, 0xFF]), None);
        assert_eq!(prefix_end(b""), None);
    }

    #[test]
    fn schema_names_need_no_quoting() {
        assert!(valid_schema("rabosh"));
        assert!(valid_schema("_t_1"));
        for bad in ["", "Rabosh", "a-b", "a\"b", "1a", "pg_x", &"a".repeat(64)] {
            assert!(!valid_schema(bad), "{bad}");
        }
    }
}
