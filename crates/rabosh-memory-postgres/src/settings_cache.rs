//! The rows under [`SETTINGS_PREFIX`](rabosh_memory::backend_kit::SETTINGS_PREFIX) a handle has
//! read, to answer a transaction body's reads of them without a round trip (issue 24: a create reads the store's history
//! setting, and that read was a round trip of its own).
//!
//! A cached row is a guess, never an answer on its own: each one a body is answered from is
//! recorded on the connection ([`Assumed`]) and checked on the server in the transaction's commit
//! flight, before its writes (`Q::GuardValue`/`Q::GuardMeta`: a division by zero unless the row
//! is as cached, the same bytes or absent). So the transaction reads the row after all, in the
//! same SERIALIZABLE transaction as its writes, and decided on what it read; when another handle
//! changed it, the guard fails the flight (nothing commits), the cache is dropped and the body
//! runs again on what the server holds. Rows are kept as the server stores them (sealed, in an
//! encrypted store), so the guard compares bytes, and a rewrite with the same content is a change.

use std::collections::HashMap;
use std::sync::Mutex;

use super::seal::Column;
use super::sql::Q;

/// A settings row a body was answered from the cache: checked at commit.
pub struct Assumed {
    pub column: Column,
    pub key: Vec<u8>,
    /// The column as stored; None: no row.
    pub raw: Option<Vec<u8>>,
}

impl Assumed {
    /// The statement that fails the transaction unless the row is still `raw`.
    pub fn guard(&self) -> Q {
        match self.column {
            Column::Value => Q::GuardValue,
            Column::Meta => Q::GuardMeta,
        }
    }
}

/// (the metadata column?, key) → the column as stored, None: no row.
type Rows = HashMap<(bool, Vec<u8>), Option<Vec<u8>>>;

#[derive(Default)]
pub struct SettingsCache {
    rows: Mutex<Rows>,
}

impl SettingsCache {
    fn rows(&self) -> std::sync::MutexGuard<'_, Rows> {
        self.rows.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The column at `key` as last read, if it was: `Some(None)` is a row known absent.
    #[allow(clippy::option_option)] // the two levels are "not read" and "read: no row"
    pub fn get(&self, column: Column, key: &[u8]) -> Option<Option<Vec<u8>>> {
        self.rows().get(&(column == Column::Meta, key.to_vec())).cloned()
    }

    pub fn put(&self, column: Column, key: &[u8], raw: Option<Vec<u8>>) {
        self.rows().insert((column == Column::Meta, key.to_vec()), raw);
    }

    /// After a guard failed, or around a commit that writes a setting.
    pub fn clear(&self) {
        self.rows().clear();
    }
}
