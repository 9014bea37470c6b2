//! Refusing a connection pooler in transaction mode (`PgBouncer`'s `pool_mode = transaction`, or
//! one like it) at open. Such a pooler hands each transaction whichever server session is free,
//! so what this store keeps per session does not stay with its connection: the prepared
//! statements (measured through Debian's `PgBouncer` 1.18: creates failed with "prepared statement
//! does not exist") and the session's settings, among them the SERIALIZABLE default isolation a
//! create's one-statement commit relies on (`pool.rs`), which would leak into other clients'
//! sessions instead. Session mode keeps one server session per connection, and works.
//!
//! The probe: a setting made on one connection, read on another. Directly on a server, or
//! through a pool in session mode, the other connection is another session and does not see
//! it. A pool in transaction mode runs the read on a free server session, which is the one that
//! just ran the setting (`PgBouncer` reuses the most recently freed one first): it sees it. A
//! pooler that hands out sessions in another order can escape the probe.

use std::hash::{BuildHasher, Hasher};

use postgres::SimpleQueryMessage;

use super::client::Failure;
use super::error::{PgError, PgErrorKind, Phase, Redactor};
use super::pool::Conn;

const SETTING: &str = "rabosh.pooler_probe";

/// Sets the probe on `first`, then reads it on `second` (see the module's doc). A server that
/// refuses the setting or the read (not PostgreSQL) is not probed.
pub fn refuse_transaction_pooling(first: &mut Conn, second: &mut Conn, redactor: &Redactor) -> Result<(), PgError> {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(u64::from(std::process::id()));
    let token = format!("{:016x}", h.finish());
    match first.client.batch_execute(&format!("SET {SETTING} = '{token}'")) {
        Ok(()) => {}
        Err(Failure::Pg(e)) if e.as_db_error().is_some() => return Ok(()),
        Err(e) => return Err(first.fail(&e, Phase::Statement, redactor)),
    }
    let seen = match second.client.simple_query(&format!("SELECT current_setting('{SETTING}', true)")) {
        Ok(messages) => messages.iter().find_map(|m| match m {
            SimpleQueryMessage::Row(row) => row.get(0).map(str::to_string),
            _ => None,
        }),
        Err(Failure::Pg(e)) if e.as_db_error().is_some() => None,
        Err(e) => return Err(second.fail(&e, Phase::Statement, redactor)),
    };
    if seen.as_deref() == Some(token.as_str()) {
        // Neither session goes back to the pooler's other clients with the probe set.
        first.broken = true;
        second.broken = true;
        return Err(PgError::new(
            PgErrorKind::InvalidUrl,
            "the URL reaches the server through a connection pooler in transaction mode (PgBouncer's \
             pool_mode = transaction, or one like it): a session's prepared statements and settings do \
             not stay with its connection there, and this store relies on them; point the URL at the \
             server, or at a pool in session mode (pool_mode = session)",
        ));
    }
    Ok(())
}
