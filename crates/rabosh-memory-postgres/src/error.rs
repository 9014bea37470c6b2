//! Typed PostgreSQL failures. Every message is either fixed text of ours or the server's message
//! passed through the redactor, so no host name, address or password can reach a caller (or,
//! through the binding, the model). The client library's own error is never kept as a source:
//! its chain may quote the connection target.

use std::error::Error as StdError;
use std::fmt;
use std::io;

use postgres::error::SqlState;
use rabosh_memory::backend_kit::{BackendError, Error};

/// What went wrong, as a caller can act on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PgErrorKind {
    /// The URL or an option could not be used.
    InvalidUrl,
    /// The server could not be reached (refused, unresolvable, unroutable).
    Unreachable,
    /// Connecting or waiting for a pooled connection or a statement took too long.
    Timeout,
    /// The server refused the user name or password.
    AuthenticationFailed,
    /// The database named in the URL does not exist.
    DatabaseMissing,
    /// TLS could not be negotiated or the server's certificate was refused.
    Tls,
    /// The connection broke (server restart, network) before the commit was sent: nothing was
    /// committed. The next call reconnects.
    ConnectionLost,
    /// The connection broke while COMMIT was in flight: the transaction may or may not have
    /// committed. A later read shows which.
    CommitOutcomeUnknown,
    /// Serialization failures went on past the retry bound.
    Conflict,
    /// The database holds a schema version newer than this build understands.
    SchemaTooNew,
    /// The server refused an operation for lack of privilege.
    PermissionDenied,
    /// Any other error the server reported.
    Server,
}

impl PgErrorKind {
    /// Every kind, for the list of codes the binding checks the facade's against.
    pub const ALL: [PgErrorKind; 12] = [
        PgErrorKind::InvalidUrl,
        PgErrorKind::Unreachable,
        PgErrorKind::Timeout,
        PgErrorKind::AuthenticationFailed,
        PgErrorKind::DatabaseMissing,
        PgErrorKind::Tls,
        PgErrorKind::ConnectionLost,
        PgErrorKind::CommitOutcomeUnknown,
        PgErrorKind::Conflict,
        PgErrorKind::SchemaTooNew,
        PgErrorKind::PermissionDenied,
        PgErrorKind::Server,
    ];

    /// The kind's stable code (`RABOSH_PG_*`), written here only.
    #[must_use]
    pub fn code(self) -> &'static str {
        match self {
            PgErrorKind::InvalidUrl => "RABOSH_PG_INVALID_URL",
            PgErrorKind::Unreachable => "RABOSH_PG_UNREACHABLE",
            PgErrorKind::Timeout => "RABOSH_PG_TIMEOUT",
            PgErrorKind::AuthenticationFailed => "RABOSH_PG_AUTHENTICATION_FAILED",
            PgErrorKind::DatabaseMissing => "RABOSH_PG_DATABASE_MISSING",
            PgErrorKind::Tls => "RABOSH_PG_TLS",
            PgErrorKind::ConnectionLost => "RABOSH_PG_CONNECTION_LOST",
            PgErrorKind::CommitOutcomeUnknown => "RABOSH_PG_COMMIT_OUTCOME_UNKNOWN",
            PgErrorKind::Conflict => "RABOSH_PG_CONFLICT",
            PgErrorKind::SchemaTooNew => "RABOSH_PG_SCHEMA_TOO_NEW",
            PgErrorKind::PermissionDenied => "RABOSH_PG_PERMISSION_DENIED",
            PgErrorKind::Server => "RABOSH_PG_SERVER",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PgError {
    kind: PgErrorKind,
    /// SQLSTATE, when the server sent one.
    sqlstate: Option<String>,
    message: String,
    /// The tables are not as this build made them (a column's type changed under a prepared
    /// statement, or a parameter no longer fits its column): answered as Corruption.
    tampered: bool,
}

impl PgError {
    pub(crate) fn new(kind: PgErrorKind, message: impl Into<String>) -> PgError {
        PgError { kind, sqlstate: None, message: message.into(), tampered: false }
    }

    pub(crate) fn tampered(message: String) -> PgError {
        PgError { kind: PgErrorKind::Server, sqlstate: None, message, tampered: true }
    }

    /// The tables were changed outside rabosh; the connection's prepared statements are stale.
    pub(crate) fn is_tampered(&self) -> bool {
        self.tampered
    }

    #[must_use]
    pub fn kind(&self) -> PgErrorKind {
        self.kind
    }

    #[must_use]
    pub fn sqlstate(&self) -> Option<&str> {
        self.sqlstate.as_deref()
    }

    #[must_use]
    pub fn message(&self) -> &str {
        &self.message
    }

    /// A stable machine-readable code, in the family of the engine's codes.
    #[must_use]
    pub fn code(&self) -> &'static str {
        self.kind.code()
    }

    /// A serialization failure or deadlock: the transaction was rolled back and may be rerun.
    pub(crate) fn is_retryable(&self) -> bool {
        matches!(self.sqlstate.as_deref(), Some("40001" | "40P01"))
    }

    /// The connection is unusable afterwards.
    pub(crate) fn breaks_connection(&self) -> bool {
        matches!(self.kind, PgErrorKind::ConnectionLost | PgErrorKind::CommitOutcomeUnknown | PgErrorKind::Unreachable)
    }
}

impl fmt::Display for PgError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("PostgreSQL: ")?;
        f.write_str(&self.message)?;
        if let Some(code) = &self.sqlstate {
            write!(f, " (SQLSTATE {code})")?;
        }
        Ok(())
    }
}

