//! Every statement the backend runs on the key table, written once per schema. Kept to SQL that
//! CockroachDB and YugabyteDB also accept: bytea keys compared as bytes, `ON CONFLICT`,
//! multi-array `unnest`, `= ANY`, row-value `IN`, the built-in `encode`, `translate`, `strpos`
//! and `chr` (a path search's filter), no advisory locks, no server-side functions or triggers.

use postgres::types::Type;

use rabosh_memory::backend_kit::SETTINGS_PREFIX;

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
    /// `Get` / `Meta` of a key under [`SETTINGS_PREFIX`]: through the settings' own index
    /// (`kv_settings`, schema version 3). Under SERIALIZABLE an index read locks the index page
    /// it reads; in the primary key, the page of the `c:` keys is also where the rows of new
    /// memories sorting first go (and in a small store the only page), so every create by a
    /// store without history (which reads `c:history`) conflicted with every other create there.
    /// The partial index holds only settings, which commands rarely write: the read locks its
    /// page, and the row it finds. It stays exact: the same table, the same SERIALIZABLE
    /// transaction, a write of a setting still conflicts with every reader of it.
    SettingGet,
    SettingMeta,
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
    /// `Meta` and `Get` in one query, for a view told the value will be read
    /// (`ReadView::prefetch_value`).
    MetaValue,
    /// Fails (division by zero) unless the settings row `$1`'s value / metadata is `$2` (NULL: no
    /// row): a setting a body was answered from the cache, checked in its commit flight
    /// (`settings_cache.rs`).
    GuardValue,
    GuardMeta,
    /// A create's whole commit as ONE statement (`PgBackend::commit_fused`): the rows that must
    /// not exist (`$1..$3`, as `InsertNew`) and the summary deltas (`$4..$11`, as `DirsAdd`),
    /// sent alone in autocommit. Each statement of a pipelined flight is its own server cycle
    /// (its Sync, its `ReadyForQuery` and flush), and for a create those cycles, BEGIN and COMMIT
    /// included, cost the server more than the writes (issue 24: 5 statements, ~0.6 ms of server
    /// CPU per create against ~0.3 ms fused). The session's default isolation is SERIALIZABLE
    /// (`pool.rs`), so the one statement is the same SERIALIZABLE transaction.
    Fused,
    /// [`Q::Fused`] after the guard of one cached setting (`$1`, `$2` as `GuardValue` /
    /// `GuardMeta`, the rest moved up by two). A changed setting fails it with 2201E (ln of
    /// zero), told apart from the encrypted mark's division by zero in the same statement.
    FusedGuardValue,
    FusedGuardMeta,
    /// The change feed's entries of a commit (`feed.rs`): `$1` memory keys, `$2` their scopes'
    /// key prefixes, `$3` kinds, at this transaction's id (one row per key, replaced).
    FeedPut,
    /// Removes the entries of keys `$1` and raises the horizon past this transaction.
    FeedForget,
    /// The bound of this snapshot (below it no transaction is in flight) and the horizon.
    FeedBound,
    /// Entries of scope prefix `$1` after (`$2`, `$3`) and below `$4`, first `$5`, in order.
    FeedPage,
    /// [`Q::ScanBounded`] less the keys that cannot contain the text `$3` once lower-cased
    /// (`$1`, `$2`, `$4` as there): see [`may_contain`].
    ScanBoundedContaining,
    /// [`Q::ScanOpen`] less the same keys (`$2` the text, `$3` the limit).
    ScanOpenContaining,
}

impl Q {
    pub const COUNT: usize = 24;

