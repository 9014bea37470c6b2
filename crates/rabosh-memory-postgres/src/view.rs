//! Read views: queries on a connection that holds an open transaction. A snapshot view owns a
//! pooled connection in a REPEATABLE READ READ ONLY transaction (begun with its first query when
//! deferred) and ends it on drop, without waiting for the answer; a
//! transaction's view borrows the connection of the SERIALIZABLE transaction the body runs in.

use std::ops::DerefMut;
use std::sync::{Arc, Mutex, MutexGuard};

use postgres::Row;
use postgres::types::ToSql;

use super::Shared;
use super::columns;
use super::error::{PgError, PgErrorKind, Phase};
use super::pool::Conn;
use super::seal::Column;
use super::settings_cache::Assumed;
use super::sql::{Q, SCAN_PAGE, escaped_needle, prefix_end};
use super::summary;
use rabosh_memory::backend_kit::keys::subtree_prefix;
use rabosh_memory::backend_kit::{DirRow, DirSummary, ReadView, SETTINGS_PREFIX, Visit, resume_from, summary_of_rows};
use rabosh_memory::backend_kit::{ROOT, Result, Usage};

/// Begins a new snapshot on a new connection.
pub type Reopen<C> = Box<dyn Fn() -> std::result::Result<C, PgError> + Send + Sync>;

struct Held<C> {
    conn: C,
    /// A query of this view has answered: its snapshot has been seen and cannot be replaced.
    answered: bool,
    /// The key whose value the next `meta` of it fetches too (`ReadView::prefetch_value`).
    wanted: Option<Vec<u8>>,
    /// That value as the server sent it, for the `get` of the same key.
    fetched: Option<(Vec<u8>, Vec<u8>)>,
}

pub struct ConnView<C: DerefMut<Target = Conn> + Send> {
    held: Mutex<Held<C>>,
    shared: Arc<Shared>,
    /// Set for a snapshot view, which owns its transaction and ends it on drop (a body's view
    /// leaves that to `transact`): when its connection is lost before any query answered, the
    /// view begins again on a new connection. Nothing was seen of the lost snapshot, so the new
    /// one, taken later, is as good as one taken when `read` returned.
    reopen: Option<Reopen<C>>,
}

impl<C: DerefMut<Target = Conn> + Send> ConnView<C> {
    pub fn new(conn: C, shared: Arc<Shared>, reopen: Option<Reopen<C>>) -> Self {
        ConnView { held: Mutex::new(Held { conn, answered: false, wanted: None, fetched: None }), shared, reopen }
    }

    fn lock(&self) -> MutexGuard<'_, Held<C>> {
        // A panic in another caller of this view cannot leave the connection half-used: every
        // query below completes or fails before the guard drops.
        self.held.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn query(&self, q: Q, params: &[&(dyn ToSql + Sync)]) -> std::result::Result<Vec<Row>, PgError> {
        let mut held = self.lock();
        let rows = match Self::query_on(&mut held.conn, &self.shared, q, params) {
            Err(e) if e.kind() == PgErrorKind::ConnectionLost && !held.answered && self.reopen.is_some() => {
                let reopen = self.reopen.as_ref().expect("checked");
                held.conn = reopen()?;
                Self::query_on(&mut held.conn, &self.shared, q, params)?
            }
            other => other?,
        };
        held.answered = true;
        self.shared.rows_read.fetch_add(rows.len() as u64, std::sync::atomic::Ordering::Relaxed);
        Ok(rows)
    }

