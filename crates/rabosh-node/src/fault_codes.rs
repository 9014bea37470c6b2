//! Every fault code the binding raises, written once: fault.rs maps errors to these constants,
//! the PostgreSQL codes come from `PgErrorKind::code`, and `faultCodes()` hands the whole list
//! to the facade's test (__test__/fault-codes.test.ts), which checks src/errors.ts against it.

use napi_derive::napi;
use rabosh_memory_postgres::PgErrorKind;

pub const IO: &str = "RABOSH_IO";
pub const CORRUPTION: &str = "RABOSH_CORRUPTION";
pub const UNSUPPORTED_FORMAT: &str = "RABOSH_UNSUPPORTED_FORMAT";
pub const STORE_LOCKED: &str = "RABOSH_STORE_LOCKED";
pub const STORE_BUSY: &str = "RABOSH_STORE_BUSY";
pub const POISONED: &str = "RABOSH_POISONED";
pub const CLOSED: &str = "RABOSH_CLOSED";
pub const NOT_A_STORE: &str = "RABOSH_NOT_A_STORE";
pub const WRONG_KEY: &str = "RABOSH_WRONG_KEY";
pub const KEY_REQUIRED: &str = "RABOSH_KEY_REQUIRED";
pub const NOT_ENCRYPTED: &str = "RABOSH_NOT_ENCRYPTED";
pub const INVALID_ARGUMENT: &str = "RABOSH_INVALID_ARGUMENT";
pub const INVALID_OPTION: &str = "RABOSH_INVALID_OPTION";
pub const UNSUPPORTED: &str = "RABOSH_UNSUPPORTED";
pub const PANIC: &str = "RABOSH_PANIC";

/// The codes of the engine's and the memory crate's faults (PostgreSQL's apart).
const ENGINE: [&str; 15] = [
    IO,
    CORRUPTION,
    UNSUPPORTED_FORMAT,
    STORE_LOCKED,
    STORE_BUSY,
    POISONED,
    CLOSED,
    NOT_A_STORE,
    WRONG_KEY,
    KEY_REQUIRED,
    NOT_ENCRYPTED,
    INVALID_ARGUMENT,
    INVALID_OPTION,
    UNSUPPORTED,
    PANIC,
];

/// Every code a fault of this binding can carry.
pub fn all() -> Vec<&'static str> {
    ENGINE.iter().copied().chain(PgErrorKind::ALL.iter().map(|k| k.code())).collect()
}

/// Every code a fault of this binding can carry (the facade's error classes must know each).
#[napi]
pub fn fault_codes() -> Vec<String> {
    all().into_iter().map(String::from).collect()
}
