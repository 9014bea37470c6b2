//! This crate's faults: what a backend or a caller can get wrong, as kinds a binding maps to
//! stable codes. No backend's own error type crosses the crate's public API.

use std::fmt;

use crate::embedded::LockHolder;

#[derive(Debug)]
pub enum Error {
    /// An IO call of the backend failed; the message names the call and the file.
    Io(String),
    /// Stored data would lose or misreport an acknowledged commit.
    Corruption(String),
    /// Stored data was written by a newer format version than this build reads.
    UnsupportedFormat(String),
    /// Another open handle holds the store.
    Locked { message: String, holder: LockHolder },
    /// Shared mode: another process (or program) held the store's commit lock past the lock
    /// timeout — stopped or stuck. Nothing was done; the call may be retried.
    Busy { message: String, holder: LockHolder },
    /// A commit failed (or panicked) in a way that leaves the state unknown: every call is
    /// refused until the store is reopened.
    Poisoned(String),
    /// The store was closed.
    Closed,
    /// Opened without creating, and the place holds no store; nothing was written.
    NotAStore(String),
    /// The caller asked the backend for something it cannot do (e.g. a non-empty checkpoint
    /// target).
    InvalidArgument(String),
    /// A handler option is out of range; names the option and the value.
    InvalidOption { option: &'static str, value: String },
    /// A store option no backend knows (a misspelling, say); names it, never its value (which may
    /// be a secret in a URL).
    UnknownOption(String),
    /// The store's backend cannot do this call (its capabilities say so).
    Unsupported(Unsupported),
    /// The store's backend cannot honour this option as given (its capabilities say so).
    OptionUnsupported { option: &'static str, refusal: Unsupported },
    /// A path that is not in normalised form reached this crate (a caller bug, not model input).
    NotNormalised(String),
    /// The store is encrypted and the key given does not open it; nothing was read or written.
    WrongKey(String),
    /// The store is encrypted and no key was given; nothing was read or written.
    KeyRequired(String),
    /// A key was given for a plain store (or a key operation asked of one); nothing was written.
    NotEncrypted(String),
    /// A backend of a crate of its own failed in a way of its own (PostgreSQL's connection
    /// faults, say): a stable code of that backend's, and a message with no secret in it.
    Backend(Box<dyn BackendError>),
}

/// A backend's own fault, carried by [`Error::Backend`]. The binding answers its [`code`]
/// (`RABOSH_<BACKEND>_*`) and its message; the backend's crate finds its own type again with
/// `downcast_ref` on `&dyn std::error::Error`.
///
/// [`code`]: BackendError::code
pub trait BackendError: std::error::Error + Send + Sync + 'static {
    /// The fault's stable machine-readable code.
    fn code(&self) -> &'static str;
}

impl Error {
    /// The backend's own fault of type `E`, when this is one.
    #[must_use]
    pub fn backend_error<E: BackendError>(&self) -> Option<&E> {
        match self {
            Error::Backend(e) => (e.as_ref() as &dyn std::error::Error).downcast_ref::<E>(),
            _ => None,
        }
    }
}

/// What a store's backend cannot do, in the one wording every such refusal has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unsupported {
    /// The call or option value refused (`checkpoint`, `durability 'buffered'`).
    pub what: String,
    /// The backend's name as a sentence says it (`PostgreSQL`).
    pub backend: &'static str,
    /// Why that backend has no such thing.
    pub why: &'static str,
}

impl fmt::Display for Unsupported {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} is not supported by {} stores ({})", self.what, self.backend, self.why)
    }
}

pub type Result<T> = std::result::Result<T, Error>;

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io(m)
            | Error::Corruption(m)
            | Error::UnsupportedFormat(m)
            | Error::InvalidArgument(m)
            | Error::NotAStore(m)
            | Error::WrongKey(m)
            | Error::KeyRequired(m)
            | Error::NotEncrypted(m) => f.write_str(m),
            Error::Locked { message, .. } | Error::Busy { message, .. } => f.write_str(message),
            Error::Poisoned(reason) => {
                write!(f, "store refuses writes after an earlier failure ({reason}); close and reopen it")
            }
            Error::Closed => f.write_str("store is closed"),
            Error::InvalidOption { option, value } => write!(f, "invalid option {option}: {value}"),
            Error::UnknownOption(option) => write!(f, "invalid option {option}: unknown option"),
            Error::Unsupported(refusal) => refusal.fmt(f),
            Error::OptionUnsupported { option, refusal } => write!(f, "invalid option {option}: {refusal}"),
            Error::NotNormalised(p) => write!(f, "path is not normalised: {p:?}"),
            Error::Backend(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for Error {}