    /// The types of the result columns, as the migrations made them: checked at each prepare,
    /// so a table changed by hand is refused before a row is read or written.
    pub fn result_types(self) -> &'static [Type] {
        match self {
            Q::Get | Q::Meta | Q::SettingGet | Q::SettingMeta => &[Type::BYTEA],
            Q::ScanBounded | Q::ScanOpen | Q::ScanBoundedContaining | Q::ScanOpenContaining | Q::MetaValue => {
                &[Type::BYTEA, Type::BYTEA]
            }
            Q::GuardValue | Q::GuardMeta => &[Type::INT4],
            Q::DirRows => &[Type::BYTEA, Type::BOOL, Type::INT8, Type::INT8, Type::INT8, Type::INT8],
            Q::Upsert
            | Q::InsertNew
            | Q::Delete
            | Q::DirsAdd
            | Q::DirsPrune
            | Q::Fused
            | Q::FusedGuardValue
            | Q::FusedGuardMeta
            | Q::FeedPut
            | Q::FeedForget => &[],
            Q::FeedBound => &[Type::INT8, Type::INT8],
            Q::FeedPage => &[Type::BYTEA, Type::INT8, Type::INT2],
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
        let encrypted_mark =
            format!("(SELECT 1 / (1 - count(*)) FROM \"{schema}\".rabosh_schema WHERE id = {ENCRYPTED_MARK_ID}) = 1");
        let unless_encrypted = if plain { format!(" WHERE {encrypted_mark}") } else { String::new() };
        let guard = |column: &str| {
            format!(
                "SELECT 1 / (CASE WHEN (SELECT {column} FROM {t} WHERE k = $1 AND {}) IS NOT DISTINCT FROM $2::BYTEA \
                 THEN 1 ELSE 0 END)",
                settings_range()
            )
        };
        let feed = format!("\"{schema}\".feed");
        let feed_put = |from: usize| {
            format!(
                "INSERT INTO {feed} AS t (k, s, x, t) SELECT u.k, u.s, pg_current_xact_id()::TEXT::INT8, u.t \
                 FROM unnest(${}::BYTEA[], ${}::BYTEA[], ${}::INT2[]) AS u(k, s, t) \
                 ON CONFLICT (k) DO UPDATE SET s = excluded.s, x = excluded.x, t = excluded.t",
                from,
                from + 1,
                from + 2
            )
        };
        let dirs_add = |from: usize| {
            let types = ["BYTEA", "BYTEA", "BOOL", "INT2", "INT8", "INT8", "INT8", "INT8"];
            let arrays: Vec<String> =
                types.iter().enumerate().map(|(i, ty)| format!("${}::{ty}[]", from + i)).collect();
            format!(
                "INSERT INTO {dirs} AS t (d, r, f, s, n, b, vn, vb) SELECT * FROM unnest({}) \
                 ON CONFLICT (d, r, f, s) DO UPDATE \
                 SET n = t.n + excluded.n, b = t.b + excluded.b, vn = t.vn + excluded.vn, vb = t.vb + excluded.vb",
                arrays.join(", ")
            )
        };
        let fused = |guard_column: Option<&str>| {
            let from = if guard_column.is_some() { 3 } else { 1 };
            let mut conditions: Vec<String> = Vec::new();
            if plain {
                conditions.push(encrypted_mark.clone());
            }
            if let Some(column) = guard_column {
                conditions.push(format!(
                    "(SELECT ln(CASE WHEN (SELECT {column} FROM {t} WHERE k = $1 AND {}) IS NOT DISTINCT FROM \
                     $2::BYTEA THEN 1 ELSE 0 END::FLOAT8)) = 0",
                    settings_range()
                ));
            }
            let filter =
                if conditions.is_empty() { String::new() } else { format!(" WHERE {}", conditions.join(" AND ")) };
            format!(
                "WITH new AS (INSERT INTO {t} (k, v, m) SELECT * FROM unnest(${}::BYTEA[], ${}::BYTEA[], ${}::BYTEA[]){filter}), \
                 changed AS ({}) {}",
                from,
                from + 1,
                from + 2,
                feed_put(from + 11),
                dirs_add(from + 3)
            )
        };
        Sql {
            texts: [
                format!("SELECT v FROM {t} WHERE k = $1"),
                format!("SELECT m FROM {t} WHERE k = $1"),
                format!("SELECT v FROM {t} WHERE k = $1 AND {}", settings_range()),
                format!("SELECT m FROM {t} WHERE k = $1 AND {}", settings_range()),
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
                dirs_add(1),
                format!(
                    "DELETE FROM {dirs} WHERE n = 0 AND (d, r, f, s) IN \
                     (SELECT * FROM unnest($1::BYTEA[], $2::BYTEA[], $3::BOOL[], $4::INT2[]))"
                ),
                format!("SELECT m, v FROM {t} WHERE k = $1"),
                guard("v"),
                guard("m"),
                fused(None),
                fused(Some("v")),
                fused(Some("m")),
                feed_put(1),
                format!(
                    "WITH gone AS (DELETE FROM {feed} WHERE k = ANY($1::BYTEA[])) \
                     INSERT INTO \"{schema}\".feed_horizon (id, x) VALUES (1, pg_current_xact_id()::TEXT::INT8 + 1) \
                     ON CONFLICT (id) DO UPDATE SET x = excluded.x"
                ),
                format!(
                    "SELECT pg_snapshot_xmin(pg_current_snapshot())::TEXT::INT8, \
                     COALESCE((SELECT x FROM \"{schema}\".feed_horizon WHERE id = 1), 0)"
                ),
                format!(
                    "SELECT k, x, t FROM {feed} WHERE s = $1 AND (x > $2 OR (x = $2 AND k > $3)) AND x < $4 \
                     ORDER BY x, k LIMIT $5"
                ),
                format!("SELECT k, m FROM {t} WHERE k >= $1 AND k < $2 AND {} ORDER BY k LIMIT $4", may_contain(3)),
                format!("SELECT k, m FROM {t} WHERE k >= $1 AND {} ORDER BY k LIMIT $3", may_contain(2)),
            ],
            tables: format!("{t}, {dirs}, {feed}"),
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

/// The keys under [`SETTINGS_PREFIX`] as a predicate of literals: the partial index's
/// `WHERE` (schema version 3) and, repeated verbatim in the settings' reads, what lets the
/// planner prove that index answers them.
pub fn settings_range() -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let hex = |b: &[u8]| {
        b.iter().flat_map(|x| [x >> 4, x & 15]).map(|d| char::from(DIGITS[usize::from(d)])).collect::<String>()
    };
    let end = prefix_end(SETTINGS_PREFIX).expect("the settings prefix has a successor");
    format!("k >= '\\x{}'::BYTEA AND k < '\\x{}'::BYTEA", hex(SETTINGS_PREFIX), hex(&end))
}

/// Whether key `k` may contain the text `$n` once lower-cased as Rust lower-cases (the caller
/// tests each key it gets again): `$n` is the needle in lower case, ASCII without NUL, written as
/// [`escaped_needle`] writes it. The key is matched in `encode(k, 'escape')`, where every byte
/// is itself but NUL, a backslash and the non-ASCII ones, which become escapes that start with a
/// backslash; ASCII letters are lowered by `translate`, which no locale changes (`lower` would:
/// under a Turkish one, `I` lowers to a dotless `ı`). A key with a backslash there passes
/// whatever it holds: a non-ASCII character may lower-case into ASCII (the Kelvin sign into `k`).
fn may_contain(n: usize) -> String {
    format!(
        "(strpos(translate(encode(k, 'escape'), 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz'), ${n}) > 0 \
         OR strpos(encode(k, 'escape'), chr(92)) > 0)"
    )
}

/// `needle` as [`may_contain`] matches it (backslashes doubled, as `encode(k, 'escape')` writes
/// them); None when no such filter holds: a needle with NUL or beyond ASCII (then every key of
/// the range is read, as without a needle).
pub fn escaped_needle(needle: &str) -> Option<String> {
    (needle.is_ascii() && !needle.contains('\0')).then(|| needle.replace('\\', "\\\\"))
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
    fn settings_range_is_the_c_space() {
        assert_eq!(settings_range(), r"k >= '\x633a'::BYTEA AND k < '\x633b'::BYTEA");
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