    fn query_on(
        conn: &mut Conn,
        shared: &Shared,
        q: Q,
        params: &[&(dyn ToSql + Sync)],
    ) -> std::result::Result<Vec<Row>, PgError> {
        let redactor = &shared.redactor;
        let Some(begin) = conn.pending_begin.take() else {
            let statement = conn.statement(&shared.sql, q, redactor)?;
            return conn.client.query(&statement, params).map_err(|e| conn.fail(&e, Phase::Statement, redactor));
        };
        // The transaction's first statement goes with its BEGIN, in one round trip. A connection
        // that went stale unseen fails there (or at preparing the statement), before anything of
        // the transaction reached the body: the body goes on, on a connection swapped in from
        // the pool, without knowing (as `pool::begin` replaces a stale one), up to one more time
        // than the pool holds.
        let mut tries = shared.pool.max_size() + 1;
        loop {
            let mut first = || {
                let statement = conn.statement(&shared.sql, q, redactor)?;
                let (begun, rows) = conn
                    .client
                    .query_after(begin, &statement, params)
                    .map_err(|e| conn.fail(&e, Phase::Statement, redactor))?;
                begun.map_err(|e| conn.fail(&e, Phase::Statement, redactor))?;
                rows.map_err(|e| conn.fail(&e, Phase::Statement, redactor))
            };
            let err = match first() {
                Ok(rows) => return Ok(rows),
                Err(err) => err,
            };
            tries -= 1;
            if !conn.broken || err.kind() != PgErrorKind::ConnectionLost || tries == 0 {
                return Err(err);
            }
            let mut fresh = super::pool::deferred(&shared.pool, &shared.last_error, begin)?;
            // `fresh` takes the broken session back to the pool (which discards it), and this
            // transaction goes on with the new one, still marked as running a body.
            std::mem::swap(&mut *fresh, conn);
            conn.in_body = fresh.in_body;
            conn.assumed = std::mem::take(&mut fresh.assumed);
            fresh.pending_begin = None;
        }
    }

    /// The summary rows of directory `dir` of `scope`.
    fn dir_rows(&self, scope: &str, dir: &str) -> Result<Vec<DirRow>> {
        let d = subtree_prefix(scope, dir);
        let rows = self.query(Q::DirRows, &[&d])?;
        rows.iter()
            .map(|row| {
                let unnamed = || format!("directory {}", String::from_utf8_lossy(&d));
                let r: &[u8] = columns::get(row, 0, "dirs", &unnamed)?;
                let name = || format!("directory {} entry {}", String::from_utf8_lossy(&d), String::from_utf8_lossy(r));
                let size = |i: usize| columns::get::<i64>(row, i, "dirs", &name).map(|n| u64::try_from(n).unwrap_or(0));
                Ok(DirRow {
                    r: String::from_utf8_lossy(r).into_owned(),
                    f: columns::get(row, 1, "dirs", &name)?,
                    n: size(2)?,
                    b: size(3)?,
                    vn: size(4)?,
                    vb: size(5)?,
                })
            })
            .collect()
    }

    /// A settings row's column: in a transaction's view from the handle's cache when it holds the
    /// row (recorded, to be checked at commit: `settings_cache.rs`), else read and cached.
    fn setting(&self, column: Column, key: &[u8]) -> Result<Option<Vec<u8>>> {
        let cached = if self.reopen.is_none() { self.shared.settings.get(column, key) } else { None };
        let raw = if let Some(raw) = cached {
            self.lock().conn.assumed.push(Assumed { column, key: key.to_vec(), raw: raw.clone() });
            raw
        } else {
            let q = match column {
                Column::Value => Q::SettingGet,
                Column::Meta => Q::SettingMeta,
            };
            let rows = self.query(q, &[&key])?;
            let raw = match rows.first() {
                Some(row) => Some(columns::get::<&[u8]>(row, 0, "kv", &|| columns::key_name(key))?.to_vec()),
                None => None,
            };
            self.shared.settings.put(column, key, raw.clone());
            raw
        };
        raw.map(|bytes| Ok(self.shared.open_column(column, key, &bytes)?.into_owned())).transpose()
    }

    fn one_column(&self, q: Q, column: Column, key: &[u8]) -> Result<Option<Vec<u8>>> {
        let rows = self.query(q, &[&key])?;
        let Some(row) = rows.first() else { return Ok(None) };
        let bytes: &[u8] = columns::get(row, 0, "kv", &|| columns::key_name(key))?;
        Ok(Some(self.shared.open_column(column, key, bytes)?.into_owned()))
    }
}

impl<C: DerefMut<Target = Conn> + Send> ReadView for ConnView<C> {
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        let fetched = self.lock().fetched.take_if(|(k, _)| k == key);
        let value = match fetched {
            Some((_, bytes)) => Some(self.shared.open_column(Column::Value, key, &bytes)?.into_owned()),
            None if key.starts_with(SETTINGS_PREFIX) => self.setting(Column::Value, key)?,
            None => self.one_column(Q::Get, Column::Value, key)?,
        };
        if value.is_some() {
            self.shared.values_read.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        Ok(value)
    }

