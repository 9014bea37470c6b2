//! The change feed on PostgreSQL (schema version 4): `feed (k, s, x, t)`, one row per memory key
//! holding its latest change (`t`, a `ChangeKind` code) at `x`, the id of the transaction that
//! made it (`pg_current_xact_id()`), replaced by the next change of that key in its own
//! transaction. `s` is the scope's key prefix, so a page is one range of `feed_order (s, x, k)`.
//! No row is written by every writer: a key's row only by writers of that memory, which
//! conflict on the memory's own row anyway.
//!
//! Commit order: a transaction id is taken before its commit, and transactions commit in any
//! order, so a reader that went on past the highest id it saw would step over a smaller id that
//! commits after it. A page is therefore read only below its snapshot's `xmin`
//! (`pg_snapshot_xmin(pg_current_snapshot())`): every transaction with a smaller id has ended,
//! so no entry can appear below that bound later. The cursor handed out is that bound; a writer
//! in flight holds readers back (never makes them skip), and a session left idle in a
//! transaction holds them back until it ends.
//!
//! `feed_horizon` (one row): positions below it may be missing (the memories of a store
//! migrated to this version; an entry a redaction erased). A cursor below it is answered reset.

use rabosh_memory::backend_kit::keys::parse;
use rabosh_memory::backend_kit::{
    Change, ChangeKind, ChangePage, Cursor, Error, MAX_CHANGES_PAGE, Result, WriteSet, changes_now, feed_changes,
};

use super::columns;
use super::error::{Phase, Redactor};
use super::pool::Conn;
use super::sql::{Q, Sql, WRITE_CHUNK_ROWS};
use super::summary::Params;

/// The statements that record `writes` in the feed: its entries, then the erasures.
pub fn plan(writes: &WriteSet) -> Vec<(Q, Params<'static>)> {
    let changes = feed_changes(writes);
    let mut out: Vec<(Q, Params<'static>)> = Vec::new();
    for chunk in changes.chunks(WRITE_CHUNK_ROWS) {
        let keys: Vec<Vec<u8>> = chunk.iter().map(|c| c.key.clone()).collect();
        let scopes: Vec<Vec<u8>> = chunk.iter().map(|c| scope_prefix(&c.key)).collect();
        let kinds: Vec<i16> = chunk.iter().map(|c| i16::from(c.kind.code())).collect();
        out.push((Q::FeedPut, vec![Box::new(keys), Box::new(scopes), Box::new(kinds)]));
    }
    let forgotten = writes.forgotten();
    if !forgotten.is_empty() {
        out.push((Q::FeedForget, vec![Box::new(forgotten.to_vec())]));
    }
    out
}

/// `m:{scope}:` of a memory key.
fn scope_prefix(key: &[u8]) -> Vec<u8> {
    match parse(key) {
        Some((scope, _)) => format!("m:{scope}:").into_bytes(),
        None => key.to_vec(),
    }
}

/// A page of `scope`'s feed after `since`, on `conn` (a REPEATABLE READ transaction begun, its
/// snapshot taken).
pub fn read(
    conn: &mut Conn,
    sql: &Sql,
    redactor: &Redactor,
    scope: &str,
    since: &Cursor,
    limit: usize,
) -> Result<ChangePage> {
    let limit = limit.min(MAX_CHANGES_PAGE);
    let statement = conn.statement(sql, Q::FeedBound, redactor)?;
    let row = conn.client.query_one(&statement, &[]).map_err(|e| conn.fail(&e, Phase::Statement, redactor))?;
    let name = || "the feed's bound".to_string();
    let bound: i64 = columns::get(&row, 0, "feed", &name)?;
    let horizon: i64 = columns::get(&row, 1, "feed_horizon", &name)?;
    let (bound, horizon) = (u64::try_from(bound).unwrap_or(0), u64::try_from(horizon).unwrap_or(0));
    if limit == 0 {
        return Ok(changes_now(bound));
    }
    // Below the horizon, or past any bound this server handed out (a snapshot's xmin never
    // goes back): a cursor this feed cannot answer for.
    if since.position < horizon || since.position > bound {
        return Ok(ChangePage {
            changes: Vec::new(),
            cursor: Cursor { position: bound.max(horizon), after: None },
            reset: true,
        });
    }
    if since.position == bound && since.after.is_none() {
        return Ok(ChangePage { changes: Vec::new(), cursor: since.clone(), reset: false });
    }
    let prefix = format!("m:{scope}:").into_bytes();
    let after: Vec<u8> = match &since.after {
        Some(path) => [prefix.as_slice(), path.as_bytes()].concat(),
        None => Vec::new(),
    };
    let statement = conn.statement(sql, Q::FeedPage, redactor)?;
    // Transaction ids (xid8) and a page size: far below i64::MAX, so saturating changes nothing.
    let as_bigint = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
    let (position, bound_param, limit_param) = (as_bigint(since.position), as_bigint(bound), as_bigint(limit as u64));
    let rows = conn
        .client
        .query(&statement, &[&prefix, &position, &after, &bound_param, &limit_param])
        .map_err(|e| conn.fail(&e, Phase::Statement, redactor))?;
    let mut changes = Vec::with_capacity(rows.len());
    let mut last = since.position;
    for row in &rows {
        let key: &[u8] = columns::get(row, 0, "feed", &|| "an entry".to_string())?;
        let row_name = || columns::key_name(key);
        let x: i64 = columns::get(row, 1, "feed", &row_name)?;
        let t: i16 = columns::get(row, 2, "feed", &row_name)?;
        let kind = u8::try_from(t).ok().and_then(ChangeKind::from_code);
        let (Some(kind), Some((_, path))) = (kind, parse(key)) else {
            return Err(Error::Corruption(format!("the change feed's entry {} is not ours", columns::key_name(key))));
        };
        changes.push(Change { path: path.to_string(), kind });
        last = u64::try_from(x).unwrap_or(0);
    }
    let cursor = if changes.len() == limit {
        Cursor { position: last, after: changes.last().map(|c| c.path.clone()) }
    } else {
        Cursor { position: bound.max(since.position), after: None }
    };
    Ok(ChangePage { changes, cursor, reset: false })
}
