//! Client-side encryption of a PostgreSQL store: every row's value (`kv.v`) and metadata
//! (`kv.m`) is sealed here before it is sent and opened here after it is read, so the server,
//! its backups and its replicas hold only ciphertext of them. Keys (`kv.k`: scope and path) and
//! the directory summary (`dirs`: directory names and byte counts) stay plain: listings and
//! usage are answered by the server from them (docs/guide/postgres.md).
//!
//! One data key per store, random, wrapped by the host's key in the one row of
//! `rabosh_key (id 1, wrapped)`: rotating the host key rewrites that row alone. Every seal draws
//! a fresh random 192-bit XChaCha20 nonce (no counter to keep across processes or restarts);
//! the associated data binds the sealed bytes to their row's key and column, so a value moved
//! to another row, or swapped with a metadata column, fails to open (Corruption) instead of
//! answering another memory's content.
//!
//! Sealed form: `[1][nonce: 24][ciphertext ‖ tag: 16]`.

use std::borrow::Cow;
use std::time::Duration;

use rabosh_memory::backend_kit::crypt::{Crypt, OVERHEAD, random};
use zeroize::Zeroizing;

use super::error::{PgError, Phase, Redactor};
use super::pool::Conn;
use super::retry::Backoff;
use rabosh_memory::backend_kit::{EncryptionKey, Error, KEY_BYTES, Result};

const FORMAT: u8 = 1;
/// Associated data of the wrapped data key: a host key opens this row and nothing else.
const WRAP_AAD: &[u8] = b"rabosh-memory/pg data key/1";

/// Which column a sealed value belongs to (part of its associated data).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Column {
    Value,
    Meta,
}

/// The store's data key, ready to seal and open rows. The cipher, its nonces and tags are the
/// engine's (`rabosh::crypt`): one AEAD for both backends.
pub struct Sealer {
    crypt: Crypt,
    /// Kept to rewrap under a new host key.
    data_key: Zeroizing<[u8; KEY_BYTES]>,
}

/// A row's associated data: its column's tag, then its key.
fn row_aad(column: Column, key: &[u8]) -> [&[u8]; 2] {
    let tag: &[u8] = match column {
        Column::Value => b"rkv/v",
        Column::Meta => b"rkv/m",
    };
    [tag, key]
}

/// `[FORMAT] nonce | ciphertext | tag`. The OS random source failing is no state to go on in: a
/// nonce drawn some other way could repeat.
fn seal_with(crypt: &Crypt, aad: &[&[u8]], plain: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(1 + OVERHEAD + plain.len());
    out.push(FORMAT);
    crypt.seal_into(aad, plain, &mut out).expect("the OS random source failed");
    out
}

fn open_with(crypt: &Crypt, aad: &[&[u8]], sealed: &[u8]) -> Option<Vec<u8>> {
    match sealed.split_first() {
        Some((&FORMAT, blob)) => crypt.open(aad, blob),
        _ => None,
    }
}

impl Sealer {
    fn new(data_key: Zeroizing<[u8; KEY_BYTES]>) -> Sealer {
        Sealer { crypt: Crypt::new(&data_key), data_key }
    }

    pub fn seal(&self, column: Column, key: &[u8], plain: &[u8]) -> Vec<u8> {
        seal_with(&self.crypt, &row_aad(column, key), plain)
    }

    /// The plain bytes; Corruption (naming the row, never its bytes) when they do not open.
    pub fn open(&self, column: Column, key: &[u8], sealed: &[u8]) -> Result<Vec<u8>> {
        open_with(&self.crypt, &row_aad(column, key), sealed).ok_or_else(|| {
            Error::Corruption(format!(
                "the PostgreSQL row of key {} does not authenticate under the store's key: changed, moved or \
                 written by another store",
                String::from_utf8_lossy(key)
            ))
        })
    }

    /// The data key sealed under `host`, for the `rabosh_key` row.
    fn wrapped(&self, host: &EncryptionKey) -> Vec<u8> {
        seal_with(&Crypt::new(host.bytes()), &[WRAP_AAD], self.data_key.as_ref())
    }
}

/// `bytes` as the caller reads them: opened when the store is sealed, else as they are.
pub fn open_opt<'a>(sealer: Option<&Sealer>, column: Column, key: &[u8], bytes: &'a [u8]) -> Result<Cow<'a, [u8]>> {
    match sealer {
        Some(s) => s.open(column, key, bytes).map(Cow::Owned),
        None => Ok(Cow::Borrowed(bytes)),
    }
}