impl StdError for PgError {}

impl BackendError for PgError {
    fn code(&self) -> &'static str {
        self.kind.code()
    }
}

impl From<PgError> for Error {
    fn from(e: PgError) -> Self {
        if e.tampered { Error::Corruption(e.message) } else { Error::Backend(Box::new(e)) }
    }
}

impl PgError {
    /// The PostgreSQL fault `e` carries, when it is one.
    #[must_use]
    pub fn of(e: &Error) -> Option<&PgError> {
        e.backend_error::<PgError>()
    }
}

/// Removes the connection's secrets from text that came from outside this module.
#[derive(Debug, Clone, Default)]
pub(crate) struct Redactor {
    secrets: Vec<String>,
}

impl Redactor {
    pub(crate) fn new(secrets: impl IntoIterator<Item = String>) -> Redactor {
        let mut secrets: Vec<String> = secrets.into_iter().filter(|s| !s.is_empty()).collect();
        // Longest first, so a host that contains another secret is removed whole.
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        secrets.dedup();
        Redactor { secrets }
    }

    pub(crate) fn clean(&self, text: &str) -> String {
        let mut out = text.to_string();
        for s in &self.secrets {
            if out.contains(s.as_str()) {
                out = out.replace(s.as_str(), "[redacted]");
            }
        }
        out
    }
}

/// Where the failure happened, which decides what a broken connection means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    Connect,
    Statement,
    Commit,
}