    fn meta(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        if key.starts_with(SETTINGS_PREFIX) {
            return self.setting(Column::Meta, key);
        }
        if self.lock().wanted.take_if(|w| w == key).is_none() {
            return self.one_column(Q::Meta, Column::Meta, key);
        }
        // Both columns in one query; the value waits for the `get` that follows.
        let rows = self.query(Q::MetaValue, &[&key])?;
        let Some(row) = rows.first() else { return Ok(None) };
        let meta: &[u8] = columns::get(row, 0, "kv", &|| columns::key_name(key))?;
        let value: &[u8] = columns::get(row, 1, "kv", &|| columns::key_name(key))?;
        let meta = self.shared.open_column(Column::Meta, key, meta)?.into_owned();
        self.lock().fetched = Some((key.to_vec(), value.to_vec()));
        Ok(Some(meta))
    }

    fn prefetch_value(&self, key: &[u8]) {
        if !key.starts_with(SETTINGS_PREFIX) {
            self.lock().wanted = Some(key.to_vec());
        }
    }

    /// From the summary table: the directory's depth-1 and depth-2 rows, never what is below.
    fn dir_summary(&self, scope: &str, dir: &str) -> Result<DirSummary> {
        Ok(summary_of_rows(&self.dir_rows(scope, dir)?))
    }

    fn usage(&self, scope: &str) -> Result<Usage> {
        Ok(summary::usage(&self.dir_rows(scope, ROOT)?))
    }

    fn scan_prefix(&self, prefix: &[u8], visit: &mut Visit<'_>) -> Result<()> {
        self.scan_prefix_after(prefix, None, visit)
    }

    fn scan_prefix_after(&self, prefix: &[u8], after: Option<&[u8]>, visit: &mut Visit<'_>) -> Result<()> {
        self.scan_from(prefix, after, None, visit)
    }

    /// In the query: only the keys that may contain the needle cross the network.
    fn scan_prefix_after_containing(
        &self,
        prefix: &[u8],
        after: Option<&[u8]>,
        needle: &str,
        visit: &mut Visit<'_>,
    ) -> Result<()> {
        self.scan_from(prefix, after, escaped_needle(needle).as_deref(), visit)
    }
}

impl<C: DerefMut<Target = Conn> + Send> ConnView<C> {
    /// The keys under `prefix` after `after` a page at a time; with `needle` (as `escaped_needle`
    /// writes it), only those that may contain it.
    fn scan_from(
        &self,
        prefix: &[u8],
        after: Option<&[u8]>,
        needle: Option<&str>,
        visit: &mut Visit<'_>,
    ) -> Result<()> {
        let end = prefix_end(prefix);
        let mut from = resume_from(prefix, after);
        loop {
            // Pages are fetched with the connection locked and visited after it is released, so
            // a visitor may itself call `get`/`meta` on this view.
            let rows = match (&end, needle) {
                (Some(end), None) => self.query(Q::ScanBounded, &[&from, end, &SCAN_PAGE])?,
                (None, None) => self.query(Q::ScanOpen, &[&from, &SCAN_PAGE])?,
                (Some(end), Some(n)) => self.query(Q::ScanBoundedContaining, &[&from, end, &n, &SCAN_PAGE])?,
                (None, Some(n)) => self.query(Q::ScanOpenContaining, &[&from, &n, &SCAN_PAGE])?,
            };
            let mut last: &[u8] = &[];
            for row in &rows {
                let key: &[u8] = columns::get(row, 0, "kv", &|| format!("a key after {}", columns::key_name(&from)))?;
                let meta: &[u8] = columns::get(row, 1, "kv", &|| columns::key_name(key))?;
                let meta = self.shared.open_column(Column::Meta, key, meta)?;
                if visit(key, &meta).is_break() {
                    return Ok(());
                }
                last = key;
            }
            match i64::try_from(rows.len()).unwrap_or(i64::MAX) {
                SCAN_PAGE => {
                    // The byte-order successor of the last key: the next page starts after it.
                    from = last.to_vec();
                    from.push(0);
                }
                _ => return Ok(()),
            }
        }
    }
}

impl<C: DerefMut<Target = Conn> + Send> Drop for ConnView<C> {
    fn drop(&mut self) {
        if self.reopen.is_some() {
            let conn: &mut Conn = &mut self.held.get_mut().unwrap_or_else(|p| p.into_inner()).conn;
            // A deferred snapshot never queried never began. Otherwise the read-only transaction
            // ends without waiting for the server's answer (nothing hangs on it): the connection
            // goes back to the pool with the COMMIT sent, and its next call reads past the answer.
            // One that broke meanwhile is found then, as any connection gone stale.
            if conn.pending_begin.take().is_none() {
                conn.client.send_without_waiting("COMMIT");
            }
        }
    }
}