fn unwrap(host: &EncryptionKey, wrapped: &[u8], schema: &str) -> Result<Sealer> {
    let plain = open_with(&Crypt::new(host.bytes()), &[WRAP_AAD], wrapped).map(Zeroizing::new).ok_or_else(|| {
        Error::WrongKey(format!("the encryption key does not open the PostgreSQL store in schema {schema}"))
    })?;
    let data_key: [u8; KEY_BYTES] = plain.as_slice().try_into().map_err(|_| {
        Error::Corruption(format!("the data key of the PostgreSQL store in schema {schema} has the wrong length"))
    })?;
    Ok(Sealer::new(Zeroizing::new(data_key)))
}

/// The `rabosh_key` row's bytes, when the table and the row exist.
fn read_wrapped(conn: &mut Conn, schema: &str, redactor: &Redactor) -> Result<Option<Vec<u8>>> {
    let exists = conn
        .client
        .query_one(
            "SELECT EXISTS (SELECT 1 FROM information_schema.tables WHERE table_schema = $1 AND table_name = 'rabosh_key')",
            &[&schema],
        )
        .map_err(|e| conn.fail(&e, Phase::Statement, redactor))?;
    if !super::columns::get::<bool>(&exists, 0, "information_schema.tables", &|| "rabosh_key".into())? {
        return Ok(None);
    }
    let row = conn
        .client
        .query_opt(&format!("SELECT wrapped FROM \"{schema}\".rabosh_key WHERE id = 1"), &[])
        .map_err(|e| conn.fail(&e, Phase::Statement, redactor))?;
    row.map(|r| super::columns::get::<Vec<u8>>(&r, 0, "rabosh_key", &|| "id 1".into())).transpose()
}

/// Settles the store's encryption at open (after the schema is current): the sealer when it is
/// encrypted, None when plain; `KeyRequired`, `WrongKey` or `NotEncrypted` when the key given
/// does not fit the store. The first open with a key of a store that holds no row yet makes the
/// data key.
pub fn settle(
    conn: &mut Conn,
    schema: &str,
    key: Option<&EncryptionKey>,
    redactor: &Redactor,
) -> Result<Option<Sealer>> {
    let wrapped = read_wrapped(conn, schema, redactor)?;
    match (key, wrapped) {
        (None, None) => Ok(None),
        (None, Some(_)) => Err(Error::KeyRequired(format!(
            "the PostgreSQL store in schema {schema} is encrypted: open it with the encryption option"
        ))),
        (Some(host), Some(w)) => unwrap(host, &w, schema).map(Some),
        (Some(host), None) => {
            let mut backoff = Backoff::new(Duration::from_millis(2), Duration::from_millis(200));
            for _ in 0..16 {
                match create_key(conn, schema, host, redactor) {
                    Ok(()) => break,
                    Err(e) => {
                        let _ = conn.client.batch_execute("ROLLBACK");
                        // Two first opens racing on CREATE TABLE: the loser reruns and finds the row.
                        let raced = PgError::of(&e)
                            .is_some_and(|pe| pe.is_retryable() || matches!(pe.sqlstate(), Some("23505" | "42P07")));
                        if !raced || conn.broken {
                            return Err(e);
                        }
                        backoff.sleep();
                    }
                }
            }
            // Whoever won made the row: open it with this key (another key won: WrongKey).
            let w = read_wrapped(conn, schema, redactor)?
                .ok_or_else(|| Error::Corruption(format!("the key row of schema {schema} vanished while opening")))?;
            unwrap(host, &w, schema).map(Some)
        }
    }
}