/// Turns a client-library error into a typed, redacted one.
pub(crate) fn classify(e: &postgres::Error, phase: Phase, redactor: &Redactor) -> PgError {
    if let Some(db) = e.as_db_error() {
        let code = db.code();
        let sqlstate = Some(code.code().to_string());
        let (kind, message) = match code {
            c if *c == SqlState::INVALID_PASSWORD || *c == SqlState::INVALID_AUTHORIZATION_SPECIFICATION => {
                (PgErrorKind::AuthenticationFailed, "authentication failed: wrong user name or password".into())
            }
            c if *c == SqlState::INVALID_CATALOG_NAME => {
                (PgErrorKind::DatabaseMissing, "the database named in the URL does not exist".into())
            }
            c if *c == SqlState::ADMIN_SHUTDOWN
                || *c == SqlState::CRASH_SHUTDOWN
                || *c == SqlState::CANNOT_CONNECT_NOW
                || c.code().starts_with("08") =>
            {
                let kind = if phase == Phase::Commit {
                    PgErrorKind::CommitOutcomeUnknown
                } else if phase == Phase::Connect {
                    PgErrorKind::Unreachable
                } else {
                    PgErrorKind::ConnectionLost
                };
                (kind, format!("the server ended the connection: {}", redactor.clean(db.message())))
            }
            // Our statements are fixed and valid on the tables the migrations made; these mean a
            // column changed type or went missing ("cached plan must not change result type",
            // "operator does not exist: text = bytea", a datatype mismatch, an undefined column).
            c if *c == SqlState::FEATURE_NOT_SUPPORTED
                || *c == SqlState::UNDEFINED_FUNCTION
                || *c == SqlState::DATATYPE_MISMATCH
                || *c == SqlState::UNDEFINED_COLUMN =>
            {
                let why = redactor.clean(db.message());
                return PgError {
                    sqlstate,
                    ..PgError::tampered(format!("a table of the PostgreSQL store was changed outside rabosh: {why}"))
                };
            }
            c if *c == SqlState::QUERY_CANCELED => (PgErrorKind::Timeout, "statement timed out".into()),
            c if *c == SqlState::INSUFFICIENT_PRIVILEGE => {
                (PgErrorKind::PermissionDenied, format!("permission denied: {}", redactor.clean(db.message())))
            }
            c if *c == SqlState::T_R_SERIALIZATION_FAILURE || *c == SqlState::T_R_DEADLOCK_DETECTED => {
                (PgErrorKind::Conflict, "the transaction conflicted with a concurrent one".into())
            }
            _ => (PgErrorKind::Server, redactor.clean(db.message())),
        };
        return PgError { kind, sqlstate, message, tampered: false };
    }
    if let Some(why) = conversion(e) {
        return PgError::tampered(format!("a table of the PostgreSQL store was changed outside rabosh: {why}"));
    }
    if let Some(cause) = tls_failure(e) {
        return PgError::new(PgErrorKind::Tls, format!("TLS negotiation with the server failed: {cause}"));
    }
    if is_unresolved(e) {
        return PgError::new(
            PgErrorKind::Unreachable,
            "could not connect to the server: the host name could not be resolved",
        );
    }
    match io_kind(e) {
        Some(io::ErrorKind::TimedOut) => {
            return PgError::new(PgErrorKind::Timeout, "timed out connecting to or waiting for the server");
        }
        Some(io::ErrorKind::ConnectionRefused) if phase == Phase::Connect => {
            return PgError::new(PgErrorKind::Unreachable, "could not connect to the server: connection refused");
        }
        _ => {}
    }
    match phase {
        Phase::Connect => {
            if let Some(why) = session_attrs_refusal(e) {
                return PgError::new(PgErrorKind::Unreachable, format!("could not connect to the server: {why}"));
            }
            let why = match io_kind(e) {
                Some(k) => io_kind_text(k),
                None if e.to_string() == "invalid connection string" => {
                    return PgError::new(PgErrorKind::InvalidUrl, "the PostgreSQL URL could not be parsed");
                }
                None => "the server did not complete the handshake".into(),
            };
            PgError::new(PgErrorKind::Unreachable, format!("could not connect to the server: {why}"))
        }
        Phase::Statement => PgError::new(PgErrorKind::ConnectionLost, "the connection to the server was lost"),
        Phase::Commit => PgError::new(
            PgErrorKind::CommitOutcomeUnknown,
            "the connection to the server was lost during COMMIT; the transaction may or may not have committed",
        ),
    }
}

/// A parameter or column the client could not convert (its type is not the one we made).
fn conversion(e: &postgres::Error) -> Option<String> {
    let mut cur: Option<&(dyn StdError + 'static)> = e.source();
    while let Some(s) = cur {
        if s.downcast_ref::<postgres::types::WrongType>().is_some()
            || s.downcast_ref::<postgres::types::WasNull>().is_some()
        {
            return Some(s.to_string());
        }
        cur = s.source();
    }
    None
}

/// No answer within the client-side deadline (`client_timeout`, or `connect_timeout` when
/// connecting): the server is stopped, overloaded or unreachable without a reset.
pub(crate) fn timed_out(phase: Phase) -> PgError {
    match phase {
        Phase::Connect => {
            PgError::new(PgErrorKind::Timeout, "the server did not complete the connection within connect_timeout")
        }
        Phase::Statement => {
            PgError::new(PgErrorKind::Timeout, "the server did not answer within client_timeout; nothing was committed")
        }
        Phase::Commit => PgError::new(
            PgErrorKind::CommitOutcomeUnknown,
            "the server did not answer COMMIT within client_timeout; the transaction may or may not have committed",
        ),
    }
}

/// Why TLS failed, in words of ours (the library's texts may quote the certificate's names);
/// `None` when `e` is no TLS failure.
fn tls_failure(e: &postgres::Error) -> Option<&'static str> {
    use rustls::CertificateError as C;
    // What an earlier link of the chain said, which names the failure better than a later one.
    let mut said = None;
    let mut cur: Option<&(dyn StdError + 'static)> = e.source();
    while let Some(s) = cur {
        let tls = s
            .downcast_ref::<rustls::Error>()
            .or_else(|| s.downcast_ref::<io::Error>().and_then(|io| io.get_ref()?.downcast_ref::<rustls::Error>()));
        if let Some(tls) = tls {
            return Some(said.unwrap_or(match tls {
                rustls::Error::InvalidCertificate(c) => match c {
                    C::UnknownIssuer => "the server's certificate is not signed by a trusted root (see sslrootcert)",
                    C::NotValidForName | C::NotValidForNameContext { .. } => {
                        "the server's certificate does not name the host in the URL"
                    }
                    C::Expired | C::ExpiredContext { .. } => "the server's certificate has expired",
                    _ => "the server's certificate was refused",
                },
                _ => "the handshake failed",
            }));
        }
        // tokio-postgres's own fixed text when the server answers the TLS request with "no".
        if said.is_none() && s.to_string() == "server does not support TLS" {
            said = Some("the server does not offer TLS, which the URL's sslmode requires");
        }
        cur = s.source();
    }
    // tokio-postgres has no public kind accessor; its TLS kind has this fixed text (followed by
    // the cause, when there is one).
    let tls_kind = e.to_string().starts_with("error performing TLS handshake");
    tls_kind.then(|| said.unwrap_or("the handshake failed"))
}

/// The host name did not resolve. On Unix the standard library reports getaddrinfo failures
/// with this fixed prefix (the rest is the resolver's text, which does not quote the name); on
/// Windows they are Winsock codes: `WSAHOST_NOT_FOUND`, `WSATRY_AGAIN`, `WSANO_RECOVERY`, `WSANO_DATA`
/// (11001-11004; found by the suite under Wine, where the error read as "uncategorized").
fn is_unresolved(e: &postgres::Error) -> bool {
    let mut cur: Option<&(dyn StdError + 'static)> = e.source();
    while let Some(s) = cur {
        if let Some(io) = s.downcast_ref::<io::Error>() {
            return io.to_string().starts_with("failed to lookup address information")
                || (cfg!(windows) && matches!(io.raw_os_error(), Some(11001..=11004)));
        }
        cur = s.source();
    }
    false
}

/// The client's own refusal of a server for the URL's `target_session_attrs` (its fixed texts),
/// in words that say what to look at: during a failover, every node may be a standby for a while.
fn session_attrs_refusal(e: &postgres::Error) -> Option<&'static str> {
    let mut cur: Option<&(dyn StdError + 'static)> = e.source();
    while let Some(s) = cur {
        if let Some(io) = s.downcast_ref::<io::Error>() {
            return match io.to_string().as_str() {
                "database does not allow writes" => Some(
                    "it does not take writes (a standby, or a failover under way), and the URL asks for target_session_attrs=read-write",
                ),
                "database is not read only" => {
                    Some("it takes writes, and the URL asks for target_session_attrs=read-only")
                }
                _ => None,
            };
        }
        cur = s.source();
    }
    None
}

fn io_kind(e: &postgres::Error) -> Option<io::ErrorKind> {
    let mut cur: Option<&(dyn StdError + 'static)> = e.source();
    while let Some(s) = cur {
        if let Some(io) = s.downcast_ref::<io::Error>() {
            return Some(io.kind());
        }
        cur = s.source();
    }
    None
}

/// The io error's kind in words; never its message, which may name the address.
fn io_kind_text(k: io::ErrorKind) -> String {
    match k {
        io::ErrorKind::ConnectionRefused => "connection refused".into(),
        io::ErrorKind::ConnectionReset => "connection reset".into(),
        io::ErrorKind::NotFound => "host name not found".into(),
        io::ErrorKind::PermissionDenied => "permission denied".into(),
        io::ErrorKind::AddrNotAvailable => "address not available".into(),
        io::ErrorKind::UnexpectedEof => "the server closed the connection".into(),
        io::ErrorKind::HostUnreachable => "host unreachable".into(),
        io::ErrorKind::NetworkUnreachable => "network unreachable".into(),
        other => format!("network error ({})", format!("{other:?}").to_lowercase()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_redactor_removes_every_secret_longest_first() {
        let r = Redactor::new(["db.internal".to_string(), "db".to_string(), "hunter2".to_string(), String::new()]);
        assert_eq!(
            r.clean("no route to db.internal for user with hunter2 (db)"),
            "no route to [redacted] for user with [redacted] ([redacted])"
        );
        assert_eq!(r.clean("nothing secret"), "nothing secret");
    }

    #[test]
    fn codes_are_stable_and_messages_carry_the_sqlstate() {
        let e = PgError {
            kind: PgErrorKind::Conflict,
            sqlstate: Some("40001".into()),
            message: "m".into(),
            tampered: false,
        };
        assert_eq!(e.code(), "RABOSH_PG_CONFLICT");
        assert_eq!(e.to_string(), "PostgreSQL: m (SQLSTATE 40001)");
        assert!(e.is_retryable());
        assert!(!PgError::new(PgErrorKind::ConnectionLost, "x").is_retryable());
        assert!(PgError::new(PgErrorKind::ConnectionLost, "x").breaks_connection());
    }
}