/// Makes the table, the data key row and the encrypted mark, refusing a store that already
/// holds plain rows.
fn create_key(conn: &mut Conn, schema: &str, host: &EncryptionKey, redactor: &Redactor) -> Result<()> {
    let s = format!("\"{schema}\"");
    conn.client
        .batch_execute("BEGIN ISOLATION LEVEL SERIALIZABLE")
        .map_err(|e| conn.fail(&e, Phase::Statement, redactor))?;
    conn.client
        .batch_execute(&format!(
            "CREATE TABLE IF NOT EXISTS {s}.rabosh_key (id INT4 PRIMARY KEY, wrapped BYTEA NOT NULL)"
        ))
        .map_err(|e| conn.fail(&e, Phase::Statement, redactor))?;
    let any = conn
        .client
        .query_opt(&format!("SELECT 1 FROM {s}.kv LIMIT 1"), &[])
        .map_err(|e| conn.fail(&e, Phase::Statement, redactor))?;
    if any.is_some() {
        return Err(Error::NotEncrypted(format!(
            "the PostgreSQL store in schema {schema} holds plain rows: it cannot be opened with a key (export, \
             then import into a new encrypted schema)"
        )));
    }
    let wrapped = Sealer::new(random::<KEY_BYTES>().expect("the OS random source failed")).wrapped(host);
    conn.client
        .execute(
            &format!("INSERT INTO {s}.rabosh_key (id, wrapped) VALUES (1, $1) ON CONFLICT (id) DO NOTHING"),
            &[&wrapped],
        )
        .map_err(|e| conn.fail(&e, Phase::Statement, redactor))?;
    // The mark a plain handle's upsert tests (sql.rs): from this commit on, a handle opened
    // plain before it writes no row (KeyRequired); one writing concurrently conflicts with this
    // transaction's read of `kv` above, and one of the two is rolled back.
    conn.client
        .execute(
            &format!(
                "INSERT INTO {s}.rabosh_schema (id, version) VALUES ({}, 1) ON CONFLICT (id) DO NOTHING",
                super::sql::ENCRYPTED_MARK_ID
            ),
            &[],
        )
        .map_err(|e| conn.fail(&e, Phase::Statement, redactor))?;
    Ok(conn.client.batch_execute("COMMIT").map_err(|e| conn.fail(&e, Phase::Commit, redactor))?)
}

/// Rewraps the data key under `new` in one statement: the server applies it whole, so a crash
/// leaves the old key or the new one opening the store.
pub fn rotate(conn: &mut Conn, schema: &str, sealer: &Sealer, new: &EncryptionKey, redactor: &Redactor) -> Result<()> {
    let wrapped = sealer.wrapped(new);
    let n = conn
        .client
        .execute(&format!("UPDATE \"{schema}\".rabosh_key SET wrapped = $1 WHERE id = 1"), &[&wrapped])
        .map_err(|e| conn.fail(&e, Phase::Statement, redactor))?;
    if n != 1 {
        return Err(Error::Corruption(format!("the key row of the PostgreSQL store in schema {schema} is missing")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sealer() -> Sealer {
        Sealer::new(Zeroizing::new([7; KEY_BYTES]))
    }

    #[test]
    fn a_row_opens_only_under_its_own_key_and_column() {
        let s = sealer();
        let sealed = s.seal(Column::Value, b"m:default:/memories/a", b"secret text");
        assert_eq!(s.open(Column::Value, b"m:default:/memories/a", &sealed).unwrap(), b"secret text");
        assert!(!sealed.windows(6).any(|w| w == b"secret"));
        assert!(matches!(s.open(Column::Value, b"m:default:/memories/b", &sealed), Err(Error::Corruption(_))));
        assert!(matches!(s.open(Column::Meta, b"m:default:/memories/a", &sealed), Err(Error::Corruption(_))));
        let mut flipped = sealed.clone();
        *flipped.last_mut().unwrap() ^= 1;
        assert!(matches!(s.open(Column::Value, b"m:default:/memories/a", &flipped), Err(Error::Corruption(_))));
    }

    #[test]
    fn every_seal_draws_a_new_nonce() {
        let s = sealer();
        let nonces: std::collections::HashSet<Vec<u8>> = (0..1000)
            .map(|_| s.seal(Column::Meta, b"k", b"same")[1..=rabosh_memory::backend_kit::crypt::NONCE].to_vec())
            .collect();
        assert_eq!(nonces.len(), 1000);
    }

    #[test]
    fn the_wrapped_data_key_opens_with_the_host_key_alone() {
        let s = sealer();
        let host = EncryptionKey::new([1; KEY_BYTES]);
        let w = s.wrapped(&host);
        let back = unwrap(&host, &w, "rabosh").unwrap();
        assert_eq!(*back.data_key, *s.data_key);
        let e = unwrap(&EncryptionKey::new([2; KEY_BYTES]), &w, "rabosh").err().expect("wrong key refused");
        assert!(matches!(e, Error::WrongKey(_)), "{e}");
    }
}
